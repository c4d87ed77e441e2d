"""Where a task graph is cut into a chain of modules: bridges and articulation tasks every
input-to-output path crosses.

A **bridge** of the undirected graph ``a -> b`` cuts it when its tail ``a`` follows every task
before it and its head ``b`` precedes every task after it; an **articulation task** ``x`` cuts it
when every other task is before or after it and no edge jumps over it. Between two cuts lies a
**module**, which in any schedule runs after the module before it. ``bridge_dp`` (a DP over the
devices at the cuts) and ``auto``'s ``series`` phase (the same chain under timing rules that
bridge_dp refuses) both read the chain from here.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> groups, cuts = modules(p, chain_cuts(p))
>>> [[p.tasks[i] for i in g] for g in groups][-1], len(cuts)
(['sample'], 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from schedkit.problem.edge_table import edge_columns
from schedkit.problem.problem import Problem

__all__ = ["Cut", "TWIN", "chain_cuts", "modules"]

TWIN = "~twin"
"""Suffix of an articulation task's twin: the stand-in of duration 0 on its device that starts
the module after it (a name no task of the problem may already use)."""


@dataclass(frozen=True)
class Cut:
    """Where the chain is cut: the bridge ``tail -> head``, or the articulation task
    ``tail == head`` (twinned); the tail's side is the first ``before`` tasks of the
    problem's topological order (the tail included)."""

    tail: int
    head: int
    size: float
    before: int  # how many tasks are on the tail's side: a prefix of any topological order

    @property
    def twin(self) -> bool:
        return self.tail == self.head


def chain_cuts(problem: Problem) -> list[Cut]:
    """The bridges and articulation points every input-to-output path crosses, in order.

    In time linear in tasks and edges, on one topological order: a cut's tail side is every
    task before it in *any* topological order (ancestors come first, descendants after), so
    a position ``k`` is an articulation task when no edge jumps over it, no task before it
    is a sink and none after it a source; a bridge ``order[k] -> order[k + 1]`` when it is
    the one edge that crosses between them, with the same conditions on either side. (The
    closure of a 100,000-task graph as bit sets took gigabytes.)

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [(p.tasks[c.tail], p.tasks[c.head]) for c in chain_cuts(p)]
    [('norm', 'logits'), ('logits', 'sample')]
    """
    n = len(problem.tasks)
    if n < 2:
        return []
    columns = edge_columns(problem.spec, problem.tasks)
    if columns is None:
        edges = problem.edges
        src = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((e[1] for e in edges), dtype=np.int64, count=len(edges))
        size = np.fromiter((float(e[2]) for e in edges), dtype=np.float64, count=len(edges))
    else:
        src, dst, size = columns
    if len(src) < n - 1 or _components(n, src, dst) != 1:
        return []
    order = np.asarray(problem.topological_order, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    ps, pd = pos[src], pos[dst]
    # crossing[k]: edges from a position <= k to one > k (k = 0 .. n - 2)
    crossing = np.cumsum(np.bincount(ps, minlength=n) - np.bincount(pd, minlength=n))[:-1]
    out_degree, in_degree = np.bincount(src, minlength=n), np.bincount(dst, minlength=n)
    sink_at, source_at = (out_degree[order] == 0), (in_degree[order] == 0)
    # no sink strictly before position k; no source strictly after it
    sink_before = np.concatenate(([False], np.logical_or.accumulate(sink_at)[:-1]))
    source_after = np.concatenate((np.logical_or.accumulate(source_at[::-1])[::-1][1:], [False]))
    sides_hold = ~sink_before & ~source_after
    cuts, ends = [], set()
    # A bridge at boundary k: one crossing edge, from order[k] to order[k + 1]; no sink on
    # the tail's side (positions <= k) and no source on the head's side (positions > k).
    single = np.flatnonzero(crossing == 1)
    if len(single):
        adjacent = {(int(a), int(b)): float(s) for a, b, s in zip(ps[pd - ps == 1], pd[pd - ps == 1],
                                                                   size[pd - ps == 1])}
        for k in single.tolist():
            if (k, k + 1) in adjacent and sides_hold[k] and sides_hold[k + 1]:
                a, b = int(order[k]), int(order[k + 1])
                cuts.append(Cut(a, b, adjacent[k, k + 1], k + 1))
                ends.update((a, b))
    # An articulation task at position k: nothing jumps over it (the edges crossing into it are
    # its inputs), and it separates something on both sides, or splits the side it has.
    jumps = np.concatenate(([0], crossing)) - in_degree[order]
    for k in np.flatnonzero((jumps == 0) & sides_hold).tolist():
        x = int(order[k])
        if x in ends:
            continue
        if (k == 0 or k == n - 1) and _components(n, src, dst, without=x) < 2:
            continue  # the first or last task: a cut only where it is an articulation point
        cuts.append(Cut(x, x, 0.0, k + 1))
    return sorted(cuts, key=lambda c: c.before)


def _components(n: int, src: np.ndarray, dst: np.ndarray, without: int | None = None) -> int:
    """Connected components of the undirected task graph (without task ``without``)."""
    if without is not None:
        keep = (src != without) & (dst != without)
        src, dst = src[keep], dst[keep]
    graph = coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    count, _ = connected_components(graph, directed=False)
    return count - (without is not None)


def modules(problem: Problem, cuts: list[Cut], min_tasks: int = 1) -> tuple[list[list[int]], list[Cut]]:
    """The tasks of every module between the ``cuts`` (joining modules smaller than
    ``min_tasks`` with the next one), and the cuts kept."""
    order = problem.topological_order
    kept, groups, start = [], [], 0
    for cut in cuts:
        if cut.before - start >= min_tasks:
            groups.append(order[start:cut.before])
            kept.append(cut)
            start = cut.before
    last = order[start:]
    if len(last) < min_tasks and groups:
        groups[-1] = groups[-1] + last
        kept.pop()
    else:
        groups.append(last)
    return [sorted(g) for g in groups], kept
