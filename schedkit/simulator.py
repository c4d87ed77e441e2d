"""Timing engines shared by every method: list scheduling and fixed-order timing.

All of them follow the problem semantics of :mod:`schedkit.problem`: a task starts
after each predecessor's end plus the communication time between their devices,
a device runs one task at a time, a task runs only on its allowed devices, and
the static memory of the tasks on a device fits its capacity.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> rank = [float(len(p.tasks) - k) for k in range(len(p.tasks))]
>>> device_of, start = list_schedule(p, rank)
>>> to_schedule(p, device_of, start, "example").validate(p).status
'heuristic'
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from typing import Callable, Sequence

from .errors import ProblemError, ScheduleError
from .problem import Problem
from .schedule import Schedule, TaskRun, Transfer

DeviceRule = Callable[[int, list[tuple[int, float, float]]], int]
"""Chooses a device for task ``i`` from ``(device, start, end)`` candidates."""


def earliest_finish(i: int, options: list[tuple[int, float, float]]) -> int:
    """Device rule: the candidate that finishes first (ties: lowest device index)."""
    return min(options, key=lambda o: (o[2], o[0]))[0]


class _Timeline:
    """Busy intervals of one device, sorted, for insertion-based scheduling."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []

    def earliest(self, ready: float, length: float, insertion: bool) -> float:
        if not self.starts:
            return ready
        if not insertion:
            return max(ready, self.ends[-1])
        k = bisect_right(self.starts, ready)
        # The slot may begin inside the gap before interval k.
        t = max(ready, self.ends[k - 1]) if k > 0 else ready
        while k < len(self.starts):
            if t + length <= self.starts[k] + 1e-12:
                return t
            t = max(t, self.ends[k])
            k += 1
        return t

    def add(self, start: float, end: float) -> None:
        # Keep the ends sorted too (``earliest`` relies on it): an empty interval goes
        # before the intervals that start at the same time, not after them.
        k = bisect_left(self.starts, start) if end <= start else bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def list_schedule(problem: Problem, priority: Sequence[float], *,
                  device_of: Sequence[int] | None = None,
                  rule: DeviceRule = earliest_finish,
                  insertion: bool = True) -> tuple[list[int], list[float]]:
    """Schedule ready tasks in decreasing ``priority``, each on a device chosen by ``rule``.

    Parameters
    ----------
    problem : Problem
    priority : sequence of float
        Higher goes first among ready tasks; ties go to the lower task index.
    device_of : sequence of int, optional
        A fixed mapping (then ``rule`` is not used).
    rule : callable
        ``rule(task, [(device, start, end), ...]) -> device``; default earliest finish.
    insertion : bool
        Let a task fill an idle gap between tasks already on a device.

    Returns
    -------
    device_of, start : list of int, list of float

    Raises
    ------
    ProblemError
        When a task has no device left (memory used up, collocation, no link).
    """
    n = len(problem.tasks)
    indegree = [len(problem.preds[i]) for i in range(n)]
    heap = [(-priority[i], i) for i in range(n) if indegree[i] == 0]
    heapq.heapify(heap)
    device = [-1] * n
    start = [0.0] * n
    end = [0.0] * n
    free_memory = list(problem.device_memory)
    timelines = [_Timeline() for _ in problem.devices]
    group_device: dict[str, int] = {}
    groups = [t.colocate for t in problem.spec.tasks]
    while heap:
        _, i = heapq.heappop(heap)
        candidates = _candidates(problem, i, device, free_memory, group_device.get(groups[i]),
                                 None if device_of is None else device_of[i])
        options = []
        for d in candidates:
            ready = 0.0
            for p, size in problem.preds[i]:
                arrival = end[p] + problem.comm_time(size, device[p], d)
                if arrival > ready:
                    ready = arrival
            length = problem.durations[i][d]
            t = timelines[d].earliest(ready, length, insertion)
            options.append((d, t, t + length))
        d = options[0][0] if len(options) == 1 else rule(i, options)
        _, t, finish = next(o for o in options if o[0] == d)
        device[i], start[i], end[i] = d, t, finish
        timelines[d].add(t, finish)
        free_memory[d] -= problem.task_memory[i]
        if groups[i] is not None:
            group_device[groups[i]] = d
        for j, _ in problem.succs[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, (-priority[j], j))
    return device, start


def _candidates(problem: Problem, i: int, device: list[int], free_memory: list[float],
                group_device: int | None, fixed: int | None) -> list[int]:
    name = problem.tasks[i]
    allowed = problem.allowed[i] if fixed is None else (fixed,)
    if fixed is not None and fixed not in problem.allowed[i]:
        raise ProblemError(f"task '{name}' cannot run on {problem.devices[fixed]}")
    if group_device is not None:
        allowed = tuple(d for d in allowed if d == group_device)
        if not allowed:
            raise ProblemError(f"task '{name}': its collocation group sits on a device it cannot use")
    fits = [d for d in allowed if problem.task_memory[i] <= free_memory[d] + 1e-9]
    if not fits:
        raise ProblemError(f"task '{name}': no memory left on its devices (heuristic placement)")
    linked = [d for d in fits
              if all(problem.pair_allowed(size, device[p], d) for p, size in problem.preds[i])]
    if not linked:
        raise ProblemError(f"task '{name}': no device it may use is linked to its predecessors' devices")
    return linked


def upward_rank(problem: Problem, costs: str = "mean") -> list[float]:
    """HEFT's upward rank: a task's cost plus the longest costed path after it.

    Parameters
    ----------
    costs : {"mean", "min"}
        ``mean``: average duration over allowed devices and average transfer time
        over linked pairs of distinct allowed devices, transfers at the mean bandwidth (Topcuoglu et al. 2002);
        ``min``: shortest duration, no transfer.
    """
    p = problem
    n = len(p.tasks)
    if costs == "mean":
        cost = [sum(t.values()) / len(t) for t in p.durations]
    elif costs == "min":
        cost = list(p.min_duration)
    else:
        raise ValueError(f"unknown costs {costs!r} (mean or min)")
    # Topcuoglu et al.: mean transfer time = mean latency + size / mean bandwidth over the
    # device pairs; cache both means per pair of allowed-device sets (most tasks share one).
    means: dict[tuple, tuple[float, float]] = {}
    rank = [0.0] * n
    for i in reversed(p.topological_order):
        best = 0.0
        for j, size in p.succs[i]:
            comm = 0.0
            if costs == "mean" and size:
                key = (p.allowed[i], p.allowed[j])
                if key not in means:
                    pairs = [(u, v) for u in key[0] for v in key[1] if u != v and p.linked[u][v]]
                    k = len(pairs) or 1
                    mean_bw = sum(1.0 / p.inv_bandwidth[u][v] for u, v in pairs) / k if pairs else 0.0
                    means[key] = (1.0 / mean_bw if mean_bw else 0.0,
                                  sum(p.latency[u][v] for u, v in pairs) / k if pairs else 0.0)
                inv_bw, lat = means[key]
                comm = size * inv_bw + lat
            best = max(best, comm + rank[j])
        rank[i] = cost[i] + best
    return rank


def fixed_order_times(problem: Problem, device_of: Sequence[int],
                      device_orders: Sequence[Sequence[int]]) -> list[float]:
    """Earliest start times given each task's device and the task order on every device.

    Raises :class:`~schedkit.errors.ScheduleError` when the device orders contradict the
    task graph (a cycle).
    """
    n = len(problem.tasks)
    after: list[list[int]] = [[] for _ in range(n)]
    indegree = [len(problem.preds[i]) for i in range(n)]
    for i in range(n):
        after[i] = [j for j, _ in problem.succs[i]]
    for order in device_orders:
        for a, b in zip(order, order[1:]):
            after[a].append(b)
            indegree[b] += 1
    start = [0.0] * n
    end = [0.0] * n
    device_free = [0.0] * len(problem.devices)
    stack = [i for i in range(n) if indegree[i] == 0]
    done = 0
    while stack:
        i = stack.pop()
        d = device_of[i]
        t = device_free[d]
        for p, size in problem.preds[i]:
            t = max(t, end[p] + problem.comm_time(size, device_of[p], d))
        start[i] = t
        end[i] = t + problem.durations[i][d]
        device_free[d] = end[i]
        done += 1
        for j in after[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                stack.append(j)
    if done < n:
        raise ScheduleError("the device orders contradict the task graph")
    return start


def to_schedule(problem: Problem, device_of: Sequence[int], start: Sequence[float], method: str,
                status: str = "heuristic", bound: float | None = None,
                solve_seconds: float | None = None) -> Schedule:
    """Turn a mapping and start times into a :class:`Schedule` with its transfers."""
    rows = []
    end = [0.0] * len(problem.tasks)
    for i, name in enumerate(problem.tasks):
        d = device_of[i]
        end[i] = start[i] + problem.durations[i][d]
        rows.append(TaskRun(task=name, device=problem.devices[d], start=start[i], end=end[i]))
    transfers = []
    for i, j, size in problem.edges:
        u, v = device_of[i], device_of[j]
        if u != v and size > 0:
            transfers.append(Transfer(src=problem.tasks[i], dst=problem.tasks[j],
                                      from_=problem.devices[u], to=problem.devices[v],
                                      start=end[i], end=end[i] + problem.comm_time(size, u, v)))
    makespan = max([r.end for r in rows] + [t.end for t in transfers])
    return Schedule(problem=problem.name, method=method, status=status, makespan=makespan,
                    objective=makespan, bound=bound, solve_seconds=solve_seconds,
                    tasks=rows, transfers=transfers)
