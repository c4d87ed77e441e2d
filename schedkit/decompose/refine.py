"""Refinement after coarsening: devices moved while the expanded schedule gets shorter.

A coarse schedule is the best the inner method found for the *coarse* problem, where a
group of tasks runs as one task; once expanded, it is timed on the original problem,
where it is seldom the best use of the same groups. :func:`refined` is the last step of
a multilevel method (coarsen, solve, expand, refine, as multilevel graph partitioners
do): hill climbing on the tasks' devices, every candidate timed as
:func:`~schedkit.decompose.coarsen.reordered` times one (HEFT's order with the devices
fixed, insertion into idle gaps).

The moving units get finer level by level: the coarsening's groups, then each group cut
in two halves (its members are in topological order), in quarters, ..., down to single
tasks. Each level is one pass: every unit in turn goes to the first other device (that
all its members may use) where the schedule gets better, if any: a shorter makespan, or
the same makespan and a smaller sum of the tasks' ends (moves off the critical path that
make room for later ones; on the layered graphs of benchmark (c) this tie-break shortens
the result by up to 8 %). The levels are walked again while a walk improves the
schedule; it stops at a local optimum (no unit of any level is better elsewhere) or
after ``seconds``. A candidate costs one timing by
:class:`~schedkit.timing.OrderedTiming` (1-4 ms at 1000 tasks, from the first moved
task on); on 1000-task layered graphs coarsened to 60 nodes, the first walk reaches
single tasks after about 13 s, every level gaining.

A move takes whole collocation groups with it and is tried only when the mapping stays
feasible (:class:`~schedkit.problem.space.PlacementSpace`: allowed devices, memory,
collocation, links).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import to_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> on_cpu = to_schedule(p, [1] * 6, [0.0, 1.8, 11.3, 22.3, 22.9, 28.9], "cpu")  # one after the other
>>> better = refined(p, on_cpu, [[0, 1, 2, 3], [4, 5]], seconds=5, method="example")
>>> round(on_cpu.makespan, 3), round(better.makespan, 3)
(29.2, 4.516)
>>> better.placement()["attn"], better.placement()["sample"]
('gpu0', 'cpu')
"""

from __future__ import annotations

import time
from typing import Sequence

from schedkit.numerics import shorter
from schedkit.problem import Problem
from schedkit.problem.graph import upward_rank
from schedkit.problem.space import PlacementSpace
from schedkit.schedule import Schedule
from schedkit.timing import OrderedTiming, placement_indices, priority_order, to_schedule

__all__ = ["refined"]


class _Search:
    """The incumbent mapping, its list schedule, and the moves tried from it.

    Candidates are timed by :class:`~schedkit.timing.OrderedTiming` in the order list
    scheduling takes the tasks under HEFT's rank (:func:`~schedkit.timing.priority_order`;
    with the devices fixed it does not depend on them): the same times as
    :func:`~schedkit.timing.list_schedule`, and a move reuses the incumbent's times
    before the first task it moves.
    """

    def __init__(self, problem: Problem, device_of: list[int], deadline: float):
        self.problem = problem
        self.deadline = deadline
        self.space = PlacementSpace(problem)
        self.timing = OrderedTiming(problem, priority_order(problem, upward_rank(problem)))
        self.device_of = device_of
        self.loads = self.space.loads(device_of)
        self.makespan = self.timing(device_of)
        self.start = self.timing.start
        self.total = sum(self.timing.end)
        self.timing.keep()

    def out_of_time(self) -> bool:
        return time.perf_counter() > self.deadline

    def move(self, tasks: Sequence[int], device: int) -> bool:
        """Move ``tasks`` (and their collocation groups) to ``device`` if that is better.

        Better: a shorter makespan, or the same makespan and a smaller sum of the tasks'
        ends (a move off the critical path that frees time for a later one).
        """
        space = self.space
        units = {space.unit_of[i] for i in tasks}
        units = [u for u in units if self.device_of[space.units[u][0]] != device]
        if not units or any(device not in space.devices[u] for u in units):
            return False
        moved = space.move(self.device_of, self.loads, [(u, device) for u in units])
        if moved is None:
            return False
        trial, loads = moved
        position = self.timing.position
        makespan = self.timing(trial, min(position[i] for u in units for i in space.units[u]))
        if makespan > self.makespan:
            return False
        total = sum(self.timing.end)
        if not (shorter(makespan, self.makespan) or shorter(total, self.total)):
            return False
        self.timing.keep()
        self.device_of, self.loads, self.start, self.makespan, self.total = (
            trial, loads, self.timing.start, makespan, total)
        return True


def refined(problem: Problem, schedule: Schedule, groups: Sequence[Sequence[int]], seconds: float,
            method: str) -> Schedule:
    """``schedule`` with its devices refined by moves of ever smaller units (see above).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
        A schedule of ``problem`` (an expanded coarse schedule).
    groups : sequence of sequence of int
        The groups of the coarsening, each in topological order: the units of the first
        level.
    seconds : float
        At most this long (``0``: ``schedule`` itself).
    method : str
        The method named in the schedule returned.

    Returns
    -------
    Schedule
        The list schedule of the refined devices when it is shorter than ``schedule``,
        else ``schedule`` itself.
    """
    if seconds <= 0 or not schedule.tasks:
        return schedule
    search = _Search(problem, placement_indices(problem, schedule), time.perf_counter() + seconds)
    levels = _levels(groups, len(problem.tasks))
    improved = True
    while improved and not search.out_of_time():
        improved = False
        for units in levels:
            improved |= _one_pass(search, units)
    if not shorter(search.makespan, schedule.makespan):
        return schedule
    return to_schedule(problem, search.device_of, search.start, method)


def _levels(groups: Sequence[Sequence[int]], n: int) -> list[list[list[int]]]:
    """The units of every level: the groups (a task in none is a group of its own), then
    every group cut into 2, 4, ... consecutive parts, down to single tasks."""
    seen = {i for g in groups for i in g}
    groups = [list(g) for g in groups] + [[i] for i in range(n) if i not in seen]
    levels, parts = [], 1
    while True:
        units = []
        for g in groups:
            k = min(parts, len(g))
            units += [g[round(j * len(g) / k):round((j + 1) * len(g) / k)] for j in range(k)]
        levels.append(units)
        if all(len(u) == 1 for u in units):
            return levels
        parts *= 2


def _one_pass(search: _Search, units: list[list[int]]) -> bool:
    """Every unit in turn to the first other device where the schedule gets shorter."""
    p, improved = search.problem, False
    for members in units:
        for d in sorted(set(p.allowed[members[0]]).intersection(*(p.allowed[i] for i in members[1:]))):
            if search.out_of_time():
                return improved
            if search.move(members, d):  # (refused when every member is on d already)
                improved = True
                break
    return improved
