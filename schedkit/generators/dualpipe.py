"""DualPipe's own schedule of :func:`~schedkit.generators.pipeline.pipeline`'s instance.

:func:`dualpipe_schedule` transcribes ``DualPipe.step`` (``dualpipe/dualpipe.py``: steps nF0,
nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW, zero-bubble deferral of W in FIFO order)
and times it as the code runs it (see :mod:`schedkit.generators.pipeline` for the instance
and the figures).

Examples
--------
>>> from schedkit.generators.pipeline import bubble
>>> s = dualpipe_schedule(stages=4, microbatches=8)
>>> s["makespan"], bubble(s["makespan"], microbatches=8)
(26.0, 2.0)
"""

from __future__ import annotations

from collections import deque

from schedkit.errors import ProblemError
from schedkit.generators.pipeline import _check, device_of, task_name

__all__ = ["dualpipe_schedule"]


def _dualpipe_program(pp: int, microbatches: int, rank: int) -> list[tuple]:
    """``DualPipe.step`` on ``rank`` as a list of operations, in its code's phases
    (phase 0: the direction this rank meets first)."""
    h_ranks, half, h = pp // 2, microbatches // 2, min(rank, pp - 1 - rank)  # h: DualPipe's half_rank
    middle, ops = h == h_ranks - 1, []

    def fwd(p, recv=True, send=True):  # rF/rB: post a receive, sF/sB: a send, of phase p
        ops.extend([("rF", p)] * recv + [("F", p)] + [("sF", p)] * send)

    def bwd(p, zb=False, recv=True, send=True):  # zb: defer W (zero bubble)
        ops.extend([("rB", p)] * recv + [("B", p, zb)] + [("sB", p)] * send)

    def fb(p0, p1, recv0=True):  # an overlapped F&B chunk: sends after both computations
        ops.extend([("rF", p0)] * recv0 + [("rB", p1), ("FB", p0, p1), ("sF", p0), ("sB", p1)])

    for _ in range((h_ranks - h - 1) * 2):                      # step 1: nF0
        fwd(0)
    ops.append(("rF", 0))
    for i in range(h + 1):                                      # step 2: nF0F1
        fwd(0, recv=False, send=middle)
        ops.append(("rF", 0))
        fwd(1, send=not middle or i < h)
        ops.extend([("sF", 0)] * (not middle))
    for _ in range(h_ranks - h - 1):                            # step 3: nB1W1F1
        bwd(1, zb=True)
        ops.extend([("rF", 1), ("W",)])
        fwd(1, recv=False)
    for i in range(half - pp + h + 1):                          # step 4: nF0B1F1B0
        if i == 0 and middle:
            fwd(0, recv=False, send=False)
            ops.append(("sF", 1))
            bwd(1, send=False)
            ops.extend([("sF", 0), ("sB", 1)])
        else:
            fb(0, 1, recv0=i > 0)
        fb(1, 0)
    for _ in range(h_ranks - h - 1):                            # step 5: nB1F1B0
        bwd(1)
        fb(1, 0)
    zb = False
    for i in range(h + 1):                                      # step 6: nB1B0
        zb = zb or (i == (h + 1) // 2 and h % 2 == 1)
        bwd(1, zb)
        zb = zb or (i == (h + 1) // 2 and h % 2 == 0)
        bwd(0, zb)
    for _ in range(h_ranks - h - 1):                            # step 7: nWB0
        ops.append(("W",))
        bwd(0, zb=True)
    ops.extend([("W",)] * (h + 1))                              # step 8: nW
    return ops


def _dualpipe_items(pp: int, microbatches: int, rank: int) -> list[tuple[str, list]]:
    """The program as commits ``("C", [(op, producer task)])`` and runs ``("X", [task])``."""
    half = microbatches // 2
    count, items, comm, weights = {}, [], [], deque()

    def next_of(what, d):  # the next micro-batch of direction d for this counter
        count[(what, d)] = count.get((what, d), 0) + 1
        return d * half + count[(what, d)] - 1

    def place(p):  # (direction, stage) of a phase: phases swap in the second half of the ranks
        d = p ^ (rank >= pp // 2)
        return d, rank if d == 0 else pp - 1 - rank

    def backward(p, zb):
        d, s = place(p)
        m = next_of("B", d)
        if zb:  # zero bubble: W waits in DualPipe's WeightGradStore for a later W chunk
            weights.append(("W", s, m))
            return [("I", s, m)]
        return [("I", s, m), ("W", s, m)]

    for op in _dualpipe_program(pp, microbatches, rank):
        kind, (d, s) = op[0], place(op[1] if len(op) > 1 else 0)
        if kind[0] in "rs":
            # Data of the forward of stage s - 1 (received) or s (sent), or of the input
            # backward of stage s + 1 (received) or s (sent); none past either end.
            stage = {"rF": s - 1, "sF": s, "rB": s + 1, "sB": s}[kind]
            last = pp - 1 if kind[1] == "F" else 0  # a stage that sends nothing this way
            if 0 <= stage < pp and not (kind[0] == "s" and stage == last):
                producer = ("F" if kind[1] == "F" else "I", stage, next_of(kind, d))
                comm.append(("send" if kind[0] == "s" else "recv", producer))
            continue
        items.append(("C", comm))
        comm = []
        if kind == "F":
            run = [("F", s, next_of("F", d))]
        elif kind == "B":
            run = backward(op[1], op[2])
        elif kind == "FB":
            run = [("F", s, next_of("F", d))] + backward(op[2], False)
        else:
            run = [weights.popleft()]  # deferred weight gradients run first in, first out
        items.append(("X", run))
    assert not weights, "every deferred weight gradient runs"
    return items + [("C", comm)]


def dualpipe_schedule(stages: int, microbatches: int, *, forward: float = 1.0,
                      input_backward: float = 1.0, weight_backward: float = 1.0,
                      transfer: float = 0.0, name: str | None = None) -> dict:
    """DualPipe's schedule of :func:`pipeline`'s instance, as ``schedkit-schedule/v1`` data.

    Timed as DualPipe's code runs it (see the module documentation); load it with
    ``Schedule.model_validate``. Its status is ``heuristic`` (no bound).

    Parameters
    ----------
    stages, microbatches, forward, input_backward, weight_backward, transfer, name
        As in :func:`pipeline`; DualPipe needs ``microbatches >= 2 * stages``.

    Returns
    -------
    dict
        The schedule, with a transfer row per hop when ``transfer > 0``.

    Examples
    --------
    >>> s = dualpipe_schedule(stages=2, microbatches=4)
    >>> s["makespan"], [r["task"] for r in s["tasks"] if r["device"] == "gpu0"][:4]
    (12.0, ['F_s0_m0', 'F_s1_m2', 'F_s0_m1', 'I_s1_m2'])
    >>> dualpipe_schedule(stages=4, microbatches=6)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: microbatches: DualPipe needs at least 2 * stages = 8, got 6
    """
    tf, ti, tw, transfer = _check(stages, microbatches, forward, input_backward, weight_backward, transfer)
    durations = {"F": tf, "I": ti, "W": tw}
    if microbatches < 2 * stages:
        raise ProblemError(f"microbatches: DualPipe needs at least 2 * stages = {2 * stages}, "
                           f"got {microbatches}")
    pp = stages
    programs = [_dualpipe_items(pp, microbatches, r) for r in range(pp)]
    position, now = [0] * pp, [0.0] * pp
    sent: dict[tuple, float] = {}  # producer task -> when its send was issued
    rows, moves, progress = [], [], True
    while progress:
        progress = False
        for r in range(pp):
            while position[r] < len(programs[r]):
                kind, body = programs[r][position[r]]
                if kind == "C":
                    for op, key in body:
                        if op == "send":
                            sent.setdefault(key, now[r])
                    waits = [key for op, key in body if op == "recv"]
                    if any(key not in sent for key in waits):
                        break  # the peer has not sent it yet: come back to this rank later
                    now[r] = max([now[r]] + [sent[key] + transfer for key in waits])
                else:
                    for k, s, m in body:
                        end = now[r] + durations[k]
                        rows.append({"task": task_name(k, s, m), "device": f"gpu{r}",
                                     "start": now[r], "end": end})
                        now[r] = end
                position[r] += 1
                progress = True
    if any(position[r] < len(programs[r]) for r in range(pp)):  # a transcription error, not input
        raise AssertionError("DualPipe's program deadlocked")
    if transfer > 0:
        for (k, s, m), at in sorted(sent.items(), key=lambda item: item[1]):
            dst = ("F", s + 1, m) if k == "F" else ("I", s - 1, m)
            moves.append({"src": task_name(k, s, m), "dst": task_name(*dst),
                          "from": device_of(s, m, pp, microbatches),
                          "to": device_of(dst[1], m, pp, microbatches), "start": at, "end": at + transfer})
    rows.sort(key=lambda row: (row["start"], row["device"]))
    makespan = max([row["end"] for row in rows] + [t["end"] for t in moves])
    return {"format": "schedkit-schedule/v1", "problem": name or f"dualpipe-pp{pp}-m{microbatches}",
            "method": "dualpipe", "status": "heuristic", "makespan": makespan,
            "tasks": rows, "transfers": moves}
