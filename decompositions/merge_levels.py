"""The first, linear stage of ``merge`` on large graphs: runs of the level order.

Greedy merging (:mod:`schedkit.decompositions.merge`) weighs every pair it may merge
against the whole coarse graph: its time grows with the square of the tasks (1,000 tasks
in 3 s, 100,000 would take hours). On a large graph, ``merge`` therefore first cuts the
tasks into at most ``target`` groups in linear time, and greedy merging starts from those.

The **level order** lists the tasks by level (the longest path of edges from a source),
then by their position in the problem's topological order: a topological order itself,
since every edge leads to a higher level. The groups are **runs** of consecutive tasks in
that order, and so the coarse graph is acyclic whatever the cuts (an edge between two
groups always leads from an earlier run to a later one): no reachability test is needed.

Where the cuts fall:

- at every level boundary while there are no more levels than ``target`` / 2: a group is
  then a set of tasks of one level, which no path joins, so the coarse graph keeps the
  graph's parallelism (several groups per wide level, by work) and its depth; on deeper
  graphs, runs of whole levels and parts of levels, by work;
- when the run's least duration would pass the mean (the total least duration over
  ``target``);
- before a task that shares no device with the run, whose memory would not fit on a
  device the run may use, or that belongs to another collocation group than the run's.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.generators import layered
>>> p = Problem.from_dict(layered(levels=4, width=6, edge_prob=0.3, long_range_prob=0.1, devices=3, seed=1))
>>> groups = level_runs(p, 8)
>>> len(groups) <= 8 + 4, sorted(i for g in groups for i in g) == list(range(24))
(True, True)
>>> levels = task_levels(p)
>>> all(len({levels[i] for i in g}) == 1 for g in groups)        # one level each
True
"""

from __future__ import annotations

import numpy as np

from schedkit.numerics import fits
from schedkit.problem import Problem
from schedkit.problem.levels import graph_levels

__all__ = ["task_levels", "level_runs"]


def task_levels(problem: Problem) -> np.ndarray:
    """The level of every task: the number of edges on the longest path from a source to it.

    Examples
    --------
    >>> from schedkit import Problem
    >>> task_levels(Problem.load("examples/tiny.yaml")).tolist()
    [0, 1, 1, 2, 3, 4]
    """
    a = problem.arrays
    level = np.zeros(len(problem.tasks), dtype=np.int64)
    levels = graph_levels(a)  # (numpy, level by level; cached for HEFT's ranks and the bounds)
    if levels is not None:
        for k, tasks in enumerate(levels.nodes):
            level[tasks] = k
        return level
    ptr, src = a.pred_ptr, a.pred_src
    for i in problem.topological_order:  # (one slice per task: linear in the edges)
        begin, end = ptr[i], ptr[i + 1]
        if end > begin:
            level[i] = level[src[begin:end]].max() + 1
    return level


def level_runs(problem: Problem, target: int) -> list[list[int]]:
    """Runs of the level order (see above), about ``target`` of them (fewer when the work
    allows, more where levels, devices, memory or collocation cut them), each in
    topological order."""
    n = len(problem.tasks)
    if n == 0:
        return []
    target = max(1, target)
    level = task_levels(problem)
    position = np.empty(n, dtype=np.int64)
    position[np.asarray(problem.topological_order, dtype=np.int64)] = np.arange(n)
    order = np.lexsort((position, level)).tolist()
    least = problem.min_duration
    mean = sum(least) / target
    by_level = int(level.max()) + 1 <= target // 2
    level = level.tolist()
    allowed, memory, capacity = problem.allowed, problem.task_memory, problem.device_memory
    label = [t.colocate for t in problem.spec.tasks]
    groups: list[list[int]] = []
    run: list[int] = []
    devices: set[int] = set()
    work = used = 0.0
    group = None
    for i in order:
        if run:
            shared = devices & set(allowed[i])
            cut = (not shared or work + least[i] > mean or (by_level and level[i] != level[run[-1]])
                   or (label[i] is not None and group is not None and label[i] != group)
                   or (memory[i] and not any(fits(used + memory[i], capacity[d]) for d in shared)))
            if not cut:
                run.append(i)
                devices, work, used = shared, work + least[i], used + memory[i]
                group = group if label[i] is None else label[i]
                continue
            groups.append(run)
        run, devices, work, used, group = [i], set(allowed[i]), least[i], memory[i], label[i]
    groups.append(run)
    return groups
