"""What the partitioners measure: device speeds, total ranks and the critical path.

- **speed** of a device (:func:`device_speeds`): the mean, over the tasks that may run on
  it and elsewhere, of ``min_duration[i] / durations[i][d]`` -- 1 for a device that is
  the fastest for every task; for problems given as ``work`` and ``speed`` this is
  ``speed / max speed``.
- **mean costs**, **upward rank** and **downward rank**: HEFT's, the ones of
  :mod:`schedkit.problem.graph` (Topcuoglu et al. 2002): a task's mean duration over its
  allowed devices; an edge's mean transfer time ``mean latency + size / mean bandwidth``
  over the linked pairs of distinct allowed devices of its ends; the upward rank is the
  mean cost plus the longest mean-cost path after the task, the downward rank the longest
  mean-cost path before it.
- **total rank** (:func:`total_rank`) = upward + downward, the length of the longest
  path through the task.
- **critical path** (:func:`critical_path_tasks`): from the task without predecessors of
  largest upward rank, the successor that attains the upward rank, to an exit.

Ranks that differ by less than :func:`~schedkit.numerics.time_tolerance` of the longest
path are equal (:func:`decreasing`), and equal ranks go to the lower task index.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> [p.tasks[i] for i in critical_path_tasks(p)]
['n1', 'n2', 'n9', 'n10']
"""

from __future__ import annotations

from typing import Sequence

from schedkit.numerics import time_tolerance
from schedkit.problem import Problem
from schedkit.problem.graph import downward_rank, mean_costs, upward_rank

__all__ = ["device_speeds", "total_rank", "critical_path_tasks", "decreasing"]


def device_speeds(problem: Problem) -> list[float]:
    """Relative speed of each device in ``(0, 1]`` (0 for a device no task may use).

    The mean of ``min_duration[i] / durations[i][d]`` over the tasks that may run on
    ``d`` and on another device (over all tasks of ``d`` when there are none).

    Examples
    --------
    >>> from schedkit import Problem
    >>> [round(s, 3) for s in device_speeds(Problem.load("examples/tiny.yaml"))]  # gpu0, cpu
    [1.0, 0.194]
    """
    p = problem
    m = len(p.devices)
    # Tasks bound to one device say nothing about its speed: use them only when no other
    # task may run there.
    total = [[0.0, 0.0] for _ in range(m)]
    count = [[0, 0] for _ in range(m)]
    for i, table in enumerate(p.durations):
        best = p.min_duration[i]
        kind = 0 if len(table) > 1 else 1
        for d, t in table.items():
            total[d][kind] += best / t if t > 0 else 1.0
            count[d][kind] += 1
    out = []
    for d in range(m):
        kind = 0 if count[d][0] else 1
        out.append(total[d][kind] / count[d][kind] if count[d][kind] else 0.0)
    return out


def critical_path_tasks(problem: Problem) -> list[int]:
    """The critical path under HEFT's mean costs, from its first task to its last.

    It starts at the task without predecessors of largest
    :func:`~schedkit.problem.graph.upward_rank` and follows, from each task, the
    successor ``j`` of largest mean edge cost plus ``upward_rank[j]`` (the one that
    attains the task's rank); ties, within :func:`~schedkit.numerics.time_tolerance` of
    the path's length, go to the lower index.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [p.tasks[i] for i in critical_path_tasks(p)]
    ['embed', 'mlp', 'norm', 'logits', 'sample']
    """
    p = problem
    up = upward_rank(p)
    _, comm = mean_costs(p)
    out_edges: list[list[tuple[int, float]]] = [[] for _ in p.tasks]
    for (i, j, _), c in zip(p.edges, comm):
        out_edges[i].append((j, c))
    tolerance = time_tolerance(max(up, default=0.0))
    entries = [i for i in range(len(p.tasks)) if not p.preds[i]]
    i = decreasing(entries, up, tolerance)[0]
    path = [i]
    while out_edges[i]:
        through = {j: c + up[j] for j, c in out_edges[i]}
        i = decreasing(list(through), through, tolerance)[0]
        path.append(i)
    return path


def decreasing(items: Sequence[int], value, tolerance: float) -> list[int]:
    """``items`` by decreasing ``value[item]``; equal values in increasing item order.

    Values within ``tolerance`` of the first of their run count as equal: every task of
    a longest path has the same total rank, up to rounding that would otherwise decide
    their order.

    Examples
    --------
    >>> decreasing([0, 1, 2, 3], [5.0, 7.0, 6.8, 1.0], 0.5)
    [1, 2, 0, 3]
    >>> decreasing([0, 1, 2, 3], [5.0, 6.8, 7.0, 1.0], 0.5)    # 1 and 2 are equal
    [1, 2, 0, 3]
    """
    order = sorted(items, key=lambda k: (-value[k], k))
    out: list[int] = []
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and value[order[end]] >= value[order[start]] - tolerance:
            end += 1
        out.extend(sorted(order[start:end]))
        start = end
    return out


def total_rank(problem: Problem) -> list[float]:
    """Upward plus downward rank: the length of the longest mean-cost path through each task.

    Examples
    --------
    >>> from schedkit import Problem
    >>> [round(r, 3) for r in total_rank(Problem.load("examples/topcuoglu2002.json"))][:4]
    [108.0, 108.0, 105.0, 102.0]
    """
    return [a + b for a, b in zip(upward_rank(problem), downward_rank(problem))]
