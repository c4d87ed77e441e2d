"""The modules of ``kedge`` on large graphs: bands of a topological order cut where fewest edges cross.

A Gomory-Hu tree (:mod:`~schedkit.decompositions.kedge_modules`) costs one max-flow per
task: about 11,000 s on 10,000 tasks. ``kedge`` solves its modules one after the other in
topological order, so each module boundary is a **down-set cut**: every task before it
runs in an earlier module. Here the cuts are taken among the prefixes of the problem's
topological order (:attr:`~schedkit.problem.Problem.topological_order`, file order among
ready tasks): the edges that cross the cut before position ``p`` are the channels between
``order[:p]`` and ``order[p:]``, counted for every ``p`` in one pass over the edges
(:func:`crossings`, numpy). :func:`band_modules` then cuts the order into about
``ceil(n / tasks)`` bands (at least enough that none exceeds ``max_share`` of the tasks),
each cut at the position of fewest crossing edges within half a band of its even
position. With ``k`` given, a cut is only made where fewer than ``k`` edges cross (DiviML:
modules joined by at most ``k - 1`` channels).

Why this and not the other ways to scale the tree (2 cores shared with other work):

- **bands** (here): linear, 0.18 s on 100,000 tasks and 223,000 edges (0.8 s more for the
  topological order, which other passes share); modules are contiguous in a topological
  order, so they form a chain (a DAG) by construction, balanced by construction, and no
  small component needs joining;
- a **Gomory-Hu tree of a contracted graph**: the tree's cost is tasks x edges
  (:func:`~schedkit.decompositions.kedge_modules.gomory_hu_seconds`), so a few seconds allow
  a graph of about 300 nodes; its k-edge components are then unions of the contraction's
  groups (the contraction, not the connectivity, decides the modules), and they still need
  joining into a DAG and balancing;
- networkx's ``k_edge_components`` (auxiliary graphs, pure Python): no answer for k = 3 within
  300 s on a layered graph of 2,500 tasks and 37,000 edges;
- the series cuts of :mod:`~schedkit.problem.series_cuts` (linear) cut only where a single
  edge or task separates the graph: a multi-channel graph has none.

On DiviML's randomly wired networks (modules laid out one after the other in the file)
the fewest crossings fall on the channels between modules, as the tree finds them.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.generators import rwnn
>>> p = Problem.from_dict(rwnn(modules=3, nodes=5, channels=2, dependency="sdep", seed=3))
>>> [len(m) for m in band_modules(p, tasks=7)]
[9, 7, 11]
"""

from __future__ import annotations

import math

import numpy as np

from schedkit.problem import Problem

__all__ = ["crossings", "band_modules"]


def crossings(problem: Problem) -> np.ndarray:
    """``c[p]``: how many edges lead from ``order[:p]`` to ``order[p:]`` of the problem's
    topological order ``order``, for ``p`` in ``0 .. n``.

    Examples
    --------
    >>> from schedkit import Problem
    >>> crossings(Problem.load("examples/tiny.yaml")).tolist()
    [0, 2, 2, 2, 1, 1, 0]
    """
    a = problem.arrays
    n = a.n
    position = np.empty(n, dtype=np.int64)
    position[np.asarray(problem.topological_order, dtype=np.int64)] = np.arange(n)
    # An edge crosses every cut after its source and up to its destination.
    change = np.bincount(position[a.edge_src] + 1, minlength=n + 1) - \
        np.bincount(position[a.edge_dst] + 1, minlength=n + 1)
    return np.cumsum(change)


def band_modules(problem: Problem, tasks: int, max_share: float = 1.0, k: int | None = None) -> list[list[int]]:
    """Bands of the topological order of about ``tasks`` tasks (none above ``max_share`` of
    them), each cut where fewest edges cross (fewer than ``k`` when given); each band a
    sorted list of tasks, in topological order.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [[p.tasks[i] for i in m] for m in band_modules(p, tasks=3)]
    [['embed', 'attn', 'mlp', 'norm'], ['logits', 'sample']]
    """
    n = len(problem.tasks)
    count = max(2, math.ceil(n / max(1, tasks)), math.ceil(1 / max_share))
    if n < 2:
        return [list(range(n))]
    target = n / count
    least = max(1, math.ceil(target / 2))
    most = max(least, min(math.floor(max_share * n), math.ceil(1.5 * target)))
    cross = crossings(problem)
    allowed = np.ones(n + 1, dtype=bool) if k is None else cross < k
    cuts, start = [0], 0
    while n - start > most:
        lo, hi = start + least, min(start + most, n - least)
        window = np.flatnonzero(allowed[lo:hi + 1]) + lo
        if window.size == 0:  # (only with k: the first cut it allows, however far)
            later = np.flatnonzero(allowed[lo:n - least + 1]) + lo
            if later.size == 0:
                break
            window = later[:1]
        # fewest crossing edges, then nearest the band's even end
        best = np.lexsort((np.abs(window - (start + target)), cross[window]))[0]
        start = int(window[best])
        cuts.append(start)
    cuts.append(n)
    order = problem.topological_order
    return [sorted(order[a:b]) for a, b in zip(cuts, cuts[1:])]
