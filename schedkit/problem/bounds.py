"""Lower bounds on the makespan, valid for every schedule of a problem.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> round(critical_path_bound(p), 3), round(load_bound(p), 3)
(3.3, 3.483)
>>> lower_bound(p) == max(critical_path_bound(p), load_bound(p), device_bound(p), memory_bound(p))
True
"""

from __future__ import annotations

from schedkit.problem.memory_bound import memory_bound
from schedkit.problem.problem import Problem


def critical_path_bound(problem: Problem) -> float:
    """Longest path of minimum durations, ignoring communication."""
    p = problem
    return max(p.heads[i] + p.min_duration[i] + p.tails[i] for i in range(len(p.tasks)))


def load_bound(problem: Problem, weights: list[float] | None = None) -> float:
    """The devices' load: every task's work must fit in the devices' time.

    For any weights ``c_d > 0``, the loads ``L_d`` of a schedule satisfy
    ``sum_d c_d L_d >= sum_i min_d c_d p_id`` and ``L_d <= makespan``, so
    ``makespan >= sum_i min_d c_d p_id / sum_d c_d`` (devices no task may use left out).
    ``weights``: the ``c_d``; by default the best of three guesses at the multipliers of
    this LP relaxation of the assignment: equal weights (the least durations spread evenly),
    the devices' ``speed`` (exact for tasks given as ``work``) and ``1 / slowness``, a
    device's median duration over the tasks' least durations.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> round(load_bound(p, [1.0, 1.0]), 3), round(load_bound(p), 3)
    (2.25, 3.483)
    """
    if weights is not None:
        return _weighted_load(problem, weights)
    m = len(problem.devices)
    guesses = [[1.0] * m, [d.speed for d in problem.spec.devices], _inverse_slowness(problem)]
    return max(_weighted_load(problem, c) for c in guesses)


def _weighted_load(problem: Problem, weights: list[float]) -> float:
    used = {d for allowed in problem.allowed for d in allowed if weights[d] > 0}
    if not used:
        return 0.0
    work = 0.0
    for table, least in zip(problem.durations, problem.min_duration):
        if least > 0:
            work += min([weights[d] * t for d, t in table.items() if d in used], default=0.0)
    return work / sum(weights[d] for d in used)


def _inverse_slowness(problem: Problem) -> list[float]:
    """Per device, 1 / its median ratio of duration to the task's least duration (0: no task)."""
    ratios: list[list[float]] = [[] for _ in problem.devices]
    for table, least in zip(problem.durations, problem.min_duration):
        if least > 0:
            for d, t in table.items():
                ratios[d].append(t / least)
    weights = []
    for values in ratios:
        values.sort()
        weights.append(1.0 / values[len(values) // 2] if values else 0.0)
    return weights


def device_bound(problem: Problem) -> float:
    """One-device bound: the tasks bound to a device run one after another on it.

    For every device, the tasks that may run only there take at least the
    smallest head among them, plus their durations, plus the smallest tail.
    """
    best = 0.0
    for d in range(len(problem.devices)):
        mine = [i for i, allowed in enumerate(problem.allowed) if allowed == (d,)]
        if mine:
            best = max(best, min(problem.heads[i] for i in mine)
                       + sum(problem.durations[i][d] for i in mine)
                       + min(problem.tails[i] for i in mine))
    return best


def per_task_bounds(problem: Problem) -> list[float]:
    """For each task, the least makespan of any schedule: head + minimum duration + tail."""
    p = problem
    return [p.heads[i] + p.min_duration[i] + p.tails[i] for i in range(len(p.tasks))]


def lower_bound(problem: Problem, *, memory: bool = True, communication: bool = True) -> float:
    """The best of the bounds above (with a workload of several inputs, the batches' bound:
    :meth:`~schedkit.problem.batches.Batches.lower_bound`).

    The bounds hold for every schedule of the problem's own semantics. A formulation that
    drops some of them solves a relaxation, whose schedules only a weaker bound holds for:
    ``memory=False`` (no static ``memory`` capacities) or ``communication=False`` (no
    transfer delays) leave out what :func:`~schedkit.problem.memory_bound.memory_bound`
    draws from them (without memory, all of it). Computed once per problem and flags.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> lower_bound(p, memory=False) <= lower_bound(p)
    True
    """
    if problem.inputs > 1:  # the bounds above count one input
        return problem.batches.lower_bound(problem)
    cache = problem.__dict__.setdefault("_lower_bounds", {})
    key = (memory, communication)
    if key not in cache:
        found = max(critical_path_bound(problem), load_bound(problem), device_bound(problem))
        if memory:
            found = max(found, memory_bound(problem, communication))
        cache[key] = found
    return cache[key]


def formulation_bound(problem: Problem, blocks) -> float:
    """:func:`lower_bound` for the schedules that satisfy a formulation's ``blocks``.

    Without a block that orders the edges (``edge_delays()`` not ``None``) nothing bounds
    the makespan: 0. Memory counts only with a block that is, or subsumes, ``memory``;
    transfers only when some block delays an edge by its data (``edge_delays()`` true).
    A formulation that drops either solves a relaxation of the problem, whose optimum may
    lie below the problem's bound: every caller that judges or solves a formulation's
    schedules asks this function, not :func:`lower_bound`.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.milp.formulation import get_formulation
    >>> p = Problem.load("examples/moirai_example1.json")
    >>> [formulation_bound(p, get_formulation(f).blocks) for f in ("latency", "jssp")]
    [28.0, 23.0]
    """
    delays = [block.edge_delays() for block in blocks]
    if all(d is None for d in delays):
        return 0.0
    kinds = {block.kind for block in blocks}.union(*(block.subsumes for block in blocks))
    return lower_bound(problem, memory="memory" in kinds, communication=any(delays))
