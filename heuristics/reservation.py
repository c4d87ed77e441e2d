"""A list scheduler's device choices, kept from starving the tasks to come of memory.

:class:`MemoryLookahead` refuses, cheaply, the placements that leave too little memory for
the units still to come that can only go to limited devices; the list schedulers use it on
their first pass. :class:`Reservation` lends :func:`~schedkit.timing.list_schedule` the
feasibility search of :class:`~schedkit.heuristics.placement.Placer`: a memory-bound list
schedule never runs into a dead end the placement search could have avoided (the second
pass, when the first got stuck).
"""

from __future__ import annotations

import heapq
import math

from schedkit.heuristics.placement import Placer
from schedkit.numerics import fits
from schedkit.problem import Problem
from schedkit.problem.space import PlacementSpace

__all__ = ["Reservation", "MemoryLookahead"]


class Reservation:
    """A list scheduler's device choices, kept completable by a safe :class:`Placer`.

    Greedy list scheduling takes memory as it goes and may leave a later task no device
    (a nearly full instance). Given to :func:`~schedkit.timing.list_schedule` as
    ``reserve``, a reservation offers a task only the devices that keep a complete
    feasible placement of the tasks not yet scheduled (the placer's completion), and
    records each choice.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import list_schedule
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
    ...                        "tasks": [{"name": "x", "work": 1, "memory": 2},
    ...                                  {"name": "y", "work": 1, "memory": 2},
    ...                                  {"name": "z", "work": 1, "memory": 4}]})
    >>> list_schedule(p, [3.0, 2.0, 1.0])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: task 'z': no memory left on its devices (heuristic placement)
    >>> list_schedule(p, [3.0, 2.0, 1.0], reserve=Reservation(p, "example"))[0]
    [1, 1, 0]
    """

    def __init__(self, problem: Problem, who: str):
        self.placer = Placer(problem, who, safe=True)

    def candidates(self, i: int, devices):
        """The devices of ``devices`` on which task ``i`` keeps the others placeable."""
        placer = self.placer
        u = placer.unit_of[i]
        if placer.placed(u):
            return [d for d in devices if d == placer.device_of[i]]
        planned = placer.completion.get(u)
        # a device of the task's own may be one its collocation group cannot share
        devices = [d for d in devices if d in placer.allowed_set[u]]
        kept = [d for d in devices if d == planned or placer._keeps_completion(u, d)]
        return kept or [d for d in devices if d == planned]

    def commit(self, i: int, d: int) -> None:
        """Task ``i`` goes to device ``d`` (one of :meth:`candidates`)."""
        placer = self.placer
        u = placer.unit_of[i]
        if not placer.placed(u):
            placer._accept(u, d)


class MemoryLookahead:
    """A list scheduler's device choices, kept from leaving too little memory for the units to come.

    A unit (a collocation group, or a task) whose devices that hold it all have limited
    memory cannot escape to an unlimited one: its *class* is that set of devices. A
    placement is refused when, after it, either necessary condition of a complete placement
    fails for some class ``A`` (or the union of all classes):

    - the units still to come whose class lies within ``A`` need more memory than ``A`` has
      left in all (Hall's condition);
    - the largest unit to come of class ``A`` fits on no device of ``A`` any more.

    So a device that fits a task now but starves a later unit that can only go there is not
    offered, while every choice that keeps a complete placement possible still is. Given to
    :func:`~schedkit.timing.list_schedule` as ``reserve``. It costs, per candidate device,
    a look at the classes that contain it; without classes (some device of every unit is
    unlimited) :meth:`build` returns ``None``. Links are not looked ahead:
    :class:`Reservation` remains the exact fallback.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import list_schedule
    >>> p = Problem.from_dict({"devices": [{"name": "g0", "memory": 4}, {"name": "g1", "memory": 4},
    ...                                    {"name": "cpu"}],
    ...     "tasks": [{"name": "a", "durations": {"g0": 1, "g1": 1.5, "cpu": 10}, "memory": 2},
    ...               {"name": "b", "durations": {"g0": 1, "g1": 1.5, "cpu": 10}, "memory": 2},
    ...               {"name": "c", "durations": {"g0": 1, "g1": 1}, "memory": 4}]})
    >>> list_schedule(p, [3.0, 2.0, 1.0])        # b takes g1, where c alone could still go
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: task 'c': no memory left on its devices (heuristic placement)
    >>> list_schedule(p, [3.0, 2.0, 1.0], reserve=MemoryLookahead.build(p))[0]
    [0, 0, 1]
    """

    def __init__(self, space: PlacementSpace, classes: list[frozenset[int]], unit_class: list[int]):
        self.space = space
        p = space.problem
        self.capacity = list(p.device_memory)
        self.free = list(p.device_memory)
        self.placed = [False] * len(space.units)
        self.unit_class = unit_class
        self.classes = classes
        # need[A]: the memory of the units to come whose class lies within A.
        self.within = [[a for a, big in enumerate(classes) if small <= big] for small in classes]
        self.within_set = [set(w) for w in self.within]
        self.total = [sum(self.free[d] for d in members) for members in classes]  # free memory in all
        self.witness = [min(members) for members in classes]
        self.need = [0.0] * len(classes)
        self.largest: list[list[tuple[float, int]]] = [[] for _ in classes]
        for u, c in enumerate(unit_class):
            if c >= 0:
                for a in self.within[c]:
                    self.need[a] += space.memory[u]
                self.largest[c].append((-space.memory[u], u))
        for heap in self.largest:
            heapq.heapify(heap)
        self.of_device = [[a for a, members in enumerate(classes) if d in members] for d in range(len(p.devices))]

    @classmethod
    def build(cls, problem: Problem) -> "MemoryLookahead | None":
        """The look-ahead of ``problem``, or ``None`` when no unit is confined to limited devices."""
        if all(cap == math.inf for cap in problem.device_memory):
            return None
        space = PlacementSpace(problem)
        index: dict[frozenset[int], int] = {}
        unit_class = [-1] * len(space.units)
        smallest = min(space.capacity)
        known: dict[tuple[int, ...], int] = {}  # a unit every device holds: its class is its devices
        for u, devices in enumerate(space.devices):
            every = fits(space.memory[u], smallest)
            if every and devices in known:
                unit_class[u] = known[devices]
                continue
            holds = frozenset(d for d in devices if fits(space.memory[u], space.capacity[d]))
            if holds and all(space.capacity[d] < math.inf for d in holds):
                unit_class[u] = index.setdefault(holds, len(index))
            if every:
                known[devices] = unit_class[u]
        if not index:
            return None
        classes = list(index)
        union = frozenset().union(*classes)
        if union not in index:
            classes.append(union)  # no unit of its own: Hall's condition over all classes at once
        return cls(space, classes, unit_class)

    def _top(self, a: int, u: int) -> float:
        """The memory of the largest unit to come of class ``a`` other than ``u`` (0 when none)."""
        heap = self.largest[a]
        while heap and self.placed[heap[0][1]]:
            heapq.heappop(heap)
        if heap and heap[0][1] == u:  # u is being placed: the next one counts
            own = heapq.heappop(heap)
            second = self._top(a, u)
            heapq.heappush(heap, own)
            return second
        return -heap[0][0] if heap else 0.0

    def _room(self, a: int, amount: float, exclude: int = -1) -> bool:
        """Whether a device of class ``a`` (not ``exclude``) has ``amount`` of memory free.

        The last device found is tried first: free memory only shrinks, and the largest unit
        to come with it, so it mostly answers at once.
        """
        free, w = self.free, self.witness[a]
        if w != exclude and fits(amount, free[w]):
            return True
        for k in self.classes[a]:
            if k != exclude and fits(amount, free[k]):
                self.witness[a] = k
                return True
        return False

    def _enough(self, u: int, a: int) -> bool:
        """Whether class ``a`` still holds, in all, the units to come within it with ``u`` placed in it."""
        memory, own = self.space.memory[u], self.unit_class[u]
        need = self.need[a] - (memory if own >= 0 and a in self.within_set[own] else 0.0)
        return fits(need, self.total[a] - memory)

    def _all_keep(self, u: int) -> bool:
        """Whether ``u`` may go anywhere: every class keeps its room wherever ``u`` lands."""
        memory = self.space.memory[u]
        for a in range(len(self.classes)):
            if not self._enough(u, a):
                return False
            largest = self._top(a, u)
            if largest and not self._room(a, largest + memory):
                return False
        return True

    def _keeps(self, u: int, d: int) -> bool:
        memory = self.space.memory[u]
        for a in self.of_device[d]:
            if not self._enough(u, a):
                return False
            largest = self._top(a, u)
            if largest and not (fits(largest, self.free[d] - memory) or self._room(a, largest, exclude=d)):
                return False
        return True

    def candidates(self, i: int, devices):
        """The devices of ``devices`` on which task ``i`` leaves room for the units to come."""
        u = self.space.unit_of[i]
        if self.placed[u] or self._all_keep(u):
            return devices
        return [d for d in devices if self._keeps(u, d)]

    def commit(self, i: int, d: int) -> None:
        """Task ``i`` goes to device ``d``: its unit takes its memory there."""
        u = self.space.unit_of[i]
        if self.placed[u]:
            return
        self.placed[u] = True
        memory, own = self.space.memory[u], self.unit_class[u]
        self.free[d] -= memory
        for a in self.of_device[d]:
            self.total[a] -= memory
        if own >= 0:
            for a in self.within[own]:
                self.need[a] -= memory
