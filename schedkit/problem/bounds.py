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

import math

import networkx as nx
import numpy as np

from schedkit.problem.edge_table import edge_count
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
    # On the arrays, one device type at a time: devices of a type share a duration column,
    # and for durations t >= 0 the least ``c_d * t`` over them is ``(least c_d) * t``, the
    # same float (rounding is monotone). The sum runs in task order (cumsum), as a loop would.
    a = problem.arrays
    c = np.asarray(weights, dtype=float)
    allowed = np.isfinite(a.type_durations).any(axis=0)[a.device_type]  # some task may use it
    used = allowed & (c > 0)
    if not used.any():
        return 0.0
    least_c = np.full(a.types, np.inf)
    np.minimum.at(least_c, a.device_type[used], c[used])
    kinds = np.flatnonzero(least_c < np.inf)
    with np.errstate(invalid="ignore"):
        weighted = a.type_durations[:, kinds] * least_c[kinds]
    best = weighted.min(axis=1, initial=np.inf)
    best[best == np.inf] = 0.0
    counted = best[np.asarray(problem.min_duration) > 0]
    work = float(np.cumsum(counted)[-1]) if len(counted) else 0.0
    # The divisor as the loop summed it: over a set filled in the order the tasks name the
    # devices (a set's order of iteration may depend on it), that is by first task, then index.
    first = np.isfinite(a.type_durations).argmax(axis=0)[a.device_type]
    named = [d for _, d in sorted(zip(first[used].tolist(), np.flatnonzero(used).tolist()))]
    return work / sum(weights[d] for d in set(named))


def _inverse_slowness(problem: Problem) -> list[float]:
    """Per device, 1 / its median ratio of duration to the task's least duration (0: no task)."""
    # Per device type: its devices share their durations, hence their ratios.
    a = problem.arrays
    least = np.asarray(problem.min_duration, dtype=float)
    positive = least > 0
    table = a.type_durations[positive]
    least = least[positive]
    per_type = []
    for k in range(a.types):
        column = table[:, k]
        values = np.sort(column[np.isfinite(column)] / least[np.isfinite(column)])
        per_type.append(1.0 / float(values[len(values) // 2]) if len(values) else 0.0)
    return [per_type[k] for k in a.device_type.tolist()]


def device_bound(problem: Problem) -> float:
    """One-device bound: the tasks bound to a device run one after another on it.

    For every device, the tasks that may run only there take at least the
    smallest head among them, plus their durations, plus the smallest tail.
    """
    best = 0.0
    alone: dict[int, list[int]] = {}  # the tasks that may run on one device only, by device
    for i, allowed in enumerate(problem.allowed):
        if len(allowed) == 1:
            alone.setdefault(allowed[0], []).append(i)
    for d in range(len(problem.devices)):
        mine = alone.get(d)
        if mine:
            best = max(best, min(problem.heads[i] for i in mine)
                       + sum(problem.durations[i][d] for i in mine)
                       + min(problem.tails[i] for i in mine))
    return best


def split_bound(problem: Problem) -> float:
    """One device, or a transfer: a bound for graphs whose transfers cost more than their work.

    In a schedule of a weakly connected task graph, either every task runs on one device
    ``d`` (the makespan is at least the sum of their durations there), or some edge
    ``i -> j`` joins two devices ``u != v``: ``j`` then starts no earlier than ``i`` ends
    plus the transfer from ``u`` to ``v`` (a transfer that waits for a channel or a port
    only takes longer), and the makespan is at least ``head(i, u) + p(i, u) + com(u, v) +
    p(j, v) + tail(j, v)`` (heads and tails per device, transfers included:
    :meth:`~schedkit.problem.Problem.device_heads_tails`). The bound is the least of the
    one-device sums and these edge sums; 0 for a graph that is not connected. It bites where
    a module's transfers take longer than running it on one device (MOIRAI's Inception-v4:
    a tensor moves in 1.2 s, a module of 33 tasks runs in 0.5 s).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({
    ...     "devices": [{"name": "a"}, {"name": "b"}],
    ...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
    ...     "tasks": [{"name": f"t{k}", "work": 1} for k in range(3)],
    ...     "edges": [{"src": "t0", "dst": "t1", "size": 5}, {"src": "t0", "dst": "t2", "size": 5}]})
    >>> split_bound(p), critical_path_bound(p)     # 3 on one device; else a 5 s transfer
    (3.0, 2.0)
    """
    p = problem
    n = len(p.tasks)
    if n == 0 or not nx.is_weakly_connected(p.graph):
        return 0.0
    one = min((sum(p.durations[i][d] for i in range(n)) for d in range(len(p.devices))
               if all(d in p.allowed[i] for i in range(n))), default=math.inf)
    head, tail = p.device_heads_tails()
    split = math.inf
    for i, j, size in p.edges:
        for u in p.allowed[i]:
            for v in p.allowed[j]:
                if u != v and p.pair_allowed(size, u, v):
                    split = min(split, head[i][u] + p.durations[i][u] + p.comm_time(size, u, v)
                                + p.durations[j][v] + tail[j][v])
    found = min(one, split)
    return found if math.isfinite(found) else 0.0


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
    the makespan: 0, unless the problem has no edge at all (a block that orders edges then
    does not apply, and has nothing to order) and a block keeps tasks apart on a device
    (``no_overlap``): the bounds then count durations and loads only, which hold. Memory
    counts only with a block that is, or subsumes, ``memory``;
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
    kinds = {block.kind for block in blocks}.union(*(block.subsumes for block in blocks))
    if all(d is None for d in delays) and (edge_count(problem) or "no_overlap" not in kinds):
        return 0.0
    return lower_bound(problem, memory="memory" in kinds, communication=any(delays))
