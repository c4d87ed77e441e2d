"""Method ``heft``: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu 2002).

Priority: the upward rank with mean costs,
``rank(i) = mean_d w(i, d) + max over successors j of (c(i, j) + rank(j))``, where
``w(i, d)`` are the durations on the task's allowed devices and ``c(i, j)`` is the
edge's transfer time averaged over the linked pairs of *distinct* allowed devices
(``mean(latency) + size / mean(bandwidth)``, as in the paper; see
:func:`schedkit.problem.graph.upward_rank`). Tasks go in decreasing rank, equal ranks
in file order. Device: the earliest finish time, with insertion into idle gaps;
equal finishes go to the lowest device index. A collocation group is placed as one unit
by its first task, on the device where the whole group would finish first (its members'
summed durations, after the inputs already known), and keeps room for the units to come
that only limited devices hold (see :class:`~schedkit.heuristics.list_scheduling.ListSchedulingMethod`). Insertion finds the first gap that holds
a task in O(log n) on a device of n tasks (see :class:`~schedkit.timing.Timeline`), so
HEFT stays O((V + E) log V) plus the weighing of devices, on any graph size.

With these tie-breaks the paper's sample graph gets the published makespan, 80
(the paper's order n1, n3, n4, n2, n5, n6, n9, n7, n8, n10: n3 and n4 tie at 80).

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> solve(p, "heft").makespan
80.0
"""

from __future__ import annotations

from schedkit.methods import register_method
from schedkit.problem import Problem
from schedkit.timing import DeviceRule, earliest_finish

from schedkit.heuristics.components import upward_rank_priority
from schedkit.heuristics.list_scheduling import ListSchedulingMethod, ListSchedulingOptions

__all__ = ["Heft", "HeftOptions"]


class HeftOptions(ListSchedulingOptions):
    """Options of ``heft``."""

    insertion: bool = True
    """Let a task fill an idle gap between tasks already on its device (HEFT's insertion policy)."""


@register_method("heft")
class Heft(ListSchedulingMethod):
    """HEFT: tasks by upward rank (mean costs), each on its earliest-finishing device, with insertion.

    Examples
    --------
    >>> from schedkit import Problem
    >>> s = Heft().solve(Problem.load("examples/tiny.yaml"))
    >>> s.status, s.makespan >= s.bound
    ('heuristic', True)
    """

    Options = HeftOptions

    def priority(self, problem: Problem) -> list[float]:
        return upward_rank_priority(problem)

    def rule(self, problem: Problem) -> DeviceRule:
        return earliest_finish
