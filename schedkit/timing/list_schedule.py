"""List scheduling: ready tasks in priority order, each on a device chosen by a rule.

The engine of the list heuristics (MET, greedy, HEFT) and of the horizon and
extension schedules of the MILP. It follows the problem semantics of
:mod:`schedkit.problem`: a task starts after each predecessor's end plus the
transfer between their devices (:func:`~schedkit.timing.resources.arrival`), a
device runs one task at a time (:class:`~schedkit.timing.resources.Timeline`), a
task runs only on its allowed devices, and the static memory of the tasks on a
device fits its capacity.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import to_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> rank = [float(len(p.tasks) - k) for k in range(len(p.tasks))]
>>> device_of, start = list_schedule(p, rank)
>>> to_schedule(p, device_of, start, "example").validate(p).status
'heuristic'
"""

from __future__ import annotations

import heapq
from typing import Callable, Sequence

from schedkit.errors import ProblemError
from schedkit.numerics import fits
from schedkit.problem import Problem
from schedkit.timing.resources import Timeline, arrival

DeviceRule = Callable[[int, list[tuple[int, float, float]]], int]
"""Chooses a device for task ``i`` from ``(device, start, end)`` candidates."""


def earliest_finish(i: int, options: list[tuple[int, float, float]]) -> int:
    """Device rule: the candidate that finishes first (ties: lowest device index)."""
    return min(options, key=lambda o: (o[2], o[0]))[0]


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
    timelines = [Timeline() for _ in problem.devices]
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
                at = arrival(problem, end[p], size, device[p], d)
                if at > ready:
                    ready = at
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
    room = [d for d in allowed if fits(problem.task_memory[i], free_memory[d])]
    if not room:
        raise ProblemError(f"task '{name}': no memory left on its devices (heuristic placement)")
    linked = [d for d in room
              if all(problem.pair_allowed(size, device[p], d) for p, size in problem.preds[i])]
    if not linked:
        raise ProblemError(f"task '{name}': no device it may use is linked to its predecessors' devices")
    return linked
