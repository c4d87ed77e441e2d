"""Method ``met``: Minimum Execution Time, each task on its fastest device (a DiviML baseline).

Priority: HEFT's upward rank with mean costs (equal ranks in file order). Device:
the shortest duration among the devices that still fit the task (memory left,
its collocation group's device, a link to every predecessor's device), a group's first
task judging by the whole group's duration; equal
durations go to the earliest finish, then the lowest index. Communication and
load are ignored by the choice, not by the timing: each task starts at the
earliest time on its device, with insertion into idle gaps (O(log n) on a device of
n tasks, see :class:`~schedkit.timing.Timeline`: MET piles most tasks on one device).

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "met")
>>> sorted({r.device for r in s.tasks if r.task != "sample"})   # the gpu is fastest everywhere
['gpu0']
"""

from __future__ import annotations

from schedkit.methods import register_method
from schedkit.problem import Problem
from schedkit.timing import DeviceRule

from schedkit.heuristics.components import fastest_device_rule, upward_rank_priority
from schedkit.heuristics.list_scheduling import ListSchedulingMethod, ListSchedulingOptions

__all__ = ["Met"]


@register_method("met")
class Met(ListSchedulingMethod):
    """MET: every task on its fastest device that fits, tasks by upward rank.

    Examples
    --------
    >>> from schedkit import Problem
    >>> Met().solve(Problem.load("examples/topcuoglu2002.json")).makespan
    80.0
    """

    Options = ListSchedulingOptions

    def priority(self, problem: Problem) -> list[float]:
        return upward_rank_priority(problem)

    def rule(self, problem: Problem) -> DeviceRule:
        return fastest_device_rule(problem)
