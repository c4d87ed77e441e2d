"""DiviML's recursive lower bound of ``kedge``, through the channels between its modules.

For every task ``o`` of a module with an edge leaving it, ``pre(o)`` is ``o`` and its
ancestors inside the module; every channel into ``pre(o)`` releases its task no earlier
than the bound on its source's end (``dep``) plus the least transfer between their devices
(:func:`release`). The best schedule of ``pre(o)`` with those releases ends no later than
``o`` does in any schedule, so its proven lower bound (:func:`bound_part`, solved by the
inner method) bounds ``o``'s end; the same for the whole of every module that holds an
output of the network bounds the makespan. A bound part that finds no bound falls back on
the longest path of least durations from the releases (:func:`heads`).

On large graphs (modules found as bands, :mod:`~schedkit.decompositions.kedge_bands`) a
module has hundreds of outputs, each ``pre(o)`` thousands of tasks, and releases on
hundreds of tasks (one stand-in device each): ``dep`` is then the longest path alone
(:func:`heads`, linear), and one bound part per module, the module alone with every
device free (:func:`whole_floor`): every task of the module starts no earlier than the
least of their heads ``R``, so ``R`` plus the part's bound bounds the end of the module's
last task, hence the makespan.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> h = heads(p, {}, p.topological_order)
>>> round(max(h[i] + p.min_duration[i] for i in h), 3)
3.3
>>> whole_floor(p, h, part_bound=None) == max(h[i] + p.min_duration[i] for i in h)
True
"""

from __future__ import annotations

from typing import Iterable

from schedkit.problem import Problem
from schedkit.reductions.subproblem import sub_problem

__all__ = ["release", "heads", "bound_part", "whole_floor"]


def release(problem: Problem, dep: dict[int, float], e: int) -> float:
    """No input of ``e`` from a task of ``dep`` (an earlier module, its end bounded by
    ``dep``) arrives before this."""
    latest = 0.0
    for p, size in problem.preds[e]:
        if p in dep:
            least = min((problem.comm_time(size, u, v) for u in problem.allowed[p] for v in problem.allowed[e]
                         if problem.pair_allowed(size, u, v)), default=0.0)
            latest = max(latest, dep[p] + least)
    return latest


def heads(problem: Problem, dep: dict[int, float], ordered: Iterable[int]) -> dict[int, float]:
    """The earliest start of each of the tasks ``ordered`` (in a topological order): the
    longest path of least durations from the releases (:func:`release`), through the
    edges among them."""
    head: dict[int, float] = {}
    for i in ordered:
        head[i] = max([release(problem, dep, i)] + [head[p] + problem.min_duration[p]
                                                    for p, _ in problem.preds[i] if p in head])
    return head


def bound_part(problem: Problem, dep: dict[int, float], pre: list[int], name: str) -> Problem:
    """The part whose lower bound bounds the end of ``pre``: its tasks, each released by a
    stand-in task on a device of its own that lasts until its :func:`release`."""
    extra_tasks, extra_devices, extra_edges = [], [], []
    for e in pre:
        until = release(problem, dep, e)
        if until > 0:
            ghost = fresh(problem, f"~release:{problem.tasks[e]}")
            extra_devices.append({"name": ghost})
            extra_tasks.append({"name": ghost, "durations": {ghost: until}})
            extra_edges.append({"src": ghost, "dst": problem.tasks[e], "size": 0.0})
    return sub_problem(problem, pre, name, extra_tasks=extra_tasks, extra_edges=extra_edges,
                       extra_devices=extra_devices)


def whole_floor(problem: Problem, head: dict[int, float], part_bound: float | None) -> float:
    """What bounds the end of a module's last task: its longest path from the releases, or
    the least of its heads plus ``part_bound``, a lower bound of the module alone (every
    device free, from time 0)."""
    longest = max((head[i] + problem.min_duration[i] for i in head), default=0.0)
    if part_bound is None:
        return longest
    return max(longest, min(head.values(), default=0.0) + part_bound)


def fresh(problem: Problem, name: str) -> str:
    """``name``, primed until no task of ``problem`` has it."""
    while name in problem.task_index:
        name += "'"
    return name
