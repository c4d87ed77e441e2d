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

:func:`~schedkit.generators.dualpipe.dualpipe_schedule` transcribes ``DualPipe.step`` (``dualpipe/dualpipe.py``: steps nF0,
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
>>> from schedkit.generators.dualpipe import dualpipe_schedule
>>> s = dualpipe_schedule(stages=4, microbatches=8)
>>> s["makespan"], bubble(s["makespan"], microbatches=8)
(26.0, 2.0)
"""

from __future__ import annotations

import math

from schedkit.errors import ProblemError

__all__ = ["pipeline", "bubble", "task_name", "device_of"]


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


def device_of(stage: int, microbatch: int, stages: int, microbatches: int, two_way: bool = True) -> str:
    """Device of ``stage`` of ``microbatch``: the first M/2 enter at ``gpu0``, the rest at the
    far end (``two_way=False``: every micro-batch enters at ``gpu0``).

    Examples
    --------
    >>> device_of(0, 0, 4, 8), device_of(0, 4, 4, 8), device_of(3, 4, 4, 8), device_of(0, 4, 4, 8, False)
    ('gpu0', 'gpu3', 'gpu0', 'gpu0')
    """
    return f"gpu{stage if not two_way or microbatch < microbatches // 2 else stages - 1 - stage}"


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
             name: str | None = None, two_way: bool = True) -> dict:
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
        Memory of every device; by default DualPipe's ``2 weights + (PP+1) activation``
        (one-way: ``weights + (PP+1) activation``).
    name : str, optional
        Problem name (default ``dualpipe-pp{PP}-m{M}``, one-way ``oneway-pp{PP}-m{M}``).
    two_way : bool
        DualPipe's two directions (the default); ``False``: every micro-batch enters at
        ``gpu0`` and stage s runs on ``gpu{s}`` only, one stage of weights a device: the
        one chain of stages that ``torch.distributed.pipelining`` runs (``schedkit
        export-torch``).

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
    held = 2 if two_way else 1  # (stages of weights a device holds)
    memory = _number("memory", held * weights + (stages + 1) * activation if memory is None else memory)
    if memory < held * weights + activation:  # no schedule at all: refuse rather than write it
        raise ProblemError(f"memory: {memory:g} cannot hold a device's {'two stages' if two_way else 'stage'} "
                           f"of weights and one activation ({held * weights + activation:g})")
    pp, half, tasks, edges = stages, microbatches // 2 if two_way else microbatches, [], []
    devices = [{"name": f"gpu{i}", "memory": memory} for i in range(pp)]
    links = [{"src": f"gpu{i}", "dst": f"gpu{i + 1}", "bandwidth": 1.0} for i in range(pp - 1)]

    def task(kind: str, s: int, m: int, duration: float, delta: float) -> None:
        row = {"name": task_name(kind, s, m), "durations": {device_of(s, m, pp, microbatches, two_way): duration}}
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
    default = f"dualpipe-pp{pp}-m{microbatches}" if two_way else f"oneway-pp{pp}-m{microbatches}"
    return {"format": "schedkit/v1", "name": name or default,
            "devices": devices, "links": links, "tasks": tasks, "edges": edges}
