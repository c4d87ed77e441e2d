"""Windows of the incumbent re-solved exactly, the rest kept: ``auto``'s large-neighbourhood search.

A decomposition that solves its modules one after the other (``kedge``) chooses each
module's devices without knowing what the later modules need: among equally short module
schedules it keeps one, and which one decides the whole (on MSR's ResNet-50 operator
graph the same modules stitched to 392 or 471). The local search of
:func:`~schedkit.reductions.refine.refined` moves one task, or one unit, at a time, and a
schedule whose tasks form long stretches per device (a chain split) is a local optimum for
it. :func:`window_search` re-solves a *window* of the incumbent with the exact method and
everything else kept:

- the tasks, sorted by start (then topological position, so that the tasks before a
  window hold all their predecessors; a task without predecessors, a network's weights,
  counts as starting with its first successor) are cut into windows of
  :data:`WINDOW_TASKS` overlapping by half;
- a window's part (:func:`window_part`) has its tasks, free on their allowed devices, and
  stand-ins for the rest on each device, one after the other: tasks that keep the device
  busy until each moment a task before the window sends the window data (which leaves from
  the stand-in ending then), and then tasks that start where a task after the window reads
  from it and last until the next such read or the incumbent's makespan: the part's
  makespan is the whole schedule's as the incumbent would continue. Memory used outside
  the window is off the capacities; collocation groups keep the devices of their members
  outside. The exact method starts from the incumbent's window (:func:`_part_start`);
- the part's devices and orders replace the window's in the incumbent, the times are
  recomputed on the whole problem (:func:`~schedkit.reductions.subproblem.stitch`), and the
  result is kept when it is shorter.

Passes over the windows repeat while one improves and time is left.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.methods import METHODS
>>> p = Problem.load("examples/hetero20.yaml")
>>> start = METHODS.get("greedy")().solve(p)
>>> milp = lambda part, seconds, start: METHODS.get("milp")(time_limit=seconds, start=start).result(part)
>>> better = window_search(p, start, 5, milp, size=8)
>>> better is None or better.makespan < start.makespan
True
"""

from __future__ import annotations

import time
from typing import Callable

from schedkit.reductions.subproblem import (edge_row, heavier, orders_by_start, remaining_capacities, spec_data,
                                           stitch, task_row)
from schedkit.errors import SchedkitError
from schedkit.numerics import shorter
from schedkit.problem import Problem
from schedkit.schedule import Result, Schedule
from schedkit.timing import TimingRules, placement_indices

__all__ = ["window_search", "window_part", "WINDOW_TASKS"]

#: Tasks per window: about two of ``kedge``'s modules on the MSR operator graphs, which the
#: exact race solves in a second or two.
WINDOW_TASKS = 64
#: A window given fewer seconds than this is not solved.
LEAST_SECONDS = 1.0
#: Seconds kept, of the time left, for making a window's part and stitching its schedule.
MARGIN = 0.2


def window_search(problem: Problem, schedule: Schedule, seconds: float,
                  solve: Callable[[Problem, float, Schedule | None], Result],
                  size: int = WINDOW_TASKS, rules: TimingRules | None = None) -> Schedule | None:
    """``schedule`` improved by windows re-solved exactly (see the module), or ``None``.

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
        The incumbent, a valid schedule of ``problem``.
    seconds : float
        At most this long (a window starts only when :data:`LEAST_SECONDS` are left).
    solve : callable
        ``solve(part, seconds, start)``: the exact method's :class:`~schedkit.schedule.Result`
        on a part, started from ``start`` (the incumbent's window, a schedule of the part, or ``None``).
    size : int
        Tasks per window.
    rules : TimingRules, optional
        The formulation's timing rules: the stitched schedules' transfers wait for channels
        or ports as they say (without, a stitched schedule may break ``congestion``).

    Returns
    -------
    Schedule or None
        The shortest stitched schedule, when shorter than ``schedule``.
    """
    deadline = time.perf_counter() + seconds
    n = len(problem.tasks)
    size = max(2, min(size, n))
    step = max(1, size // 2)
    best, improved = schedule, True
    while improved:
        improved = False
        begins = list(range(0, max(1, n - size + step), step))
        for k, begin in enumerate(begins):
            left = deadline - time.perf_counter()
            if left < LEAST_SECONDS:
                return None if best is schedule else best
            order = _start_order(problem, best)
            window = order[begin:begin + size]
            before, after = set(order[:begin]), set(order[begin + size:])
            # (an equal share of the time left for each window left in this pass)
            seconds_for = min(left - MARGIN, max(LEAST_SECONDS, left / (len(begins) - k)))
            found = _window(problem, best, window, before, after, solve, seconds_for, rules)
            if found is not None and shorter(found.makespan, best.makespan):
                best, improved = found, True
    return None if best is schedule else best


def _start_order(problem: Problem, schedule: Schedule) -> list[int]:
    """The tasks by start, then topological position: every task after its predecessors. A
    task without predecessors counts as starting with its first successor: a network's
    weights start at 0 but belong with the layer that reads them (often in its collocation
    group: a window that held the weights alone would pin every layer to its device)."""
    position = {i: k for k, i in enumerate(problem.topological_order)}
    start = {problem.task_index[r.task]: r.start for r in schedule.tasks}
    key = {i: min((start[j] for j, _ in problem.succs[i]), default=start[i]) if not problem.preds[i] else start[i]
           for i in range(len(problem.tasks))}
    return sorted(range(len(problem.tasks)), key=lambda i: (key[i], position[i]))


def _window(problem, schedule, window, before, after, solve, seconds, rules=None) -> Schedule | None:
    """The incumbent with ``window`` re-solved (``None`` when the part finds nothing)."""
    try:
        part = window_part(problem, schedule, window, before, after)
        result = solve(part, seconds, _part_start(problem, schedule, part, window, rules))
    except SchedkitError:  # (the part cannot be made or solved: the window is left as it is)
        return None
    if result.schedule is None:
        return None
    device_of = placement_indices(problem, schedule)
    own = {problem.tasks[i]: i for i in window}
    for row in result.schedule.tasks:
        if row.task in own:
            device_of[own[row.task]] = problem.device_index[row.device]
    mine = orders_by_start(problem, result.schedule, own)
    orders = [[i for i in order if i in before] + mine[d] + [i for i in order if i in after]
              for d, order in enumerate(orders_by_start(problem, schedule))]
    try:
        return stitch(problem, device_of, orders, schedule.method, rules)
    except SchedkitError:  # (orders the graph contradicts: not a candidate)
        return None


def _part_start(problem: Problem, schedule: Schedule, part: Problem, window: list[int],
                rules: TimingRules | None = None) -> Schedule | None:
    """The incumbent's window as a schedule of its part: the exact method starts from it."""
    incumbent = placement_indices(problem, schedule)
    device_of = [incumbent[i] for i in window] + \
        [part.allowed[k][0] for k in range(len(window), len(part.tasks))]  # (a stand-in: its one device)
    kept = {problem.tasks[i]: k for k, i in enumerate(window)}
    mine = orders_by_start(part, schedule, kept)
    orders = [[] for _ in part.devices]
    for k in range(len(window), len(part.tasks)):  # (stand-ins were made in their order: before, then after)
        if part.durations[k][device_of[k]] > 0:
            (orders[device_of[k]].append if part.tasks[k].startswith("~busy") else mine[device_of[k]].append)(k)
    try:
        return stitch(part, device_of, [o + m for o, m in zip(orders, mine)], schedule.method, rules)
    except SchedkitError:
        return None


def window_part(problem: Problem, schedule: Schedule, window: list[int], before: set[int],
                after: set[int]) -> Problem:
    """The part of ``window``: its tasks, stand-ins for the schedule before and after it.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.methods import METHODS
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = METHODS.get("heft")().solve(p)
    >>> part = window_part(p, s, [2, 3], {0, 1}, {4, 5})
    >>> [t for t in part.tasks if not t.startswith("~")], len(part.tasks) > 2
    (['mlp', 'norm'], True)
    """
    device_of = placement_indices(problem, schedule)
    rows = {problem.task_index[r.task]: r for r in schedule.tasks}
    inside = set(window)
    # (on each device, stand-ins end where a task before the window sends it data, then at
    # the last end; after it, start where a task after the window reads from it, the last
    # runs to the makespan: the window's data leave and arrive when the incumbent's do)
    ends: dict[int, set[float]] = {}
    for i in before:
        ends.setdefault(device_of[i], set()).add(rows[i].end)
    sends = {device_of[i]: set() for i, j, _ in problem.edges if i in before and j in inside}
    reads = {device_of[j]: set() for i, j, _ in problem.edges if i in inside and j in after}
    for i, j, _ in problem.edges:
        if i in before and j in inside:
            sends[device_of[i]].add(rows[i].end)
        elif i in inside and j in after:
            reads[device_of[j]].add(rows[j].start)
    stand_ins, edges, busy, next_ = [], {}, {}, {}
    for d in sorted(set(ends) | set(reads)):
        cuts = sorted(sends.get(d, set()) | {max(ends[d])}) if d in ends else []
        marks = [("~busy", t) for t in cuts]
        if d in reads:
            marks += [("~next", t) for t in sorted(reads[d])] + [("~end", schedule.makespan)]
        at, last = 0.0, None
        for k, (kind, t) in enumerate(marks):
            if kind == "~end":
                break
            name = _fresh(problem, f"{kind}{k}:{problem.devices[d]}")
            stop = t if kind == "~busy" else marks[k + 1][1]
            begin = at if kind == "~busy" else t
            stand_ins.append({"name": name, "durations": {problem.devices[d]: max(0.0, stop - begin)}})
            if last is not None:
                edges[last, name] = 0.0
            (busy if kind == "~busy" else next_)[d, t] = name
            at, last = max(at, stop), name
    for i, j, size in problem.edges:
        if j in inside and i in before:
            key = (busy[device_of[i], rows[i].end], problem.tasks[j])
        elif i in inside and j in after:
            key = (problem.tasks[i], next_[device_of[j], rows[j].start])
        else:
            continue
        edges[key] = heavier(problem, edges.get(key, 0.0), size)
    pins = {}
    for members in problem.colocate_groups.values():
        placed = [device_of[i] for i in members if i not in inside]
        for i in members:
            if i in inside and placed:
                pins[i] = [placed[0]]
    devices = remaining_capacities(problem, device_of, before | after)
    data = {"name": f"{problem.name}/window", "devices": devices,
            "links": spec_data(problem, platform=True).get("links", []),
            "tasks": [task_row(problem, i, pins.get(i)) for i in window] + stand_ins,
            "edges": [edge_row(problem, problem.tasks[i], problem.tasks[j], size)
                      for i, j, size in problem.edges if i in inside and j in inside]
            + [edge_row(problem, a, b, s) for (a, b), s in sorted(edges.items())]}
    return Problem.from_dict(data)


def _fresh(problem: Problem, name: str) -> str:
    while name in problem.task_index:
        name += "'"
    return name
