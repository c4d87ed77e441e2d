"""Longest paths of a task graph, level by level on its arrays.

Heads, tails and HEFT's ranks are longest paths: one pass over the edges in topological
order, 300,000 edges a third of a second each in Python. Grouped by *level* (a task's
level is the longest chain of edges before it), every edge into a level leaves an earlier
one: a level's values are one numpy maximum over its incoming edges. The passes cost
O(E) numpy work plus a few calls per level; a graph deeper than a few levels per task
(a long chain) has none of this to gain, and :func:`graph_levels` answers ``None`` so
that the callers keep their scalar loops.

Each value is the float of the scalar loop (the same sums in the same order; a maximum
is exact in any order), so the ranks and bounds do not change.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> levels = graph_levels(p.arrays)
>>> [lv.tolist() for lv in levels.nodes]
[[0], [1, 2, 3, 4, 5], [6, 7, 8], [9]]
>>> longest_before(levels, p.arrays, np.array(p.min_duration)).tolist() == p.heads
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Levels(NamedTuple):
    """The tasks by level, and the edges grouped by the level of either end."""

    nodes: list
    """Per level, its tasks (increasing)."""
    into: list
    """Per level, the edges (indices into the edge arrays) whose consumer is in it."""
    out_of: list
    """Per level, the edges whose producer is in it."""


def graph_levels(arrays, most: int | None = None) -> Levels | None:
    """The tasks of ``arrays`` by level (``None`` when there are more than ``most`` levels).

    ``most``: by default ``64 + n // 16``: beyond that, per-level numpy calls cost more
    than the scalar loop they replace. Cached on ``arrays`` (``None`` included).
    """
    cache = arrays.__dict__
    if "_levels" in cache:
        return cache["_levels"]
    n = arrays.n
    most = 64 + n // 16 if most is None else most
    level = np.full(n, -1, dtype=np.int64)
    missing = np.bincount(arrays.edge_dst, minlength=n)
    frontier = np.flatnonzero(missing == 0)
    depth = 0
    ptr, dst = arrays.succ_ptr, arrays.succ_dst
    while frontier.size:
        if depth >= most:
            cache["_levels"] = None
            return None
        level[frontier] = depth
        depth += 1
        targets = dst[_ranges(ptr[frontier], ptr[frontier + 1])]
        if not targets.size:
            break
        heads, counts = np.unique(targets, return_counts=True)
        missing[heads] -= counts
        frontier = heads[missing[heads] == 0]
    order = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[order], np.arange(depth + 1))
    nodes = [order[bounds[k]:bounds[k + 1]] for k in range(depth)]
    found = Levels(nodes, _grouped(level[arrays.edge_dst], depth), _grouped(level[arrays.edge_src], depth))
    cache["_levels"] = found
    return found


def longest_before(levels: Levels, arrays, node: np.ndarray, edge: np.ndarray | None = None) -> np.ndarray:
    """``out[j] = max(0, max over inputs i of (out[i] + node[i]) + edge[i, j])``.

    Heads: ``node`` the least durations, no ``edge``. The downward rank: the mean
    durations and mean transfer times.
    """
    out = np.zeros(arrays.n)
    src, dst = arrays.edge_src, arrays.edge_dst
    for k in range(1, len(levels.nodes)):
        e = levels.into[k]
        values = out[src[e]] + node[src[e]]
        if edge is not None:
            values += edge[e]
        np.maximum.at(out, dst[e], values)
    return out


def longest_after(levels: Levels, arrays, node: np.ndarray, edge: np.ndarray | None = None) -> np.ndarray:
    """``out[i] = max(0, max over outputs j of edge[i, j] + (node[j] + out[j]))``.

    Tails: ``node`` the least durations, no ``edge``. The upward rank is ``node + out``
    with the mean durations and transfer times.
    """
    out = np.zeros(arrays.n)
    src, dst = arrays.edge_src, arrays.edge_dst
    for k in range(len(levels.nodes) - 2, -1, -1):
        e = levels.out_of[k]
        values = node[dst[e]] + out[dst[e]]
        if edge is not None:
            values = edge[e] + values
        np.maximum.at(out, src[e], values)
    return out


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(lo[k], hi[k])`` over ``k``."""
    counts = hi - lo
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    return starts + np.arange(total)


def _grouped(level_of_edge: np.ndarray, depth: int) -> list:
    """Edge indices grouped by a level per edge."""
    order = np.argsort(level_of_edge, kind="stable")
    bounds = np.searchsorted(level_of_edge[order], np.arange(depth + 1))
    return [order[bounds[k]:bounds[k + 1]] for k in range(depth)]
