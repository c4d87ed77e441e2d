"""Method ``greedy``: earliest finish time in breadth-first order, no insertion (a DiviML baseline).

Priority: breadth-first topological order
(:func:`~schedkit.heuristics.components.bfs_order`). Device: the one on which the
task finishes first given the partial schedule, the task queued after the
device's last task (no insertion into idle gaps); equal finishes go to the lowest
device index.

Examples
--------
>>> from schedkit import Problem, solve
>>> solve(Problem.load("examples/topcuoglu2002.json"), "greedy").makespan
80.0
"""

from __future__ import annotations

from schedkit.methods import register_method
from schedkit.problem import Problem
from schedkit.timing import DeviceRule, earliest_finish

from schedkit.timing import bfs_order

from schedkit.heuristics.components import order_priority
from schedkit.heuristics.list_scheduling import ListSchedulingMethod, ListSchedulingOptions

__all__ = ["Greedy", "GreedyOptions"]


class GreedyOptions(ListSchedulingOptions):
    """Options of ``greedy``."""

    insertion: bool = False
    """Let a task fill an idle gap between tasks already on its device (off: plain greedy)."""


@register_method("greedy")
class Greedy(ListSchedulingMethod):
    """Greedy: tasks in breadth-first order, each on its earliest-finishing device, no insertion.

    Examples
    --------
    >>> from schedkit import Problem
    >>> Greedy().solve(Problem.load("examples/tiny.yaml")).status
    'heuristic'
    """

    Options = GreedyOptions

    def priority(self, problem: Problem) -> list[float]:
        return order_priority(bfs_order(problem))

    def rule(self, problem: Problem) -> DeviceRule:
        return earliest_finish
