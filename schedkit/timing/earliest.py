"""Earliest finish over all devices at once: the device choice of HEFT, greedy and MET.

A list scheduler that places task ``i`` by earliest finish needs, per candidate device,
when the inputs of ``i`` are there (the latest of ``end[p] + comm_time(size, device[p],
d)`` over its inputs) and the first start its timeline offers. The inputs' arrivals on
every device are one numpy expression over the task's inputs x devices
(:meth:`~schedkit.problem.arrays.ProblemArrays.arrivals`); so are the starts on every
device where the task goes after the last interval. Only a device whose last task starts
after the inputs arrive may have an idle gap that takes the task earlier: those are
searched one by one (:meth:`~schedkit.timing.resources.Timeline.earliest`), least bound
first, and only while they can still win.

The choice is the smallest ``(finish, device)`` over the candidates, each finish the
float :func:`~schedkit.timing.resources.arrival` and the timeline give: the same choice
as weighing every candidate one by one (a hypothesis test in ``tests/timing/test_list_schedule.py``
proves it).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing.resources import Timeline
>>> p = Problem.load("examples/tiny.yaml")
>>> clock = EarliestFinish(p, [Timeline() for _ in p.devices], insertion=True)
>>> clock.choose(0, [0, 1])            # 'embed' finishes first on the gpu, at 0
(0, 0.0)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from schedkit.problem import Problem
from schedkit.timing.resources import Timeline


class EarliestFinish:
    """Chooses the device of earliest finish for each task, as a list scheduler places them.

    Parameters
    ----------
    problem : Problem
    timelines : list of Timeline
        One per device, shared with the list scheduler (which adds the intervals).
    insertion : bool
        Whether a task may fill an idle gap.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing.resources import Timeline
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> lines = [Timeline() for _ in p.devices]
    >>> clock = EarliestFinish(p, lines, insertion=True)
    >>> d, t = clock.choose(0, list(p.allowed[0]))
    >>> lines[d].add(t, t + p.durations[0][d]); clock.place(0, d, t + p.durations[0][d])
    >>> d, t
    (2, 0.0)
    """

    __slots__ = ("arrays", "timelines", "insertion", "device", "end", "last_start", "last_end", "widest",
                 "first_start")

    def __init__(self, problem: Problem, timelines: list[Timeline], insertion: bool):
        self.arrays = problem.arrays
        self.timelines = timelines
        self.insertion = insertion
        n, m = self.arrays.n, self.arrays.m
        self.device = np.full(n, -1, dtype=np.int64)
        self.end = np.zeros(n)
        # Per device, its timeline's last interval (in start order), refreshed by place().
        self.last_start = np.full(m, -np.inf)
        self.last_end = np.full(m, -np.inf)
        # ... and the longest task a gap may take, and its first start: a task longer than
        # every gap and ready after the first start goes after the last one (no search).
        self.widest = np.full(m, np.inf)
        self.first_start = np.full(m, np.inf)

    def place(self, i: int, d: int, finish: float) -> None:
        """Record task ``i`` on device ``d`` ending at ``finish`` (after its timeline's ``add``)."""
        self.device[i] = d
        self.end[i] = finish
        line = self.timelines[d]
        self.last_start[d] = line.last_start
        self.last_end[d] = line.last_end
        if self.insertion:
            self.widest[d] = line.widest
            self.first_start[d] = line.first_start

    def choose(self, i: int, candidates: Sequence[int]) -> tuple[int, float]:
        """The candidate on which task ``i`` finishes first (ties: the lowest index), and its start.

        ``candidates``: devices in increasing order, each allowed and linked to the
        devices of the inputs of ``i``.
        """
        a = self.arrays
        ready = a.arrivals(i, self.device, self.end)
        lengths = a.durations_of(i)
        every = len(candidates) == a.m
        if not every:
            pick = np.asarray(candidates, dtype=np.int64)
            ready, lengths = ready[pick], lengths[pick]
            last_start, last_end = self.last_start[pick], self.last_end[pick]
            widest, first_start = self.widest[pick], self.first_start[pick]
        else:
            last_start, last_end = self.last_start, self.last_end
            widest, first_start = self.widest, self.first_start
        # Timeline.earliest without a gap: max(ready, last end) (ready on an empty device).
        finish = np.maximum(ready, last_end)
        finish += lengths
        gap = None
        if self.insertion:
            late = ready < last_start
            if late.any():  # (on many devices, most tasks: no device started after they are ready)
                late &= (lengths <= widest) | (ready < first_start)
                if late.any():
                    gap = late
        if gap is None:
            k = int(np.argmin(finish))
            return candidates[k], _start(ready[k], last_end[k])
        exact = np.where(gap, np.inf, finish)
        k = int(np.argmin(exact))
        best, chosen, at = float(exact[k]), candidates[k], None
        if best != np.inf:
            at = _start(ready[k], last_end[k])
        else:
            chosen = len(a.device_type)  # past every device: any finish wins
        # Devices that may have a gap: ready + length bounds their finish from below.
        bound = ready + lengths
        maybe = np.flatnonzero(gap & (bound <= best))
        for k in maybe[np.argsort(bound[maybe], kind="stable")]:
            d = candidates[k]
            low = bound[k]
            if low > best:
                break
            if low == best and d > chosen:
                continue
            length = float(lengths[k])
            t = self.timelines[d].earliest(float(ready[k]), length, True)
            end = t + length
            if end < best or (end == best and d < chosen):
                best, chosen, at = end, d, t
        return chosen, at


def _start(ready: float, last_end: float) -> float:
    """:meth:`Timeline.earliest` after the last interval, as a Python float."""
    ready, last_end = float(ready), float(last_end)
    return ready if ready >= last_end else last_end
