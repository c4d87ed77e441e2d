"""Resources over time: the busy intervals of a device (or, next, a channel), and arrivals.

Every timing engine places work on a :class:`Timeline` and lets data arrive by
:func:`arrival` (that is, by :meth:`~schedkit.problem.Problem.comm_time`); the only
other copies are the specialised loops of :class:`~schedkit.timing.ordered.OrderedTiming`
(a precomputed transfer table) and the MITE partitioner's traffic table, which
hypothesis tests prove equal to these.

Examples
--------
>>> line = Timeline()
>>> line.add(0.0, 2.0); line.add(5.0, 6.0)
>>> line.earliest(1.0, 3.0, insertion=True)     # the gap [2, 5) holds 3 units
2.0
>>> line.earliest(1.0, 3.5, insertion=True)     # too long for the gap: after the last
6.0
>>> line.earliest(1.0, 1.0, insertion=False)    # no insertion: after the last interval
6.0
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from schedkit.numerics import GAP_SLACK

_FANOUT = 64
"""Most entries of a node of the gap index (a leaf's intervals, an inner node's children)."""
_INF = math.inf


class Timeline:
    """Busy intervals of one resource, sorted by start, for insertion-based scheduling.

    :meth:`earliest` places an interval in the first idle gap that holds it (or after
    the last interval), the rule of the linear scan :func:`first_fit_scan`. A scan costs
    O(n) on a packed resource, so list scheduling with insertion was quadratic; the
    *gap index* answers the same question in O(log n): a B-tree of the intervals in
    start order whose nodes know the largest gap after an interval below them and the
    latest end below them, so a search skips every subtree whose gaps are all too short.
    Each gap the index finds is checked by the scan's own float comparison, with the
    scan's running latest end, so both give the same start, float for float (a hypothesis
    test in ``tests/timing/test_list_schedule.py`` proves it, overlapping intervals
    included).

    Parameters
    ----------
    index : bool
        Keep the gap index (default). ``False``: two sorted lists and the scan, cheaper
        when :meth:`earliest` is never asked to insert.

    Attributes
    ----------
    count : int
        Number of intervals.
    last_start, last_end : float
        The last interval in start order (``-inf`` while empty).
    max_end : float
        The latest end (``last_end`` unless intervals overlap; ``-inf`` while empty).

    Examples
    --------
    >>> line = Timeline()
    >>> for k in range(1000):
    ...     line.add(2.0 * k, 2.0 * k + 1.5)          # a 0.5 gap after every interval
    >>> line.earliest(3.0, 0.5, insertion=True), line.earliest(3.0, 0.6, insertion=True)
    (3.5, 1999.5)
    >>> line.starts[:3], line.count
    ([0.0, 2.0, 4.0], 1000)
    """

    __slots__ = ("count", "last_start", "last_end", "max_end", "_root", "_flat")

    def __init__(self, index: bool = True):
        self.count = 0
        self.last_start = self.last_end = self.max_end = -_INF
        self._root: _Leaf | _Inner | None = _Leaf([], [], [], []) if index else None
        self._flat: tuple[list[float], list[float]] | None = None if index else ([], [])

    @property
    def indexed(self) -> bool:
        """Whether the gap index is kept (else :meth:`earliest` scans)."""
        return self._root is not None

    @property
    def starts(self) -> list[float]:
        """Starts of the intervals, sorted (a copy)."""
        return list(self._flat[0]) if self._root is None else _collect(self._root, "starts")

    @property
    def ends(self) -> list[float]:
        """Ends of the intervals, in the order of their starts (a copy)."""
        return list(self._flat[1]) if self._root is None else _collect(self._root, "ends")

    @property
    def first_start(self) -> float:
        """Start of the first interval (``inf`` while empty)."""
        if not self.count:
            return _INF
        return self._flat[0][0] if self._root is None else _first_start(self._root)

    @property
    def widest(self) -> float:
        """An upper bound of the lengths that fit a gap after an interval.

        An interval longer than ``widest``, ready at or after :attr:`first_start`, goes
        after the last interval: :meth:`earliest` gives ``max(ready, last_end)``. ``-inf``
        when no gap is left, ``inf`` when unknown (no index, or overlapping intervals).
        """
        root = self._root
        if root is None or root.hi != self.last_end:
            return _INF
        if root.top == -_INF:
            return -_INF
        # Above the index's tolerance for rounding (see ``earliest``), by a wide margin.
        return root.top + 1e-12 * (abs(_first_start(root)) + abs(self.last_start) + abs(root.hi)
                                   + abs(root.top) + 1.0)

    def earliest(self, ready: float, length: float, insertion: bool) -> float:
        """Earliest start at or after ``ready`` of an interval of ``length``.

        With ``insertion`` the interval may fill an idle gap between busy intervals;
        without, it goes after the last one. O(log n) with the index (more when
        intervals overlap: a gap the index offers may then be refused); O(1) without
        insertion, when ``ready`` is at or after the last start, or when no gap is wide
        enough.
        """
        if not self.count:
            return ready
        if not insertion or ready >= self.last_start:
            return max(ready, self.last_end)
        root = self._root
        if root is None:
            return first_fit_scan(self._flat[0], self._flat[1], ready, length)
        first = _first_start(root)
        if ready < first and ready + length <= first + GAP_SLACK:
            return ready
        # The index keeps each gap as ``next start + slack - end``: rounding may leave it
        # short of ``length`` by a few ulps where the scan's comparison still fits, so the
        # index looks for gaps a little shorter than ``length`` and the scan's check decides.
        wanted = length - 1e-15 * (abs(first) + abs(self.last_start) + abs(root.hi) + abs(length) + 1.0)
        if root.top < wanted and root.hi == self.last_end:
            # No gap holds it: after the last interval, which also ends last.
            return max(ready, self.last_end)
        path = []
        node = root
        while type(node) is _Inner:
            c = max(bisect_right(node.firsts, ready) - 1, 0)
            path.append((node, c))
            node = node.children[c]
        # From the last interval starting at or before ``ready`` on, as the scan goes.
        t, hi = _fit(node, max(bisect_right(node.starts, ready) - 1, 0), ready, length, wanted, -_INF)
        if t is not None:
            return t
        for parent, c in reversed(path):
            if c + 1 == len(parent.children):
                continue
            if max(parent.tops[c + 1:]) >= wanted:
                t, hi = _fit(parent, c + 1, ready, length, wanted, hi)
                if t is not None:
                    return t
            else:
                hi = max(hi, max(parent.his[c + 1:]))
        return max(ready, hi)

    def add(self, start: float, end: float) -> None:
        """Mark ``[start, end)`` busy."""
        # Keep the ends sorted too (as far as the slack lets): an empty interval goes
        # before the intervals that start at the same time, not after them.
        place = bisect_left if end <= start else bisect_right
        if end > self.max_end:
            self.max_end = end
        if self._root is None:
            starts, ends = self._flat
            k = place(starts, start)
            starts.insert(k, start)
            ends.insert(k, end)
            if k == self.count:
                self.last_start, self.last_end = start, end
            self.count += 1
            return
        path = []
        node = self._root
        last = True
        while type(node) is _Inner:
            c = max(place(node.firsts, start) - 1, 0)
            last = last and c + 1 == len(node.children)
            path.append((node, c))
            node = node.children[c]
        leaf = node
        # Descending to the last child whose first start is at most ``start`` (for
        # bisect_left: below it) finds the leaf of its predecessor: only the leftmost leaf
        # inserts at position 0 (before every interval), so neighbours are in this leaf.
        j = place(leaf.starts, start)
        size = len(leaf.starts)
        last = last and j == size
        widened = start + GAP_SLACK
        if j:
            successor = leaf.nexts[j - 1]
            leaf.nexts[j - 1] = widened
            leaf.keys[j - 1] = widened - leaf.ends[j - 1]
        else:
            successor = leaf.starts[0] + GAP_SLACK if size else _INF
        leaf.starts.insert(j, start)
        leaf.ends.insert(j, end)
        leaf.nexts.insert(j, successor)
        leaf.keys.insert(j, -_INF if last else successor - end)
        leaf.top = max(leaf.keys)
        if end > leaf.hi:
            leaf.hi = end
        self.count += 1
        if last:
            self.last_start, self.last_end = start, end
        self._update(path, leaf)

    def _update(self, path: list, node) -> None:
        # Refresh the changed node's entries in its ancestors, splitting full nodes.
        sibling = _split(node) if _entries(node) > _FANOUT else None
        for parent, c in reversed(path):
            first = _first_start(node)
            if (sibling is None and parent.tops[c] == node.top and parent.his[c] == node.hi
                    and parent.firsts[c] == first):
                return
            parent.tops[c], parent.his[c], parent.firsts[c] = node.top, node.hi, first
            if sibling is not None:
                parent.children.insert(c + 1, sibling)
                parent.tops.insert(c + 1, sibling.top)
                parent.his.insert(c + 1, sibling.hi)
                parent.firsts.insert(c + 1, _first_start(sibling))
            parent.top = max(parent.tops)
            parent.hi = max(parent.his)
            sibling = _split(parent) if len(parent.children) > _FANOUT else None
            node = parent
        if sibling is not None:
            self._root = _Inner([node, sibling])


class _Leaf:
    """Consecutive intervals: starts, ends, the next interval's start plus the slack
    (``nexts``; inf after the last) and the gap after each (``keys``; -inf after the
    last); ``top`` and ``hi`` are the largest key and the latest end."""

    __slots__ = ("starts", "ends", "nexts", "keys", "top", "hi")

    def __init__(self, starts: list, ends: list, nexts: list, keys: list):
        self.starts, self.ends, self.nexts, self.keys = starts, ends, nexts, keys
        self.top = max(keys, default=-_INF)
        self.hi = max(ends, default=-_INF)


class _Inner:
    """Consecutive subtrees with their first starts, largest gaps (``tops``) and latest
    ends (``his``); ``top`` and ``hi`` are the largest of these."""

    __slots__ = ("children", "firsts", "tops", "his", "top", "hi")

    def __init__(self, children: list):
        self.children = children
        self.firsts = [_first_start(child) for child in children]
        self.tops = [child.top for child in children]
        self.his = [child.hi for child in children]
        self.top = max(self.tops)
        self.hi = max(self.his)


def _fit(node, begin: int, ready: float, length: float, wanted: float, hi: float):
    """The scan from entry ``begin`` of a subtree, entered with the latest end ``hi`` so
    far: ``(start, hi)`` at the first gap that holds ``length``, else ``(None, hi)``."""
    if type(node) is _Inner:
        for k in range(begin, len(node.children)):
            if node.tops[k] >= wanted:
                t, hi = _fit(node.children[k], 0, ready, length, wanted, hi)
                if t is not None:
                    return t, hi
            elif node.his[k] > hi:
                hi = node.his[k]
        return None, hi
    ends = node.ends
    if node.top >= wanted:
        keys, nexts = node.keys, node.nexts
        for k in range(begin, len(keys)):
            if ends[k] > hi:
                hi = ends[k]
            if keys[k] >= wanted:
                t = max(ready, hi)
                if t + length <= nexts[k]:
                    return t, hi
        return None, hi
    return None, max(hi, max(ends[begin:]))


def _entries(node) -> int:
    return len(node.starts) if type(node) is _Leaf else len(node.children)


def _first_start(node) -> float:
    return node.starts[0] if type(node) is _Leaf else node.firsts[0]


def _split(node):
    """Move the second half of a full node into a new sibling, returned."""
    half = _entries(node) // 2
    if type(node) is _Leaf:
        sibling = _Leaf(node.starts[half:], node.ends[half:], node.nexts[half:], node.keys[half:])
        for values in (node.starts, node.ends, node.nexts, node.keys):
            del values[half:]
        node.top, node.hi = max(node.keys), max(node.ends)
    else:
        sibling = _Inner(node.children[half:])
        for values in (node.children, node.firsts, node.tops, node.his):
            del values[half:]
        node.top, node.hi = max(node.tops), max(node.his)
    return sibling


def _collect(node, field: str) -> list[float]:
    if type(node) is _Leaf:
        return list(getattr(node, field))
    return [value for child in node.children for value in _collect(child, field)]


def first_fit_scan(starts: list[float], ends: list[float], ready: float, length: float) -> float:
    """The first-fit rule, by a linear scan of sorted intervals (the reference of the index).

    The earliest ``t >= ready`` such that ``[t, t + length)`` ends by the start of the
    next interval (within :data:`~schedkit.numerics.GAP_SLACK`), else after the last one.

    Examples
    --------
    >>> first_fit_scan([0.0, 5.0], [2.0, 6.0], 1.0, 3.0), first_fit_scan([0.0, 5.0], [2.0, 6.0], 1.0, 4.0)
    (2.0, 6.0)
    """
    if not starts:
        return ready
    k = bisect_right(starts, ready)
    # The slot may begin inside the gap before interval k.
    t = max(ready, ends[k - 1]) if k > 0 else ready
    while k < len(starts):
        if t + length <= starts[k] + GAP_SLACK:
            return t
        t = max(t, ends[k])
        k += 1
    return t


def arrival(problem, end: float, size: float, source: int, target: int) -> float:
    """When data of ``size`` produced at ``end`` on device ``source`` is on ``target``.

    The one transfer rule: ``end`` plus :meth:`~schedkit.problem.Problem.comm_time`
    (0 on one device or for no data).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> gpu, cpu = p.device_index["gpu0"], p.device_index["cpu"]
    >>> arrival(p, 2.0, 4e6, gpu, gpu), round(arrival(p, 2.0, 4e6, gpu, cpu), 4)
    (2.0, 2.26)
    """
    return end + problem.comm_time(size, source, target)
