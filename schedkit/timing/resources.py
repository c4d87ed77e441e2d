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

from bisect import bisect_left, bisect_right

from schedkit.numerics import GAP_SLACK


class Timeline:
    """Busy intervals of one resource, sorted, for insertion-based scheduling."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []

    def earliest(self, ready: float, length: float, insertion: bool) -> float:
        """Earliest start at or after ``ready`` of an interval of ``length``.

        With ``insertion`` the interval may fill an idle gap between busy intervals;
        without, it goes after the last one.
        """
        if not self.starts:
            return ready
        if not insertion:
            return max(ready, self.ends[-1])
        k = bisect_right(self.starts, ready)
        # The slot may begin inside the gap before interval k.
        t = max(ready, self.ends[k - 1]) if k > 0 else ready
        while k < len(self.starts):
            if t + length <= self.starts[k] + GAP_SLACK:
                return t
            t = max(t, self.ends[k])
            k += 1
        return t

    def add(self, start: float, end: float) -> None:
        """Mark ``[start, end)`` busy."""
        # Keep the ends sorted too (``earliest`` relies on it): an empty interval goes
        # before the intervals that start at the same time, not after them.
        k = bisect_left(self.starts, start) if end <= start else bisect_right(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


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
