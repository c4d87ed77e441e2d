"""What a cut of a chain split costs the schedule: the delay its transfers add, net of slack.

:mod:`~schedkit.heuristics.chain_split` charges a cut by the data crossing it (its largest
tensor, or all of it). On a network with skip connections that over-charges a cut inside
a block: the skip tensor is made long before the task that reads it, and its transfer
runs while the stretch before the cut computes. This module charges each cut the delay a
*chain schedule* suffers there: every unit runs at its place in the order, one after the
other, by least durations (as on one device); an edge ``i -> j`` whose transfer takes
``c`` and whose ``j`` starts ``gap`` after ``i`` ends delays the tasks from ``j`` on by
``max(0, c - gap)``. A cut costs the largest such delay over the edges that cross it
(``max``: transfers at once) or their sum (``sum``: one after another), for every pair of
device classes. The edge directly at the cut has no gap: it costs its whole transfer, as
in the plain charge.

On MSR's ResNet-50 operator graph (604 tasks, 9 accelerators of 600 MB) the split charged
so is the shortest of ``chain_split``'s candidates.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.heuristics.chain_split import _CutMatrix, _units
>>> from schedkit.problem.path_split import CutCosts, device_classes
>>> p = Problem.from_dict({
...     "devices": [{"name": "a"}, {"name": "b"}],
...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
...     "tasks": [{"name": f"t{k}", "work": 1} for k in range(4)],
...     "edges": [{"src": "t0", "dst": "t1", "size": 3}, {"src": "t1", "dst": "t2", "size": 3},
...               {"src": "t2", "dst": "t3", "size": 3}, {"src": "t0", "dst": "t3", "size": 3}]})
>>> classes = device_classes(p)
>>> matrix = _CutMatrix(CutCosts(p, classes, True), len(classes))
>>> [float(d[0, 0]) for d in cut_delays(p, _units(p, [0, 1, 2, 3]), matrix, "max")]
[0.0, 3.0, 3.0, 3.0]
>>> [float(d[0, 0]) for d in cut_delays(p, _units(p, [0, 1, 2, 3]), matrix, "sum")]  # t0 -> t3: 2 of slack
[0.0, 4.0, 4.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from schedkit.problem import Problem

__all__ = ["cut_delays", "MAX_WORK"]

#: The most matrix entries the spans of the delaying edges may touch (edges times the cuts
#: each crosses times the class pairs): past it the charge is not made (``None``), and the
#: split goes by the plain charges alone.
MAX_WORK = 20_000_000


def cut_delays(p: Problem, units: list[list[int]], cut_matrix, how: str) -> list[np.ndarray] | None:
    """Per cut ``b`` (before unit ``b``), the delay matrix ``[class before, class after]``.

    Parameters
    ----------
    p : Problem
    units : list of list of int
        The order's units (a collocation group is one unit).
    cut_matrix : chain_split._CutMatrix
        ``cut_matrix(size)``: the least transfer time of ``size`` per pair of classes
        (``inf`` where the pair cannot be split); its ``inv`` and ``latency`` arrays bound
        every transfer, so that edges never late are passed over without a matrix.
    how : str
        ``max`` or ``sum`` (see the module).

    Returns
    -------
    list of numpy.ndarray or None
        One matrix per cut (the first, before unit 0, is zeros); ``None`` when the edges'
        spans are too long to charge (:data:`MAX_WORK`).
    """
    n = len(units)
    place = {i: k for k, unit in enumerate(units) for i in unit}
    # (the chain schedule: each unit after the one before it, by its least durations)
    ends = np.cumsum([sum(p.min_duration[i] for i in unit) for unit in units])
    starts = ends - [sum(p.min_duration[i] for i in unit) for unit in units]
    zero = cut_matrix(0.0)
    m = zero.shape[0]
    delays = np.zeros((n + 1, m, m))
    impossible = np.isinf(cut_matrix(1.0))
    crossed = np.zeros(n + 1)  # (edges with data over each cut: an impossible pair stays impossible)
    edges = [(place[i], place[j], size) for i, j, size in p.edges if place[i] < place[j] and size]
    if not edges:
        return list(delays[:n])
    sources, targets = (np.array(column, dtype=int) for column in list(zip(*edges))[:2])
    sizes = np.array([float(size) for _, _, size in edges])
    np.add.at(crossed, sources + 1, 1)
    np.add.at(crossed, targets + 1, -1)
    # (an edge whose slowest transfer ends before its target starts is never late: a matrix
    # per edge only for the others, a few on a large graph)
    inv, latency = _slowest(cut_matrix)
    late_ones = np.flatnonzero(sizes * inv + latency > starts[targets] - ends[sources])
    spans, work = [], 0
    for e in late_ones.tolist():
        a, b, size = edges[e]
        with np.errstate(invalid="ignore"):
            late = np.maximum(np.nan_to_num(cut_matrix(size), posinf=0.0) - (starts[b] - ends[a]), 0.0)
        if late.any():
            spans.append((a + 1, b + 1, late))
            work += (b - a) * m * m
    if work > MAX_WORK:
        return None
    for first, stop, late in spans:
        if how == "sum":
            delays[first:stop] += late
        else:
            np.maximum(delays[first:stop], late, out=delays[first:stop])
    over = np.cumsum(crossed) > 0
    delays[over] = np.where(impossible, np.inf, delays[over])
    return list(delays[:n])



def _slowest(cut_matrix) -> tuple[float, float]:
    """``(inv, latency)`` at least those of any pair of the cut matrix: ``size * inv +
    latency`` bounds every transfer it times (no time without communication)."""
    if not cut_matrix.cuts.communication:
        return 0.0, 0.0
    largest = []
    for values in (cut_matrix.inv, cut_matrix.latency):
        finite = values[np.isfinite(values)]
        largest.append(float(finite.max()) if finite.size else 0.0)
    return largest[0], largest[1]
