"""She et al.'s DualPipe experiment as a ``schedkit/v1`` problem, and DualPipe's own schedule of it.

She et al. (2025) rediscover DeepSeek's DualPipe (DeepSeek-V3; ``deepseek-ai/DualPipe``) with a
job-shop MIP and a memory level over time, then halve its bubble. Where the paper leaves a
modelling choice open, :func:`pipeline` makes it as follows.

Devices and directions
    ``stages`` (PP, even) devices ``gpu0 .. gpu{PP-1}``, linked in a chain (``gpu{i}`` to
    ``gpu{i+1}``, bandwidth 1, latency 0). The model has PP stages (0 = first layers, PP-1 =
    the last, with the loss). DualPipe is bidirectional: micro-batches ``0 .. M/2-1`` enter at
    ``gpu0`` and run stage s on ``gpu{s}``; micro-batches ``M/2 .. M-1`` enter at ``gpu{PP-1}``
    and run stage s on ``gpu{PP-1-s}``. Device i thus hosts stage i of one direction and stage
    PP-1-i of the other, as in DualPipe. ``microbatches`` (M) must be even.
Tasks
    Per stage s and micro-batch m: forward ``F_s{s}_m{m}``, backward for the input (She et
    al.'s I, DualPipe's B) ``I_s{s}_m{m}`` and backward for the weights ``W_s{s}_m{m}``, of
    durations ``forward``, ``input_backward``, ``weight_backward`` (Tf = Ti = Tw = 1 by
    default): ``3 * PP * M`` tasks. Each is pinned by a ``durations`` map naming its one device
    (every method honours ``durations``), so only the order and times are left to decide.
Edges
    ``F(s,m) -> F(s+1,m)``, ``F(PP-1,m) -> I(PP-1,m)`` (the loss), ``I(s+1,m) -> I(s,m)`` and
    ``I(s,m) -> W(s,m)``: ``M * (3 PP - 1)`` edges. ``F(s,m) -> I(s,m)`` is implied by the chain
    through the last stage and left out. Micro-batches of one stage have no order between them.
Transfers
    Between stages they cost nothing by default (She et al.'s Figs. 3 and 4 show none); with
    ``transfer = T > 0`` every edge between devices has size T, so each hop takes T.
Memory (``memory_timeline``, ``mode: deltas``)
    One stage's parameters are ``weights`` (1): given as ``weight_memory`` of the first
    forward of each direction at each stage (weights are resident from time 0 whichever task
    carries them), so each device holds ``2 * weights`` (DualPipe's 2x parameters). A forward
    takes ``activation`` (1) at its start; the backward gives it back at its end, a share
    ``1 - weight_share`` by I (what only the input gradient needs) and ``weight_share`` (0.5)
    by W (the layer inputs and output gradients the weight gradient still reads, as in zero-
    bubble pipelines). Every device's ``memory`` is DualPipe's bound ``2 * weights + (PP + 1)
    * activation`` unless ``memory`` is given (below ``2 * weights + activation`` no schedule
    exists: refused). DualPipe's schedule below reaches exactly ``PP + 1`` activations on
    every device, whatever ``weight_share`` (releases before additions at equal times).
Bubble
    Every device runs M forwards, M I and M W, so its busy time is ``M (Tf + Ti + Tw)`` and its
    idle time ``makespan - M (Tf + Ti + Tw)`` is the same on every device: that is the bubble
    (:func:`bubble`; per device, equal to the average and to the largest).

:func:`dualpipe_schedule` transcribes ``DualPipe.step`` (``dualpipe/dualpipe.py``: steps nF0,
nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW, zero-bubble deferral of W in FIFO order)
and times it as the code runs it: communication posted after a chunk is issued at the start
of the rank's next chunk, a chunk waits for every receive posted before it, an overlapped
F&B chunk runs F, I, W back to back and sends its outputs only after all three, a backward
without deferral runs I then W; sends never block (with T = 0 a blocking rendezvous gives the
same times). With Tf = Ti = Tw = 1 its makespan is ``3M + PP - 2``: bubble ``PP - 2 =
2 (PP/2 - 1)``, DualPipe's (PP/2-1)(F&B + B - 3W) with F&B = 3, B = 2 (PP = 2, 4, 8 with
M = 2 PP: makespans 12, 26, 54, bubbles 0, 2, 6). The same per-device orders timed as early as
the instance's edges allow (``schedkit.timing.fixed_order.retime``) give ``3M + PP/2 - 1``
(12, 25, 51; bubbles 0, 1, 3): She et al.'s improved bubble (PP/2 - 1), still with PP + 1
activations. With other durations DualPipe's timed bubble departs from its README formula
(e.g. PP = 4, Tf = 2: 5, not 3). With ``transfer > 0`` DualPipe sends a forward output and an
input gradient over one link at once: valid under ``latency``, not under ``fdjssp``'s channels.

Examples
--------
>>> from schedkit import Problem
>>> Problem.from_dict(pipeline(stages=4, microbatches=8))
Problem('dualpipe-pp4-m8': 96 tasks, 88 edges, 4 devices)
>>> s = dualpipe_schedule(stages=4, microbatches=8)
>>> s["makespan"], bubble(s["makespan"], microbatches=8)
(26.0, 2.0)
"""

from __future__ import annotations

import math
from collections import deque

from schedkit.errors import ProblemError

__all__ = ["pipeline", "dualpipe_schedule", "bubble", "task_name", "device_of"]


def _count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 2 or value % 2:
        raise ProblemError(f"{name}: needs an even integer >= 2, got {value!r}")


def _number(name: str, value: float, positive: bool = False, most: float = math.inf) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0) or value > most:
        need = "> 0" if positive else f"in [0, {most:g}]" if math.isfinite(most) else ">= 0"
        raise ProblemError(f"{name}: needs a finite number {need}, got {value!r}")
    return float(value)


def _check(stages: int, microbatches: int, forward: float, input_backward: float,
           weight_backward: float, transfer: float) -> tuple[float, float, float, float]:
    _count("stages", stages)
    _count("microbatches", microbatches)
    return tuple(_number(name, value, positive=name != "transfer") for name, value in (
        ("forward", forward), ("input_backward", input_backward), ("weight_backward", weight_backward),
        ("transfer", transfer)))


def task_name(kind: str, stage: int, microbatch: int) -> str:
    """Name of task ``kind`` (``"F"``, ``"I"`` or ``"W"``) of a stage and micro-batch.

    Examples
    --------
    >>> task_name("I", 2, 5)
    'I_s2_m5'
    """
    return f"{kind}_s{stage}_m{microbatch}"


def device_of(stage: int, microbatch: int, stages: int, microbatches: int) -> str:
    """Device of ``stage`` of ``microbatch``: the first M/2 enter at ``gpu0``, the rest at the far end.

    Examples
    --------
    >>> device_of(0, 0, 4, 8), device_of(0, 4, 4, 8), device_of(3, 4, 4, 8)
    ('gpu0', 'gpu3', 'gpu0')
    """
    return f"gpu{stage if microbatch < microbatches // 2 else stages - 1 - stage}"


def bubble(makespan: float, microbatches: int, forward: float = 1.0, input_backward: float = 1.0,
           weight_backward: float = 1.0) -> float:
    """Idle time of every device: ``makespan - M (Tf + Ti + Tw)`` (each device's busy time).

    Examples
    --------
    >>> bubble(25.0, microbatches=8)
    1.0
    """
    return makespan - microbatches * (forward + input_backward + weight_backward)


def pipeline(stages: int, microbatches: int, *, forward: float = 1.0, input_backward: float = 1.0,
             weight_backward: float = 1.0, weights: float = 1.0, activation: float = 1.0,
             weight_share: float = 0.5, transfer: float = 0.0, memory: float | None = None,
             name: str | None = None) -> dict:
    """She et al.'s DualPipe instance (see the module documentation), as ``schedkit/v1`` data.

    Parameters
    ----------
    stages : int
        PP, the number of stages and devices (even, >= 2).
    microbatches : int
        M, micro-batches in all (even, >= 2): M/2 enter at each end.
    forward, input_backward, weight_backward : float
        Tf, Ti and Tw (> 0).
    weights : float
        Memory of one stage's parameters (>= 0); each device holds two stages.
    activation : float
        Activation memory one forward takes (>= 0).
    weight_share : float
        Share of the activation that W releases (the rest is released by I), in [0, 1].
    transfer : float
        Time of every transfer between stages (>= 0; 0 makes no transfers).
    memory : float, optional
        Memory of every device; by default DualPipe's ``2 weights + (PP+1) activation``.
    name : str, optional
        Problem name (default ``dualpipe-pp{PP}-m{M}``).

    Returns
    -------
    dict
        A ``schedkit/v1`` problem.

    Raises
    ------
    ProblemError
        On a bad parameter, naming it.

    Examples
    --------
    >>> data = pipeline(stages=2, microbatches=2)
    >>> [(t["name"], t["durations"], t.get("weight_memory"), t["activation_memory"])
    ...  for t in data["tasks"][:3]]
    [('F_s0_m0', {'gpu0': 1.0}, 1.0, 1.0), ('F_s1_m0', {'gpu1': 1.0}, 1.0, 1.0),
     ('I_s1_m0', {'gpu1': 1.0}, None, -0.5)]
    >>> [(e["src"], e["dst"]) for e in data["edges"][:4]]
    [('F_s0_m0', 'F_s1_m0'), ('F_s1_m0', 'I_s1_m0'), ('I_s1_m0', 'W_s1_m0'), ('I_s1_m0', 'I_s0_m0')]
    >>> data["devices"]
    [{'name': 'gpu0', 'memory': 5.0}, {'name': 'gpu1', 'memory': 5.0}]
    >>> pipeline(stages=3, microbatches=4)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: stages: needs an even integer >= 2, got 3
    """
    tf, ti, tw, transfer = _check(stages, microbatches, forward, input_backward, weight_backward, transfer)
    weights, activation, share = (_number("weights", weights), _number("activation", activation),
                                  _number("weight_share", weight_share, most=1.0))
    memory = _number("memory", 2 * weights + (stages + 1) * activation if memory is None else memory)
    if memory < 2 * weights + activation:  # no schedule at all: refuse rather than write it
        raise ProblemError(f"memory: {memory:g} cannot hold a device's two stages of weights and one "
                           f"activation ({2 * weights + activation:g})")
    pp, half, tasks, edges = stages, microbatches // 2, [], []
    devices = [{"name": f"gpu{i}", "memory": memory} for i in range(pp)]
    links = [{"src": f"gpu{i}", "dst": f"gpu{i + 1}", "bandwidth": 1.0} for i in range(pp - 1)]

    def task(kind: str, s: int, m: int, duration: float, delta: float) -> None:
        row = {"name": task_name(kind, s, m), "durations": {device_of(s, m, pp, microbatches): duration}}
        if kind == "F" and m % half == 0:
            row["weight_memory"] = weights  # one copy of stage s per direction, resident
        tasks.append({**row, "activation_memory": delta})

    def edge(src: str, dst: str, between_devices: bool) -> None:
        row = {"src": src, "dst": dst}
        if between_devices and transfer > 0:
            row["size"] = transfer  # over a link of bandwidth 1: the hop takes `transfer`
        edges.append(row)

    for m in range(microbatches):
        for s in range(pp):
            task("F", s, m, tf, activation)
            if s:
                edge(task_name("F", s - 1, m), task_name("F", s, m), True)
        for s in reversed(range(pp)):
            # Written as 0 - x so that a zero share gives 0.0, not -0.0, in the file.
            task("I", s, m, ti, 0.0 - activation * (1 - share))
            if s == pp - 1:
                edge(task_name("F", s, m), task_name("I", s, m), False)  # the loss
            else:
                edge(task_name("I", s + 1, m), task_name("I", s, m), True)
            task("W", s, m, tw, 0.0 - activation * share)
            edge(task_name("I", s, m), task_name("W", s, m), False)
    return {"format": "schedkit/v1", "name": name or f"dualpipe-pp{pp}-m{microbatches}",
            "devices": devices, "links": links, "tasks": tasks, "edges": edges}


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
