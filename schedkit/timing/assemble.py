"""A mapping and start times turned into a :class:`~schedkit.schedule.Schedule` with its transfers.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> s = to_schedule(p, [0, 0, 0, 0, 0, 1], [0.0, 0.4, 1.6, 3.1, 3.3, 4.216], "manual")
>>> [(t.src, t.dst, t.from_, t.to) for t in s.transfers]
[('logits', 'sample', 'gpu0', 'cpu')]
"""

from __future__ import annotations

from typing import Sequence

from schedkit.problem import Problem
from schedkit.schedule import Schedule, TaskRun, Transfer
from schedkit.timing.resources import arrival


def to_schedule(problem: Problem, device_of: Sequence[int], start: Sequence[float],
                method: str) -> Schedule:
    """Turn a mapping and start times into a :class:`Schedule` with its transfers.

    The schedule's status says ``heuristic``: a method wraps it in a
    :class:`~schedkit.schedule.Result`, which decides the status of the file it returns.
    """
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
                                      start=end[i], end=arrival(problem, end[i], size, u, v)))
    makespan = max([r.end for r in rows] + [t.end for t in transfers])
    return Schedule(problem=problem.name, method=method, status="heuristic", makespan=makespan,
                    tasks=rows, transfers=transfers)
