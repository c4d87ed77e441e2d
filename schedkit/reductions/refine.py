"""Refinement after coarsening: devices changed while the expanded schedule gets shorter.

A coarse schedule is the best the inner method found for the *coarse* problem, where a
group of tasks runs as one task; once expanded, it is timed on the original problem,
where it is seldom the best use of the same groups. :func:`refined` is the last step of
a multilevel method (coarsen, solve, expand, refine, as multilevel graph partitioners
do): a local search on the tasks' devices, every candidate timed as
:func:`~schedkit.reductions.coarsen.reordered` times one (HEFT's order with the devices
fixed, insertion into idle gaps). A candidate is taken when it is better: a shorter
makespan, or the same makespan and a smaller sum of the tasks' ends (moves off the
critical path that make room for later ones; on the layered graphs of benchmark (c)
this tie-break shortens the result by up to 8 %).

Each round has three neighbourhoods:

- **Windows re-placed by earliest finish** (large neighbourhoods with a greedy repair):
  a window of the order, a quarter, an eighth, ..., a 64th of the tasks, overlapping by
  half, is freed; list scheduling then puts each task of the window on the device where
  it finishes first (HEFT's rule) and keeps every other task on its device. This fills
  the idle time an expanded schedule leaves where the groups were too coarse for the
  graph (wide graphs), while the groups' devices stay wherever the window does not reach.
- **Swaps** between the device that ends last and another, the pairs that balance their
  work best first: on a schedule with no idle time, no single move shortens the last
  device without overloading another (on two wide 1000-task graphs of benchmark (c),
  swaps alone take HEFT's schedule from 0.05 % and 0.02 % above the lower bound to within
  0.001 % of it).
- **Moves of ever smaller units**: the coarsening's groups, then each group cut in two
  halves (its members are in topological order), in quarters, ..., down to single
  tasks. Each level is one pass: every unit in turn goes to the first other device (that
  all its members may use) where the schedule gets better, if any.

Rounds repeat while one improves the schedule; the search stops at a local optimum or
after ``seconds``. On a graph whose first timing would not end in ``seconds``
(:data:`TIMING_SECONDS`; 26 s at 100,000 tasks), only the windows run, each timed by the
list schedule that makes it. A window costs one list schedule (20-30 ms at 1000 tasks), a move
or a swap one timing by :class:`~schedkit.timing.OrderedTiming` (1-4 ms at 1000 tasks,
from the first moved task on).

A move or a swap takes whole collocation groups with it, and every candidate is tried
only when the mapping stays feasible (:class:`~schedkit.problem.space.PlacementSpace`:
allowed devices, memory, collocation, links).

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

import heapq
import time
from typing import Sequence

from schedkit.errors import ProblemError
from schedkit.numerics import shorter
from schedkit.problem import Problem
from schedkit.reductions.budget import slowdown
from schedkit.problem.graph import upward_rank
from schedkit.problem.space import PlacementSpace
from schedkit.schedule import Schedule
from schedkit.problem.edge_table import edge_count
from schedkit.timing import (FinishRule, OrderedTiming, TimingRules, list_schedule, placement_indices, priority_order,
                             to_schedule)

__all__ = ["refined", "refined_mapping"]


#: Seconds per squared task of the search's first timing (:class:`~schedkit.timing.OrderedTiming`
#: from the first task; measured: 2.6 ms at 1,000 tasks, 26 s at 100,000): a refinement
#: given less than twice that is skipped, as it could not stop in time.
TIMING_SECONDS = 2.6e-9

#: CPU seconds per edge and task of one window's list schedule (measured on a 100,000-task
#: layered graph of 3.0 million edges: 2.25 s).
WINDOW_SECONDS = 7e-7


class _Search:
    """The incumbent mapping, its list schedule, and the candidates tried from it.

    Candidates are timed by :class:`~schedkit.timing.OrderedTiming` in the order list
    scheduling takes the tasks under HEFT's rank (:func:`~schedkit.timing.priority_order`;
    with the devices fixed it does not depend on them): the same times as
    :func:`~schedkit.timing.list_schedule`, and a move reuses the incumbent's times
    before the first task it moves.
    """

    def __init__(self, problem: Problem, device_of: list[int], deadline: float, rules: TimingRules):
        self.problem = problem
        self.deadline = deadline
        self.rules = rules
        self.space = PlacementSpace(problem)
        self.rank = upward_rank(problem)
        self.timing = OrderedTiming(problem, priority_order(problem, self.rank), rules=rules)
        self.device_of = device_of
        self.loads = self.space.loads(device_of)
        self.makespan = self.timing(device_of)
        self.start, self.end = self.timing.start, self.timing.end
        self.total = sum(self.end)
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
        return self.better(trial, loads, min(position[i] for u in units for i in space.units[u]))

    def adopt(self, trial: list[int]) -> bool:
        """Take the string ``trial`` if it is feasible and better (as :meth:`move` judges)."""
        first = next((k for k, i in enumerate(self.timing.order) if trial[i] != self.device_of[i]), None)
        if first is None or not self.space.feasible(trial):
            return False
        return self.better(trial, self.space.loads(trial), first)

    def better(self, trial: list[int], loads: list[float], first: int) -> bool:
        """Time ``trial`` from position ``first`` of the order on; keep it if it is better."""
        makespan = self.timing(trial, first)
        if makespan > self.makespan:
            return False
        total = sum(self.timing.end)
        if not (shorter(makespan, self.makespan) or shorter(total, self.total)):
            return False
        self.timing.keep()
        self.device_of, self.loads, self.start, self.end, self.makespan, self.total = (
            trial, loads, self.timing.start, self.timing.end, makespan, total)
        return True


def refined(problem: Problem, schedule: Schedule, groups: Sequence[Sequence[int]], seconds: float,
            method: str, rules: TimingRules | None = None) -> Schedule:
    """``schedule`` with its devices refined by windows re-placed by earliest finish, swaps
    and moves of ever smaller units (see above).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
        A schedule of ``problem`` (an expanded coarse schedule).
    groups : sequence of sequence of int
        The groups of the coarsening, each in topological order: the units of the first
        level of moves.
    seconds : float
        At most this long (``0``: ``schedule`` itself).
    method : str
        The method named in the schedule returned.
    rules : TimingRules, optional
        The timing rules of the formulation the schedule answers (transfers that wait for
        their channels or ports under ``congestion``): every candidate is timed by them.
        A memory timeline is not followed: ``schedule`` itself comes back.

    Returns
    -------
    Schedule
        The list schedule of the refined devices when it is shorter than ``schedule``,
        else ``schedule`` itself.
    """
    rules = rules or TimingRules()
    if seconds <= 0 or not schedule.tasks or rules.memory is not None:
        return schedule
    found = refined_mapping(problem, placement_indices(problem, schedule), schedule.makespan, groups, seconds,
                            rules)
    if found is None:
        return schedule
    if rules.congestion is None:
        return to_schedule(problem, *found, method)
    # (the transfers' slots on their channels and ports: the timing that judged the mapping
    # books them again)
    timing = OrderedTiming(problem, priority_order(problem, upward_rank(problem)), rules=rules)
    timing(found[0])
    return to_schedule(problem, found[0], timing.start, method, timing.transfers)


def refined_mapping(problem: Problem, device_of: list[int], makespan: float, groups: Sequence[Sequence[int]],
                    seconds: float, rules: TimingRules | None = None) -> tuple[list[int], list[float]] | None:
    """:func:`refined` on a mapping whose schedule ends at ``makespan``: the refined
    mapping and its start times when they are shorter, else ``None`` (no schedule is made:
    on 100,000 tasks, one costs seconds).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> device_of, start = refined_mapping(p, [1] * 6, 29.2, [[0, 1, 2, 3], [4, 5]], seconds=5)
    >>> [p.devices[d] for d in device_of][:2], refined_mapping(p, device_of, 4.51625, [], 5) is None
    (['gpu0', 'gpu0'], True)
    """
    if seconds <= 0 or not device_of:
        return None
    rules = rules or TimingRules()
    if seconds < 2 * TIMING_SECONDS * len(device_of) ** 2:  # (its first timing would not end in time)
        return _windows_only(problem, list(device_of), makespan, time.perf_counter() + seconds, rules)
    search = _Search(problem, list(device_of), time.perf_counter() + seconds, rules)
    levels = _levels(groups, len(problem.tasks))
    improved = True
    while improved and not search.out_of_time():
        improved = _repair_pass(search)
        improved |= _swap_pass(search)
        for units in levels:
            improved |= _one_pass(search, units)
    if not shorter(search.makespan, makespan):
        return None
    return search.device_of, search.start


def _windows_only(problem: Problem, device_of: list[int], makespan: float,
                  deadline: float, rules: TimingRules) -> tuple[list[int], list[float]] | None:
    """The windows of :func:`_repair_pass` alone, each candidate timed by the list schedule
    that makes it (linear in the edges): the refinement of a graph too large for the moves
    and swaps, whose timing grows with the square of the tasks. The widest windows first,
    while the time lasts; ``None`` when none is shorter."""
    p, n, m = problem, len(device_of), len(problem.devices)
    setup, window = time.perf_counter(), slowdown(p) * WINDOW_SECONDS * (edge_count(p) + len(p.tasks))
    if setup + window > deadline:  # (not one window would end in time)
        return None
    rank = upward_rank(p)
    order = priority_order(p, rank)
    space = PlacementSpace(p)
    anywhere = dict.fromkeys(range(m), 0.0)
    kept = [{d: 0.0 if d == e else 1.0 for d in range(m)} for e in range(m)]
    # (before the first window, its time is guessed: these linear passes over the graph, or
    # one list schedule of its edges and tasks, whichever is longer)
    best, took = None, max(time.perf_counter() - setup, window)
    for width in sorted({max(2, n >> j) for j in range(2, 7)}, reverse=True):
        for begin in range(0, max(1, n - width // 2), max(1, width // 2)):
            began = time.perf_counter()
            if began + took > deadline:  # (the next window, as long as the last, would end late)
                return best
            first = [kept[d] for d in device_of]
            for i in order[begin:begin + width]:
                first[i] = anywhere
            try:
                transfers = rules.transfers(p) if rules.shared else None
                trial, start = list_schedule(p, rank, rule=FinishRule(first), transfers=transfers)
            except ProblemError:
                continue
            length = max(start[i] + p.durations[i][trial[i]] for i in range(n))
            if transfers is not None:  # (a transfer may end after every task)
                length = max([length] + [end for _, end in transfers.booked.values()])
            if shorter(length, makespan) and space.feasible(trial):
                device_of, makespan, best = trial, length, (trial, start)
            took = time.perf_counter() - began
    return best


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


def _repair_pass(search: _Search) -> bool:
    """Windows of the order re-placed by earliest finish, the other tasks kept where they are.

    The windows span a quarter, an eighth, ..., a 64th of the tasks (at least two),
    overlapping by half. Each candidate is a list schedule by HEFT's rank in which a
    task of the window goes to the device where it finishes first (HEFT's rule) and any
    other task to its incumbent device when it may (:class:`~schedkit.timing.FinishRule`
    with that preference first); the search keeps it when it is better.
    """
    p, order = search.problem, search.timing.order
    n, m = len(order), len(p.devices)
    anywhere = dict.fromkeys(range(m), 0.0)
    kept = [{d: 0.0 if d == e else 1.0 for d in range(m)} for e in range(m)]
    improved = False
    for width in sorted({max(2, n >> j) for j in range(2, 7)}, reverse=True):
        for begin in range(0, max(1, n - width // 2), max(1, width // 2)):
            if search.out_of_time():
                return improved
            first = [kept[d] for d in search.device_of]
            for i in order[begin:begin + width]:
                first[i] = anywhere
            try:
                trial, _ = list_schedule(p, search.rank, rule=FinishRule(first),
                                         transfers=search.rules.transfers(p) if search.rules.shared else None)
            except ProblemError:  # memory used up on the way: no candidate from this window
                continue
            improved |= search.adopt(trial)
    return improved


def _swap_pass(search: _Search, tries: int = 64) -> bool:
    """Units swapped between the device that ends last and another while that is better.

    On a schedule with no idle time a device ends when its work does, and no single
    move shortens it without overloading another; a swap of two units may. The pairs
    whose swap leaves both devices with less work than the last one has are ranked by
    the larger of their new loads; the first ``tries`` are timed, the first better one
    is taken, and the pass goes on from it.
    """
    gained = False
    while not search.out_of_time() and _swap_once(search, tries):
        gained = True
    return gained


def _swap_once(search: _Search, tries: int) -> bool:
    p, space = search.problem, search.space
    device_of, durations = search.device_of, p.durations
    last = device_of[max(range(len(device_of)), key=search.end.__getitem__)]
    on: list[list[int]] = [[] for _ in p.devices]
    load = [0.0] * len(p.devices)
    for u, members in enumerate(space.units):
        d = device_of[members[0]]
        on[d].append(u)
        load[d] += sum(durations[i][d] for i in members)

    def work(u: int, d: int) -> float:
        return sum(durations[i][d] for i in space.units[u])

    pairs = []
    for other in range(len(p.devices)):
        if other == last:
            continue
        takers = [(b, work(b, other), work(b, last)) for b in on[other] if last in space.devices[b]]
        for a in on[last]:
            if other not in space.devices[a]:
                continue
            freed, added = load[last] - work(a, last), load[other] + work(a, other)
            for b, b_there, b_here in takers:
                worse = max(freed + b_here, added - b_there)
                if shorter(worse, load[last]):
                    pairs.append((worse, a, b, other))
    position = search.timing.position
    for _, a, b, other in heapq.nsmallest(tries, pairs):
        if search.out_of_time():
            return False
        moved = space.move(device_of, search.loads, [(a, other), (b, last)])
        if moved is not None and search.better(
                *moved, min(position[i] for u in (a, b) for i in space.units[u])):
            return True
    return False


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
