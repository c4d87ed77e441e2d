"""What decompositions share: sub-problems cut out of a problem, and schedules stitched back.

A part is a :class:`~schedkit.problem.Problem` of its own. :func:`sub_problem` cuts one
out of a problem: some of its tasks, the edges among them (with their sizes resolved),
every device and link, plus tasks, edges or devices the decomposition adds (a twin, a
task that stands for the time a device is busy). Each task states its durations
explicitly (pins and memory already applied), so that added devices run only the tasks
meant for them.

:func:`stitch` turns a mapping and an order of the tasks on every device into a schedule
of the original problem: the times are recomputed exactly and left-shifted
(:func:`~schedkit.timing.fixed_order_times`), so a stitched schedule honours the
problem's precedence, transfers and devices whatever the parts' own times were.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> q = sub_problem(p, [0, 1], "tiny/head", pins={0: [1]})
>>> q.tasks, [q.devices[d] for d in q.allowed[0]], q.edges
(['embed', 'attn'], ['cpu'], [(0, 1, 4000000.0)])
>>> s = stitch(p, [0, 0, 0, 0, 0, 1], [[0, 1, 2, 3, 4], [5]], "example")
>>> round(s.validate(p).makespan, 5)
4.51625
"""

from __future__ import annotations

from typing import Iterable, Sequence

from schedkit.problem import Problem
from schedkit.problem.network import Payload
from schedkit.problem.series_cuts import TWIN
from schedkit.schedule import Schedule
from schedkit.timing import TimingRules, device_orders, fixed_order_times, to_schedule

__all__ = ["spec_data", "task_row", "edge_row", "heavier", "sub_problem", "module_part", "stitch", "orders_by_start",
           "remaining_capacities"]

#: Task fields a sub-problem keeps (durations are rewritten explicitly).
KEPT = ("memory", "colocate", "op", "weight_memory", "activation_memory")


def spec_data(problem: Problem, platform: bool = False) -> dict:
    """The problem's spec as plain ``schedkit/v1`` data; ``platform=True``: its format,
    devices and links only (what a sub-problem copies: the whole spec of a graph with
    millions of edges takes seconds to dump).

    Examples
    --------
    >>> from schedkit import Problem
    >>> sorted(spec_data(Problem.load("examples/tiny.yaml"), platform=True))
    ['devices', 'format', 'links']
    """
    keep = {"format", "devices", "links"} if platform else None
    return problem.spec.model_dump(mode="json", by_alias=True, exclude_none=True, include=keep)


def task_row(problem: Problem, i: int, devices: Iterable[int] | None = None, name: str | None = None) -> dict:
    """Task ``i`` as spec data with explicit durations on its allowed devices (within ``devices``)."""
    spec = problem.spec.tasks[i]
    keep = problem.allowed[i] if devices is None else [d for d in problem.allowed[i] if d in set(devices)]
    row = {"name": name or spec.name,
           "durations": {problem.devices[d]: problem.durations[i][d] for d in keep}}
    for key in KEPT:
        value = getattr(spec, key)
        if value is not None and value != 0.0:
            row[key] = value
    return row


def edge_row(problem: Problem, src: str, dst: str, size: float) -> dict:
    """An edge as spec data: its size and, where it gives them, its own transfer times.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> edge_row(p, "a", "b", Payload(2.0, {(0, 1): 5.0}))
    {'src': 'a', 'dst': 'b', 'size': 2.0, 'transfer_times': {'gpu0->cpu': 5.0}}
    """
    row = {"src": src, "dst": dst, "size": float(size)}
    times = getattr(size, "times", None)
    if times:
        row["transfer_times"] = {f"{problem.devices[u]}->{problem.devices[v]}": t for (u, v), t in times.items()}
    return row


def heavier(problem: Problem, first: float, second: float) -> float:
    """The data of one edge that stands for two: per device pair, the longer transfer time.

    Plain sizes give the larger size; where either edge gives its own transfer times, the
    result lists the larger of the two edges' times for every linked pair of devices.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> heavier(p, 3.0, 5.0)
    5.0
    >>> merged = heavier(p, Payload(1.0, {(0, 1): 9.0}), 4e6)
    >>> p.comm_time(merged, 0, 1), p.comm_time(merged, 1, 0) == p.comm_time(4e6, 1, 0)
    (9.0, True)
    """
    if first.__class__ is not Payload and second.__class__ is not Payload:
        return max(first, second)
    m = len(problem.devices)
    times = {(u, v): max(problem.comm_time(first, u, v), problem.comm_time(second, u, v))
             for u in range(m) for v in range(m) if u != v and problem.linked[u][v]}
    return Payload(max(first, second), times)


def sub_problem(problem: Problem, tasks: Iterable[int], name: str, *,
                pins: dict[int, Sequence[int]] | None = None, extra_tasks: Sequence[dict] = (),
                extra_edges: Sequence[dict] = (), extra_devices: Sequence[dict] = ()) -> Problem:
    """A problem with ``tasks`` of ``problem`` (in file order), the edges among them, every
    device and link, and what the caller adds.

    Parameters
    ----------
    problem : Problem
    tasks : iterable of int
        Task indices to keep.
    name : str
        The sub-problem's name.
    pins : dict, optional
        Task index -> devices it is restricted to (intersected with its allowed devices).
    extra_tasks, extra_edges, extra_devices : sequence of dict
        Spec rows added as they are (extra tasks must state their durations).
    """
    keep = sorted(set(tasks))
    inside = set(keep)
    pins = pins or {}
    data = spec_data(problem, platform=True)
    rows = [task_row(problem, i, pins.get(i)) for i in keep]
    edges = [edge_row(problem, problem.tasks[i], problem.tasks[j], size)
             for i, j, size in problem.edges if i in inside and j in inside]
    devices = list(data["devices"]) + list(extra_devices)
    return Problem.from_dict({"format": data["format"], "name": name, "devices": devices,
                              "links": data.get("links", []), "tasks": rows + list(extra_tasks),
                              "edges": edges + list(extra_edges)})


def module_part(problem: Problem, tasks: Iterable[int], name: str, entry: int | None, exit_: int | None,
                twin: bool, u: int | None = None, v: int | None = None) -> Problem:
    """The part of a module of a chain (:mod:`schedkit.problem.series_cuts`): its ``tasks`` with
    the ``entry`` pinned to device ``u`` and the ``exit`` to ``v`` (``None``: left free); after
    an articulation task (``twin``) the entry is not in the module: its twin of duration 0 on
    ``u`` (on any of the entry's devices when ``u`` is ``None``) feeds the entry's outputs.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.problem.series_cuts import chain_cuts, modules
    >>> p = Problem.load("examples/tiny.yaml")
    >>> groups, cuts = modules(p, chain_cuts(p))
    >>> middle = module_part(p, groups[1], "logits on gpu0", cuts[0].head, cuts[1].tail, cuts[0].twin, u=0, v=0)
    >>> middle.tasks, [[middle.devices[d] for d in a] for a in middle.allowed]
    (['logits'], [['gpu0']])
    """
    pins, extra_tasks, extra_edges = {}, [], []
    if twin:
        stand_in = problem.tasks[entry] + TWIN
        devices = problem.allowed[entry] if u is None else [u]
        extra_tasks = [{"name": stand_in, "durations": {problem.devices[d]: 0.0 for d in devices}}]
        extra_edges = [edge_row(problem, stand_in, problem.tasks[j], size) for j, size in problem.succs[entry]]
    elif entry is not None and u is not None:
        pins[entry] = [u]
    if exit_ is not None and v is not None:
        pins[exit_] = sorted(set(pins.get(exit_, [v])) & {v})
    return sub_problem(problem, tasks, name, pins=pins, extra_tasks=extra_tasks, extra_edges=extra_edges)


def orders_by_start(problem: Problem, schedule: Schedule, tasks: dict[str, int] | None = None) -> list[list[int]]:
    """The order of ``schedule``'s tasks on every device of ``problem``: by start, then end,
    never against the task graph (:func:`~schedkit.timing.device_orders`).

    ``tasks`` maps the schedule's task names to task indices of ``problem`` (default: by
    name; rows it does not name are skipped: twins, stand-ins). A task of zero duration is
    in no order (it holds its device for no time): sorted by times alone, two such tasks
    at one instant, a task and its successor, could be listed the wrong way round, and the
    stitched orders would contradict the task graph.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.schedule import Schedule, TaskRun
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = Schedule(problem="p", method="m", status="feasible", tasks=[
    ...     TaskRun(task="sample", device="cpu", start=3.3, end=3.5),
    ...     TaskRun(task="logits", device="cpu", start=3.1, end=3.3)])
    >>> [[p.tasks[i] for i in order] for order in orders_by_start(p, s)]
    [[], ['logits', 'sample']]
    """
    index = problem.task_index if tasks is None else tasks
    rows = {index[r.task]: r for r in schedule.tasks if r.task in index}
    device_of = {i: problem.device_index[r.device] for i, r in rows.items()}
    return device_orders(problem, device_of, {i: r.start for i, r in rows.items()}, among=rows)


def stitch(problem: Problem, device_of: Sequence[int], orders: Sequence[Sequence[int]],
           method: str, rules: TimingRules | None = None) -> Schedule:
    """The left-shifted schedule of ``problem`` with each task on ``device_of[i]`` and the
    tasks of every device in the order ``orders[d]``; under a formulation's ``rules`` whose
    transfers wait for channels or ports, each task's inputs booked into their earliest free
    slots as it is timed (without, transfers are delays, and a schedule judged by such a
    formulation may overlap two transfers on a port).

    Raises :class:`~schedkit.errors.ScheduleError` when the orders contradict the task graph.
    """
    transfers = None if rules is None else rules.transfers(problem)
    return to_schedule(problem, device_of, fixed_order_times(problem, device_of, orders, transfers), method,
                       transfers)


def remaining_capacities(problem: Problem, device_of: dict[int, int] | Sequence[int],
                         tasks: Iterable[int] | None = None) -> list[dict]:
    """The devices of ``problem`` as file rows, each with the static memory of the placed
    ``tasks`` (default: every task ``device_of`` places) taken off its capacity: the room a
    part has beside what the rest of the schedule already holds.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 5}, {"name": "b"}],
    ...                        "tasks": [{"name": "t", "durations": {"a": 1, "b": 1}, "memory": 2}]})
    >>> remaining_capacities(p, {0: 0})
    [{'name': 'a', 'memory': 3.0, 'speed': 1.0}, {'name': 'b', 'speed': 1.0}]
    """
    used = [0.0] * len(problem.devices)
    placed = device_of.keys() if isinstance(device_of, dict) else range(len(device_of))
    for i in placed if tasks is None else tasks:
        used[device_of[i]] += problem.task_memory[i]
    rows = []
    for d, spec in enumerate(problem.spec.devices):
        row = spec.model_dump(mode="json", exclude_none=True)
        if spec.memory is not None:
            row["memory"] = max(0.0, spec.memory - used[d])
        rows.append(row)
    return rows
