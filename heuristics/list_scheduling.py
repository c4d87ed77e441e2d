"""What the list-scheduling methods (``met``, ``greedy``, ``heft``) share.

A list-scheduling method is a priority rule plus a device rule, run by
:func:`schedkit.timing.list_schedule`: ready tasks go in decreasing priority
(ties: the lower task index), each to the device the rule picks among the
candidates that fit (memory, collocation, links to the predecessors' devices).

Cost, for V tasks, E edges and m devices: O((V + E) log V) for the ready queue and for
insertion into idle gaps (each device's :class:`~schedkit.timing.Timeline` finds the
first gap that holds a task in O(log V)), plus at most O((V + E) m) to weigh the
candidate devices; with the earliest-finish rules of ``heft``, ``met`` and ``greedy``
(a :class:`~schedkit.timing.list_schedule.FinishRule`) that weighing is numpy over the
problem's arrays (:class:`~schedkit.timing.earliest.EarliestFinish`), a gap searched
only where it could win. ``benchmarks/heuristics.py --scale`` times 20 000 and 100 000
tasks on 50 devices, ``benchmarks/scale.py --only layered --sizes 10000 60000`` HEFT on
10 000 and 60 000 tasks with 300 000 and 1.8 million edges, the whole ``schedkit solve``
included.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import earliest_finish
>>> from schedkit.timing import bfs_order
>>> from schedkit.heuristics.components import order_priority
>>> class Demo(ListSchedulingMethod):
...     "Earliest finish in breadth-first order."
...     def priority(self, problem):
...         return order_priority(bfs_order(problem))
...     def rule(self, problem):
...         return earliest_finish
>>> round(Demo().solve(Problem.load("examples/tiny.yaml")).makespan, 3)
4.516
"""

from __future__ import annotations

from typing import ClassVar

from schedkit.problem.bounds import formulation_bound
from schedkit.errors import ProblemError
from schedkit.heuristics.formulation import HONOURED, FollowsFormulation, FormulationOptions
from schedkit.heuristics.reservation import MemoryLookahead, Reservation
from schedkit.methods import MethodOptions
from schedkit.problem import Problem
from schedkit.schedule import Result
from schedkit.machine import paused_gc
from schedkit.timing import DeviceRule, list_schedule, to_schedule

__all__ = ["ListSchedulingOptions", "ListSchedulingMethod"]


class ListSchedulingOptions(FormulationOptions):
    """Options of the list-scheduling methods."""

    insertion: bool = True
    """Let a task fill an idle gap between tasks already on its device."""


class ListSchedulingMethod(FollowsFormulation):
    """Base class of the list schedulers (not registered itself).

    Subclasses implement :meth:`priority` and :meth:`rule`. A collocation group is placed as
    one unit, by its whole duration and memory (:func:`~schedkit.timing.list_schedule`); a
    device that would leave too little memory for the units to come that only limited
    devices hold is not offered (:class:`~schedkit.heuristics.reservation.MemoryLookahead`),
    and should the schedule still get stuck, it is made again with a
    :class:`~schedkit.heuristics.reservation.Reservation`. Under ``memory_timeline`` a
    task starts only where and when it fits, and waits while it fits nowhere
    (:class:`~schedkit.timing.memory_levels.MemoryLevels`).
    """

    honours = HONOURED | {"memory_timeline"}

    Options: ClassVar[type[MethodOptions]] = ListSchedulingOptions

    def priority(self, problem: Problem) -> list[float]:
        """Priority of every task (higher goes first among the ready tasks)."""
        raise NotImplementedError

    def rule(self, problem: Problem) -> DeviceRule:
        """Device rule: ``rule(task, [(device, start, end), ...]) -> device``."""
        raise NotImplementedError

    def run(self, problem: Problem) -> Result:
        # Tables of every task and transfer, nothing cyclic: no full passes of the collector.
        with paused_gc():
            return self._run(problem)

    def _run(self, problem: Problem) -> Result:
        priority, rule = self.priority(problem), self.rule(problem)
        transfers = self.transfers(problem)
        try:
            # Each choice leaves room for the units to come that only limited devices hold.
            device_of, start = list_schedule(problem, priority, rule=rule, insertion=self.options.insertion,
                                             transfers=transfers, reserve=MemoryLookahead.build(problem),
                                             levels=self.levels(problem, transfers))
        except ProblemError:
            # Memory or links used up greedily: again, keeping room for the tasks to come.
            transfers = self.transfers(problem)
            device_of, start = list_schedule(problem, priority, rule=rule, insertion=self.options.insertion,
                                             transfers=transfers, reserve=Reservation(problem, self.name),
                                             levels=self.levels(problem, transfers))
        return Result.heuristic(to_schedule(problem, device_of, start, self.name, transfers),
                                bound=formulation_bound(problem, self.blocks(problem)))
