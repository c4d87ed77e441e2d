"""A lower bound that sees memory: the cheapest split of a path of the graph into runs that fit.

When no device holds all the tasks of a path of the task graph, every schedule splits the
path over several devices and pays a transfer at each split, or runs part of it on slower
devices with room. Tarnawski et al. (NeurIPS 2020) solve the placement of a chain by a
dynamic program over contiguous splits; here the same program runs over a path as a
*relaxation* of every schedule, which makes it a lower bound on any graph.

**Statement.** Let ``P = v_0 -> ... -> v_L`` be a path of the task graph. In a schedule,
cut ``P`` into *runs*, maximal stretches of consecutive tasks on one device. A run on
device ``d`` holds only tasks allowed on ``d`` whose memory fits ``d`` (they are part of
``d``'s load), with the memory of tasks ``colocate`` ties to them; two consecutive runs sit
on distinct devices, so the edge between them costs the cheapest transfer between any two
distinct devices of the two runs' device classes. Precedence makes the makespan at least
``head(v_0)`` + the path's durations + its transfers + ``tail(v_L)``. The bound is the least
such sum over every split into runs (a dynamic program over positions and device classes),
maximised over a few paths.

**Detours** strengthen it: a chain ``S`` of tasks off the path from ``x = v_i`` to
``y = v_j`` (``x -> s_1 -> ... -> s_k -> y``, or an edge ``x -> y`` alone that skips part of
the path) gives a second path, the same outside ``(x, y)``; the makespan is at least the
longer of the two ways from ``x`` to ``y``. Three cases cover every schedule:

- ``x`` and ``y`` in one run on ``d``: all of ``S`` is on ``d`` (its memory joins the run's),
  or ``S`` leaves ``d`` and comes back, paying transfers on two distinct edges of the detour.
- ``x`` and ``y`` in two consecutive runs (one cut between them on the path): ``S`` sits on
  their two devices, its memory shared between the two runs in one of its subset sums
  (``2**k`` ways; a chain longer than three tasks counts none), and the detour pays at least
  one transfer; or some task of ``S`` sits on a third device and it pays two.
- more cuts between them: nothing is counted.

Detours with disjoint spans are all taken by one path, so their excess lengths add up. The
choice between "in the run" and "out, longer" is a knapsack per run, relaxed to its LP
(fractional, greedy); a chain shared between two runs is carried from one run to the next
by the program's state, one mode per way to share it.

Each step relaxes every schedule (devices of a class are told apart only by memory use,
device counts and reuse are ignored, colocated tasks on the path may sit apart), so the
least value is at most every makespan: a lower bound. It is valid for the problem's own
semantics (static memory, transfers as delays); see
:func:`~schedkit.problem.bounds.formulation_bound` for formulations that drop either.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({
...     "devices": [{"name": "a", "memory": 2}, {"name": "b", "memory": 2}],
...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
...     "tasks": [{"name": f"t{k}", "work": 1, "memory": 1} for k in range(4)],
...     "edges": [{"src": "t0", "dst": "t1", "size": 5}, {"src": "t1", "dst": "t2", "size": 1},
...               {"src": "t2", "dst": "t3", "size": 5}]})
>>> memory_bound(p)       # 4 tasks, 2 per device: the cheapest cut (t1 -> t2) costs 1
5.0
>>> memory_bound(p, communication=False)
4.0
"""

from __future__ import annotations

import math
from typing import Sequence

from schedkit.numerics import fits
from schedkit.problem.path_split import CutCosts, device_classes, path_split_bound
from schedkit.problem.problem import Problem

__all__ = ["memory_bound"]

def memory_bound(problem: Problem, communication: bool = True) -> float:
    """The best :func:`path_split_bound` over a few paths (0 when memory never binds).

    Paths tried: the longest by memory (colocated memory included) and by the sum of memory
    and least duration, each normalised by its largest. Skipped when every device holds all
    the tasks' memory (one run then fits any path: the critical path bound is as good).

    Parameters
    ----------
    problem : Problem
    communication : bool
        Charge transfers at the splits (``False``: a formulation without communication
        delays, where only the devices' speeds and memory count).

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.importers.msr import load_msr
    >>> p = Problem.from_dict(load_msr("data/msr-dnn/layer/resnet50_inference.json"))
    >>> round(memory_bound(p), 1)    # the critical path: 187.5; HEFT: 1351.4
    703.0
    """
    p = problem
    total = sum(p.task_memory)
    if all(fits(total, cap) for cap in p.device_memory):
        return 0.0
    memory = list(p.task_memory)  # (a path by memory, counting each group's memory once)
    for members in p.colocate_groups.values():
        memory[members[0]] += sum(p.task_memory[i] for i in members[1:])
    big = max(memory) or 1.0
    slow = max(p.min_duration) or 1.0
    weights = [memory, [m / big + t / slow for m, t in zip(memory, p.min_duration)]]
    classes = device_classes(p)
    cuts = CutCosts(p, classes, communication)
    best, seen = 0.0, set()
    for weight in weights:
        path, sizes = _longest_path(p, weight)
        if tuple(path) not in seen:
            seen.add(tuple(path))
            value = path_split_bound(p, path, sizes, classes=classes, cuts=cuts)
            if value < math.inf:  # (inf proves that no schedule exists: the methods say so themselves)
                best = max(best, value)
    return best

def _longest_path(problem: Problem, weight: Sequence[float]) -> tuple[list[int], list[float]]:
    """A source-to-sink path of greatest total ``weight``, and the sizes of its edges."""
    p = problem
    value, back = [0.0] * len(p.tasks), [None] * len(p.tasks)
    for j in p.topological_order:
        for i, size in p.preds[j]:
            if back[j] is None or value[i] > value[back[j][0]]:
                back[j] = (i, size)
        value[j] = weight[j] + (value[back[j][0]] if back[j] else 0.0)
    end = max((i for i in range(len(p.tasks)) if not p.succs[i]), key=value.__getitem__)
    path, sizes = [end], []
    while back[path[-1]] is not None:
        i, size = back[path[-1]]
        path.append(i)
        sizes.append(size)
    return path[::-1], [0.0] + sizes[::-1]
