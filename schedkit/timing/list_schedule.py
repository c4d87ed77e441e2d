"""List scheduling: ready tasks in priority order, each on a device chosen by a rule.

The engine of the list heuristics (MET, greedy, HEFT) and of the horizon and
extension schedules of the MILP. It follows the problem semantics of
:mod:`schedkit.problem`: a task starts after each predecessor's end plus the
transfer between their devices (:func:`~schedkit.timing.resources.arrival`), a
device runs one task at a time (:class:`~schedkit.timing.resources.Timeline`), a
task runs only on its allowed devices, and the static memory of the tasks on a
device fits its capacity. A collocation group is placed as one unit by the first of its
tasks to be scheduled: that task's device choice weighs the whole group's work and the
inputs of its members already known (the earliest finish of the group taken as one task),
and the group's memory is taken at once.

Cost, for V tasks, E edges and m devices: O((V + E) log V) for the ready queue and
the timelines (a timeline finds the first gap that holds a task in O(log V) with its
gap index), plus O((V + E) m) to weigh every candidate device of every task. With a
:class:`FinishRule` (earliest finish: HEFT and greedy; shortest duration, then
earliest finish: MET) that weighing is numpy over the problem's arrays
(:class:`~schedkit.timing.earliest.EarliestFinish`): the arrivals of a task's inputs on
every device at once, and a gap search only on the devices where a gap could make the
task finish first; any other rule gets every candidate's exact start. Both ways give
the same schedule, float for float (a hypothesis test in ``tests/timing/test_list_schedule.py``
proves it).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import to_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> rank = [float(len(p.tasks) - k) for k in range(len(p.tasks))]
>>> device_of, start = list_schedule(p, rank)
>>> to_schedule(p, device_of, start, "example").validate(p).status
'heuristic'
"""

from __future__ import annotations

import heapq
import math
from typing import Callable, Sequence

import numpy as np

from schedkit.errors import ProblemError
from schedkit.numerics import fits
from schedkit.problem import Problem
from schedkit.timing.earliest import EarliestFinish
from schedkit.timing.resources import Timeline, arrival
from schedkit.timing.transfers import Transfers

DeviceRule = Callable[[int, list[tuple[int, float, float]]], int]
"""Chooses a device for task ``i`` from ``(device, start, end)`` candidates."""


class FinishRule:
    """Device rule: the earliest finish, after an optional fixed preference between devices.

    The candidate with the smallest ``(first[i][d], end, d)``, or ``(end, d)`` without
    ``first``. :func:`list_schedule` knows these rules: it times exactly only the
    devices that can still win (a device whose earliest conceivable finish is later
    than a finish already found cannot), and gets the same choice as calling the rule
    on every candidate.

    Parameters
    ----------
    first : sequence of dict, optional
        Per task, a preference per device, smaller first (MET: the durations).

    Examples
    --------
    >>> FinishRule()(0, [(0, 1.0, 3.0), (1, 0.0, 2.0)])
    1
    >>> FinishRule([{0: 1.0, 1: 2.0}])(0, [(0, 1.0, 3.0), (1, 0.0, 2.0)])   # device 0 preferred
    0
    """

    __slots__ = ("first",)

    def __init__(self, first: Sequence[dict[int, float]] | None = None):
        self.first = first

    def __call__(self, i: int, options: list[tuple[int, float, float]]) -> int:
        if self.first is None:
            return min(options, key=lambda o: (o[2], o[0]))[0]
        table = self.first[i]
        return min(options, key=lambda o: (table[o[0]], o[2], o[0]))[0]


earliest_finish = FinishRule()
"""Device rule: the candidate that finishes first (ties: lowest device index)."""


def list_schedule(problem: Problem, priority: Sequence[float], *,
                  device_of: Sequence[int] | None = None,
                  rule: DeviceRule = earliest_finish,
                  insertion: bool = True,
                  transfers: Transfers | None = None,
                  reserve=None, levels=None) -> tuple[list[int], list[float]]:
    """Schedule ready tasks in decreasing ``priority``, each on a device chosen by ``rule``.

    Parameters
    ----------
    problem : Problem
    priority : sequence of float
        Higher goes first among ready tasks; ties go to the lower task index.
    device_of : sequence of int, optional
        A fixed mapping (then ``rule`` is not used).
    rule : callable
        ``rule(task, [(device, start, end), ...]) -> device``; default earliest finish.
        A :class:`FinishRule` is evaluated only on the devices that can win. For the first
        task of a collocation group, ``end`` is when the whole group would end on the device.
    insertion : bool
        Let a task fill an idle gap between tasks already on a device.
    transfers : Transfers, optional
        Channel and port timelines of a ``congestion`` formulation: a candidate device's
        inputs are planned into their earliest free slots
        (:meth:`~schedkit.timing.transfers.Transfers.arrivals`), and the chosen device's
        booked. The transfers' times are then in ``transfers.booked``. Their ``holds``
        (resources tasks hold, :class:`~schedkit.timing.holds.Holds`): a holder starts
        only when a unit of each of its resources is free over its whole run.
    reserve : object, optional
        Keeps memory for the tasks still to come on a nearly full instance: its
        ``candidates(task, devices)`` narrows a task's devices, and ``commit(task, device)``
        records the choice (see :class:`schedkit.heuristics.reservation.Reservation`).
    levels : MemoryLevels, optional
        The memory levels of a ``memory_timeline`` formulation
        (:class:`~schedkit.timing.memory_levels.MemoryLevels`): a task starts only where and when
        it fits; a task that fits on no device waits until another placement frees memory.

    Returns
    -------
    device_of, start : list of int, list of float

    Raises
    ------
    ProblemError
        When a task has no device left (memory used up, collocation, no link), or, with
        ``levels``, when no task left fits (this list schedule found no memory-feasible
        schedule: not a proof that none exists).
    """
    n = len(problem.tasks)
    durations = problem.durations
    # The graph from the CSR arrays (the order of Problem.preds and succs): a bulk-loaded
    # problem then never builds its edge lists.
    graph = problem.arrays
    indegree = np.diff(graph.pred_ptr).tolist()
    succ_ptr, succ_dst = graph.succ_ptr.tolist(), graph.succ_dst
    heap = [(-priority[i], i) for i in range(n) if indegree[i] == 0]
    heapq.heapify(heap)
    device = [-1] * n
    start = [0.0] * n
    end = [0.0] * n
    free_memory = list(problem.device_memory)
    # Without capacities every task fits everywhere, and on a fully linked network every
    # pair of devices may exchange data: both filters then keep every device.
    limited = any(cap != math.inf for cap in free_memory)
    connected = all(all(row) for row in problem.linked)
    timelines = [Timeline(index=insertion) for _ in problem.devices]
    group_device: dict[str, int] = {}
    groups = [t.colocate for t in problem.spec.tasks]
    # A collocation group of several tasks is placed as one unit by its first task: the choice
    # binds the others, so it weighs the whole group (see :func:`_unit_finish`), and the
    # group's memory is taken at once, so that no other task takes the room its members need.
    units = {g: members for g, members in problem.colocate_groups.items() if len(members) > 1}
    unit_memory = {g: sum(problem.task_memory[k] for k in members) for g, members in units.items()}
    unit_devices = {g: set(problem.allowed[members[0]]).intersection(*(problem.allowed[k] for k in members))
                    for g, members in units.items()}
    congested = transfers is not None and transfers.congested
    holds = transfers.holds if transfers is not None else None
    # (the array fast path knows devices and arrivals only: held resources time on the scalar path)
    fast = (device_of is None and isinstance(rule, FinishRule) and not congested and levels is None
            and holds is None)
    if levels is not None and levels.keeps_order:
        insertion = False  # the level at a start depends on the device's order: keep it the time order
    # The fast path weighs all devices at once on the problem's arrays.
    clock = EarliestFinish(problem, timelines, insertion) if fast else None
    waiting: list[int] = []  # tasks that fit nowhere yet
    if congested:
        def ready_on(i: int, d: int) -> float:
            return transfers.arrivals(i, d, device, end)
    else:
        def ready_on(i: int, d: int) -> float:
            return _ready(problem, i, d, device, end)
    while heap or waiting:
        if not heap:
            names = ", ".join(f"'{problem.tasks[k]}'" for k in waiting[:3])
            raise ProblemError(f"task {names}: no device has memory for it at any time this list "
                               f"schedule tried (memory_timeline; not a proof that no schedule exists)")
        _, i = heapq.heappop(heap)
        group = groups[i]
        unit = group in units and group not in group_device  # the first task of a group
        candidates = _candidates(problem, i, device, free_memory, group_device.get(group),
                                 None if device_of is None else device_of[i], limited, connected,
                                 unit_memory[group] if unit else None)
        if unit:
            candidates = [d for d in candidates if d in unit_devices[group]]
            if not candidates:
                raise ProblemError(f"collocation group '{group}': no device left that all its tasks may use "
                                   f"and that holds them (heuristic placement)")
        if reserve is not None:
            candidates = reserve.candidates(i, candidates)
            if not candidates:
                raise ProblemError(f"task '{problem.tasks[i]}': no device keeps room for the tasks to come")
        table = durations[i]
        if fast and not unit and len(candidates) > 1 and rule.first is not None:
            prefer = rule.first[i]
            if prefer is table:  # its own durations (MET): the shortest on the arrays, not 1,024 look-ups
                candidates = _shortest(clock.arrays, i, candidates)
            else:
                least = min(prefer[d] for d in candidates)
                candidates = [d for d in candidates if prefer[d] == least]
        if len(candidates) == 1 and levels is None:
            d = candidates[0]
            t = (timelines[d].earliest(ready_on(i, d), table[d], insertion) if holds is None
                 else holds.earliest(i, ready_on(i, d), table[d], timelines[d], insertion))
        elif fast and not unit:
            d, t = clock.choose(i, candidates)
        else:
            options = []
            for d in candidates:
                length = table[d]
                ready = ready_on(i, d)
                if levels is not None:
                    ready = levels.earliest(i, d, ready, device, end)
                    if ready is None:
                        continue
                t = (timelines[d].earliest(ready, length, insertion) if holds is None
                     else holds.earliest(i, ready, length, timelines[d], insertion))
                finish = _unit_finish(problem, units[group], d, t, device, end, timelines[d],
                                      insertion) if unit else t + length
                options.append((d, t, finish))
            if not options:
                waiting.append(i)
                continue
            d = rule(i, options)
            _, t, _ = next(o for o in options if o[0] == d)
        if congested:
            transfers.arrivals(i, d, device, end, commit=True)
        if reserve is not None:
            reserve.commit(i, d)
        finish = t + table[d]
        device[i], start[i], end[i] = d, t, finish
        timelines[d].add(t, finish)
        if holds is not None:
            holds.add(i, t, finish)
        if clock is not None:
            clock.place(i, d, finish)
        if unit:
            free_memory[d] -= unit_memory[group]
        elif group not in units:  # a group's memory was taken by its first task
            free_memory[d] -= problem.task_memory[i]
        if levels is not None:
            levels.place(i, d, t, finish, device, end)
            for k in waiting:  # memory may have been freed: try them again
                heapq.heappush(heap, (-priority[k], k))
            waiting.clear()
        if group is not None:
            group_device[group] = d
        for j in succ_dst[succ_ptr[i]:succ_ptr[i + 1]].tolist():
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, (-priority[j], j))
    return device, start


def _shortest(arrays, i: int, candidates: Sequence[int]) -> list[int]:
    """The candidates on which task ``i`` is shortest (its durations on the arrays: the same
    floats, so the same ties)."""
    lengths = arrays.durations_of(i)
    if len(candidates) == arrays.m:  # every device
        return np.flatnonzero(lengths == lengths.min()).tolist()
    pick = np.asarray(candidates, dtype=np.int64)
    lengths = lengths[pick]
    return pick[lengths == lengths.min()].tolist()


def _ready(problem: Problem, i: int, d: int, device: list[int], end: list[float]) -> float:
    """When every input of task ``i`` is on device ``d`` (the reference loop).

    The inputs are read from the CSR arrays (the order and floats of ``Problem.preds``), from
    ``Problem.preds`` where one gives its own transfer times (a Payload, which the arrays
    hold as its size alone)."""
    a = problem.arrays
    if a.pred_payload[i]:
        inputs = problem.preds[i]
    else:
        lo, hi = a.pred_ptr[i], a.pred_ptr[i + 1]
        inputs = zip(a.pred_src[lo:hi].tolist(), a.pred_size[lo:hi].tolist())
    ready = 0.0
    for p, size in inputs:
        at = arrival(problem, end[p], size, device[p], d)
        if at > ready:
            ready = at
    return ready


def _unit_finish(problem: Problem, members: Sequence[int], d: int, t: float, device: list[int],
                 end: list[float], timeline: Timeline, insertion: bool) -> float:
    """When the collocation group ``members`` would end on device ``d``, its first task starting at ``t``.

    The group as one task (HEFT's earliest finish of the contracted group): the summed
    durations on ``d`` of its members not yet placed, starting when the first task may and
    the inputs of the others that are already known (placed producers outside the group)
    have arrived on ``d``, in the first gap of ``d`` that holds it all. The first task alone
    would judge by its own duration, often none at all (a weight that feeds the group's
    operator): every device would tie and the group follow the lowest index, however slow
    its members are there.
    """
    length = 0.0
    ready = t
    inside = set(members)
    for k in members:
        if device[k] >= 0:
            continue
        length += problem.durations[k][d]
        for q, size in problem.preds[k]:
            if device[q] >= 0 and q not in inside:
                at = arrival(problem, end[q], size, device[q], d)
                if at > ready:
                    ready = at
    return timeline.earliest(ready, length, insertion) + length


def _candidates(problem: Problem, i: int, device: list[int], free_memory: list[float],
                group_device: int | None, fixed: int | None, limited: bool = True,
                connected: bool = False, unit_memory: float | None = None) -> Sequence[int]:
    """The devices task ``i`` may go to now: allowed, memory, its group's device, links.

    ``unit_memory``: the memory of the collocation group ``i`` opens, which the device must
    hold at once; a later member uses the room its group took.
    """
    name = problem.tasks[i]
    allowed = problem.allowed[i] if fixed is None else (fixed,)
    if fixed is not None and fixed not in problem.allowed[i]:
        raise ProblemError(f"task '{name}' cannot run on {problem.devices[fixed]}")
    if group_device is not None:
        allowed = tuple(d for d in allowed if d == group_device)
        if not allowed:
            raise ProblemError(f"task '{name}': its collocation group sits on a device it cannot use")
        if unit_memory is None and problem.spec.tasks[i].colocate is not None:
            limited = False  # the group took its room when its first task was placed
    need = problem.task_memory[i] if unit_memory is None else unit_memory
    room = [d for d in allowed if fits(need, free_memory[d])] if limited else allowed
    if not room:
        raise ProblemError(f"task '{name}': no memory left on its devices (heuristic placement)")
    if connected:
        return room
    # Linked from the device of every input that carries data (pair_allowed), on the arrays.
    a = problem.arrays
    lo, hi = a.pred_ptr[i], a.pred_ptr[i + 1]
    sources = a.pred_src[lo:hi][a.pred_size[lo:hi] != 0].tolist()
    if sources:
        reach = a.linked[sorted({device[p] for p in sources})][:, list(room)].all(axis=0).tolist()
        linked = [d for d, ok in zip(room, reach) if ok]
    else:
        linked = list(room)
    if not linked:
        raise ProblemError(f"task '{name}': no device it may use is linked to its predecessors' devices")
    return linked
