"""The task graph's derived data: closure, heads and tails, mean costs, upward and downward ranks.

Functions of a :class:`~schedkit.problem.Problem` (which caches the ones it exposes as
attributes). There is one upward rank in schedkit, Topcuoglu et al.'s (2002): a task's
mean duration over its allowed devices plus the longest path after it, an edge costing
its *mean transfer time* ``mean latency + size / mean bandwidth`` over the linked
ordered pairs of distinct allowed devices of its two ends.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> [round(r, 3) for r in upward_rank(p)][:4]
[108.0, 77.0, 80.0, 80.0]
>>> [round(r, 3) for r in downward_rank(p)][:4]
[0.0, 31.0, 25.0, 22.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from schedkit.problem.levels import graph_levels, longest_after, longest_before

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.problem.problem import Problem


def descendants(problem: Problem) -> list[int]:
    """Transitive closure as bit sets: bit ``j`` of ``descendants[i]`` is set when j follows i."""
    desc = [0] * len(problem.tasks)
    for i in reversed(problem.topological_order):
        bits = 0
        for j, _ in problem.succs[i]:
            bits |= desc[j] | (1 << j)
        desc[i] = bits
    return desc


def ancestors(problem: Problem) -> list[int]:
    """The reverse closure as bit sets: bit ``j`` of ``ancestors[i]`` is set when j precedes i."""
    anc = [0] * len(problem.tasks)
    for i in problem.topological_order:
        bits = 0
        for j, _ in problem.preds[i]:
            bits |= anc[j] | (1 << j)
        anc[i] = bits
    return anc


def heads(problem: Problem) -> list[float]:
    """Earliest start of each task: the longest chain of minimum durations before it."""
    levels = graph_levels(problem.arrays)
    if levels is not None:  # level by level on arrays: the same floats
        return longest_before(levels, problem.arrays, np.array(problem.min_duration, dtype=float)).tolist()
    head = [0.0] * len(problem.tasks)
    for i in problem.topological_order:
        for j, _ in problem.succs[i]:
            head[j] = max(head[j], head[i] + problem.min_duration[i])
    return head


def tails(problem: Problem) -> list[float]:
    """Least time between a task's end and the makespan: minimum durations after it."""
    levels = graph_levels(problem.arrays)
    if levels is not None:
        return longest_after(levels, problem.arrays, np.array(problem.min_duration, dtype=float)).tolist()
    tail = [0.0] * len(problem.tasks)
    for i in reversed(problem.topological_order):
        for j, _ in problem.succs[i]:
            tail[i] = max(tail[i], problem.min_duration[j] + tail[j])
    return tail


def device_heads_tails(problem: Problem, communication: bool = True) -> tuple[list[dict], list[dict]]:
    """Heads and tails of each task on each allowed device, transfers included.

    ``head[j][d]``: earliest start of ``j`` when it runs on ``d``; every predecessor
    ``i`` ends on its best device ``u`` and its data travels from ``u`` to ``d``.
    ``tail[i][d]``: least time from the end of ``i`` on ``d`` to the makespan, the
    mirror. Both are at least the device-free heads and tails.
    """
    p = problem

    def move(size, u, v):
        return p.comm_time(size, u, v) if communication else 0.0

    def reachable(size, u, v):
        return not communication or p.pair_allowed(size, u, v)

    head = [{d: p.heads[j] for d in p.allowed[j]} for j in range(len(p.tasks))]
    for j in p.topological_order:
        for i, size in p.preds[j]:
            for d in head[j]:
                best = min((head[i][u] + p.durations[i][u] + move(size, u, d)
                            for u in p.allowed[i] if reachable(size, u, d)), default=head[j][d])
                head[j][d] = max(head[j][d], best)
    tail = [{d: p.tails[i] for d in p.allowed[i]} for i in range(len(p.tasks))]
    for i in reversed(p.topological_order):
        for j, size in p.succs[i]:
            for d in tail[i]:
                best = min((move(size, d, v) + p.durations[j][v] + tail[j][v]
                            for v in p.allowed[j] if reachable(size, d, v)), default=tail[i][d])
                tail[i][d] = max(tail[i][d], best)
    return head, tail


def mean_costs(problem: Problem) -> tuple[list[float], list[float]]:
    """Mean task durations and mean edge transfer times (in ``problem.edges`` order).

    A task's mean duration is over its allowed devices. An edge's mean transfer time is
    ``mean latency + size / mean bandwidth`` over the linked ordered pairs of distinct
    allowed devices of its two ends (Topcuoglu et al. 2002); 0 when there is no such
    pair or no data. Computed once per problem (every rank and partitioner asks for it);
    each call returns fresh lists.

    Examples
    --------
    >>> from schedkit import Problem
    >>> cost, comm = mean_costs(Problem.load("examples/tiny.yaml"))
    >>> cost[0], round(comm[0], 4)       # embed: (0.4 + 1.8) / 2; 4e6 / 1.6e7 + 0.01
    (1.1, 0.26)
    """
    cache = problem.__dict__
    if "_mean_costs" not in cache:
        # Kept as arrays for the rest of the run: 14 MB at 1.8 million edges, where a list
        # of floats is 70 MB (each call makes its lists, the same floats).
        cost, comm = _mean_costs(problem)
        cache["_mean_costs"] = np.array(cost, dtype=np.float64), comm
    cost, comm = cache["_mean_costs"]
    return cost.tolist(), comm.tolist()


def _mean_costs(p) -> tuple[list[float], np.ndarray]:
    cost = _mean_durations(p.arrays)
    # Most tasks share a few allowed-device sets: cache both means per pair of sets. The
    # sets are numbered once per task, since hashing two device tuples per edge costs
    # several times the rest of the loop on large graphs.
    # Tasks keyed by type share one tuple of 1,024 devices: numbered by identity first
    # (a tuple does not keep its hash).
    number: dict[tuple[int, ...], int] = {}
    by_id: dict[int, int] = {}
    kind = []
    for a in p.allowed:
        k = by_id.get(id(a))
        if k is None:
            k = by_id[id(a)] = number.setdefault(a, len(number))
        kind.append(k)
    sets = [np.array(a, dtype=np.int64) for a in number]
    # The pairs of sets the edges join, once each: numbered on the arrays.
    arrays = p.arrays
    kinds = np.array(kind, dtype=np.int64)
    key = kinds[arrays.edge_src] * len(sets) + kinds[arrays.edge_dst]
    if len(sets) <= 2048:  # few pairs of sets: numbered by a table, not by sorting every edge
        present = np.zeros(len(sets) * len(sets), dtype=bool)
        present[key] = True
        pair_keys = np.flatnonzero(present)
        number_of = np.zeros(len(present), dtype=np.int64)
        number_of[pair_keys] = np.arange(len(pair_keys))
        which = number_of[key]
    else:
        pair_keys, which = np.unique(key, return_inverse=True)
    inv = np.zeros(len(pair_keys))
    lat = np.zeros(len(pair_keys))
    for k, joined in enumerate(pair_keys.tolist()):
        first, second = sets[joined // len(sets)], sets[joined % len(sets)]
        # The linked pairs of distinct devices, u then v in increasing order; a running sum
        # (cumsum) adds them in that order, as a loop over the pairs would.
        pairs = arrays.linked[np.ix_(first, second)] & (first[:, None] != second[None, :])
        count = int(pairs.sum())
        if count:
            mean_bandwidth = np.cumsum(1.0 / arrays.inv_bandwidth[np.ix_(first, second)][pairs])[-1] / count
            inv[k] = 1.0 / mean_bandwidth
            lat[k] = np.cumsum(arrays.latency[np.ix_(first, second)][pairs])[-1] / count
    inv, lat = inv[which.reshape(-1)], lat[which.reshape(-1)]
    size = arrays.edge_size
    comm = np.where((size != 0) & ((inv != 0) | (lat != 0)), size * inv + lat, 0.0)
    return cost, comm


def _mean_durations(arrays) -> list[float]:
    """Each task's mean duration over its allowed devices, summed in device order as
    ``sum(durations[i].values())`` sums them (a running sum: adding 0.0 elsewhere changes
    nothing), one column of every task at a time: a device adds its type's column, so
    1,024 devices of 3 types read 3 columns, not a tasks x devices table."""
    table = arrays.type_durations
    allowed = np.isfinite(table)
    columns = [np.where(allowed[:, t], table[:, t], 0.0) for t in range(arrays.types)]
    total = np.zeros(arrays.n)
    for t in arrays.device_type.tolist():
        total += columns[t]
    count = allowed.astype(np.int64) @ np.bincount(arrays.device_type, minlength=arrays.types)
    return (total / count).tolist()


def costed_paths(order, cost, edges) -> tuple[dict, dict]:
    """The longest costed paths before and after every node of a DAG.

    The one definition of the ranks: :func:`upward_rank` and :func:`downward_rank` apply it
    to a problem, ``merge`` to its coarse graph while merging.

    Parameters
    ----------
    order : sequence of int
        The nodes in topological order.
    cost : mapping or sequence
        ``cost[i]``: a node's cost.
    edges : iterable of (int, int, float)
        ``(i, j, c)``: an edge and the cost of crossing it.

    Returns
    -------
    (down, up) : (dict, dict)
        ``down[i]``: the longest path before ``i`` (its cost excluded); ``up[i]``: the
        longest from ``i`` on (its cost included). ``down[i] + up[i]`` is the longest path
        through ``i``.

    Examples
    --------
    >>> down, up = costed_paths([0, 1, 2], [1.0, 2.0, 3.0], [(0, 2, 0.5), (1, 2, 0.0)])
    >>> down, up
    ({0: 0.0, 1: 0.0, 2: 2.0}, {2: 3.0, 1: 5.0, 0: 4.5})
    """
    ins: dict[int, list] = {i: [] for i in order}
    outs: dict[int, list] = {i: [] for i in order}
    for i, j, c in edges:
        outs[i].append((j, c))
        ins[j].append((i, c))
    down: dict[int, float] = {}
    for j in order:
        down[j] = max((down[i] + cost[i] + c for i, c in ins[j]), default=0.0)
    up: dict[int, float] = {}
    for i in reversed(order):
        up[i] = cost[i] + max((c + up[j] for j, c in outs[i]), default=0.0)
    return down, up


def upward_rank(problem: Problem, costs: str = "mean") -> list[float]:
    """HEFT's upward rank: a task's cost plus the longest costed path after it.

    Parameters
    ----------
    costs : {"mean", "min"}
        ``mean``: :func:`mean_costs` (Topcuoglu et al. 2002); ``min``: shortest
        duration, no transfer.
    """
    p = problem
    if costs == "mean":
        cost, comm = mean_costs(p)
    elif costs == "min":
        cost, comm = list(p.min_duration), [0.0] * len(p.arrays.edge_src)
    else:
        raise ValueError(f"unknown costs {costs!r} (mean or min)")
    levels = graph_levels(p.arrays)
    if levels is not None:  # level by level on arrays: the same floats
        node = np.array(cost, dtype=float)
        return (node + longest_after(levels, p.arrays, node, np.array(comm, dtype=float))).tolist()
    _, up = costed_paths(p.topological_order, cost, ((i, j, c) for (i, j, _), c in zip(p.edges, comm)))
    return [up[i] for i in range(len(p.tasks))]


def downward_rank(problem: Problem) -> list[float]:
    """The longest mean-cost path before each task (its own cost excluded)."""
    p = problem
    cost, comm = mean_costs(p)
    levels = graph_levels(p.arrays)
    if levels is not None:
        return longest_before(levels, p.arrays, np.array(cost, dtype=float), np.array(comm, dtype=float)).tolist()
    down, _ = costed_paths(p.topological_order, cost, ((i, j, c) for (i, j, _), c in zip(p.edges, comm)))
    return [down[i] for i in range(len(p.tasks))]
