"""The placement state every partitioner shares: units, their devices, memory and load.

A partitioner (:mod:`schedkit.heuristics.partitioners`) chooses devices; a
:class:`Placer` decides whether a choice is feasible and records it. It places
*units*: a collocation group (``colocate``) is one unit that may only go to a device
all its tasks may use, with the sum of their memory and durations; any other task is a
unit of its own. A unit goes to a device only when the device is allowed for all its
tasks (durations, pins), the static memory of the device still holds the unit
(:func:`~schedkit.numerics.fits`, the rule of :mod:`schedkit.problem.mapping`), and the
unit's already placed neighbours sit on linked devices. Units with a single allowed
device are placed first (two of them bound to unlinked devices while an edge between
them carries data is an error). When a partitioner's preferred devices are all excluded, the
unit goes to the feasible device that would finish its assigned work first.

Should this greedy pass get stuck (memory used up, or a unit cut off from its
neighbours' devices), :func:`partition` runs the partitioner again with a *safe*
placer: a backtracking search (units with fewer devices and more memory first, best
fit) first finds one complete feasible placement; the partitioner's choices are then
accepted only while the remaining units can still be placed (checked against that
placement, or by a new search within a node budget), otherwise the unit follows the
known placement. So a partitioner raises :class:`~schedkit.errors.ProblemError` only
when no feasible placement exists (or the first search, 200 000 nodes plus 10 per
unit, runs out on a huge, nearly full instance); the error names the task or
collocation group when one alone is the cause.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> placer = Placer(p, "example")
>>> placer.placed(p.task_index["sample"])     # runs on the cpu only: placed at once
True
>>> placer.place(0, [1])                      # embed to the cpu
1
>>> placer.result()    # the rest least loaded: norm, 2.1 + 0.6 on the cpu, 2.7 + 0.2 on the gpu
[1, 0, 0, 1, 0, 1]
"""

from __future__ import annotations

from typing import Callable, Iterable

from schedkit.errors import ProblemError
from schedkit.numerics import fits
from schedkit.problem import Problem

__all__ = ["Placer", "NoRoom", "partition"]

#: Search nodes (unit placements tried) for the first feasibility search, per unit, and in all
#: for the searches made when a partitioner's choice departs from the known completion.
_FIRST_SEARCH_NODES = 200_000
_DEPARTURE_NODES = 50_000


class NoRoom(ProblemError):
    """The greedy placement is stuck (a feasible placement may still exist)."""


class Placer:
    """Units, their allowed devices, and the memory used and work assigned on every device.

    In ``safe`` mode the placer first searches a complete feasible placement (the
    *completion*) and afterwards accepts a partitioner's choice only when the units not
    yet placed can still be completed: it never gets stuck.

    Parameters
    ----------
    problem : Problem
    who : str
        The partitioner's name, for error messages.
    safe : bool
        Never get stuck (see above); raise when no feasible placement exists.

    Attributes
    ----------
    units : list of list of int
        Tasks placed together, in the order of their first task.
    unit_of : list of int
        Each task's unit.
    allowed : list of tuple of int
        Devices a unit may use (the intersection over its tasks).
    memory : list of float
        Static memory of each unit.
    device_of : list of int
        Each task's device so far, ``-1`` while unplaced.
    used, load : list of float
        Static memory used on, and work assigned to, each device so far.

    Raises
    ------
    ProblemError
        When a unit has no device it may use or that holds it, when units bound to one
        device each are cut off from each other, or (``safe``) when no feasible
        placement exists.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b"}],
    ...                        "tasks": [{"name": "x", "work": 1, "memory": 3},
    ...                                  {"name": "y", "work": 1, "memory": 3}]})
    >>> placer = Placer(p, "example")
    >>> placer.place(0, [0]), placer.fits(1, 0), placer.feasible(1)   # a is full
    (0, False, [1])
    """

    def __init__(self, problem: Problem, who: str, safe: bool = False):
        p = problem
        self.p, self.who = p, who
        n, m = len(p.tasks), len(p.devices)
        self.unit_of = [-1] * n
        self.units: list[list[int]] = []
        self.label: list[str] = []
        for group, members in p.colocate_groups.items():
            for i in members:
                self.unit_of[i] = len(self.units)
            self.units.append(sorted(members))
            self.label.append(f"collocation group '{group}'")
        for i in range(n):
            if self.unit_of[i] < 0:
                self.unit_of[i] = len(self.units)
                self.units.append([i])
                self.label.append(f"task '{p.tasks[i]}'")
        order = sorted(range(len(self.units)), key=lambda u: self.units[u][0])
        self.units = [self.units[u] for u in order]
        self.label = [self.label[u] for u in order]
        for u, members in enumerate(self.units):
            for i in members:
                self.unit_of[i] = u
        self.capacity = list(p.device_memory)
        self.allowed: list[tuple[int, ...]] = []
        self.memory: list[float] = []
        for u, members in enumerate(self.units):
            common = set(p.allowed[members[0]])
            for i in members[1:]:
                common &= set(p.allowed[i])
            if not common:
                raise ProblemError(f"{self.label[u]}: its tasks share no device they may all run on")
            self.allowed.append(tuple(sorted(common)))
            self.memory.append(sum(p.task_memory[i] for i in members))
            if not any(fits(self.memory[u], self.capacity[d]) for d in common):
                raise ProblemError(f"{self.label[u]}: needs {self.memory[u]:g} of memory, more than "
                                   f"any device it may run on holds")
        self.allowed_set = [frozenset(a) for a in self.allowed]
        self.device_of = [-1] * n
        self.used = [0.0] * m
        self.load = [0.0] * m
        self.all_linked = all(all(row) for row in p.linked)
        # Units with one possible device are not a choice: place them first.
        for u, allowed in enumerate(self.allowed):
            if len(allowed) == 1:
                d = allowed[0]
                if not self.holds(u, d):
                    raise ProblemError(f"{self.label[u]}: device {p.devices[d]}, the only one it may "
                                       f"use, has no memory left for it")
                # The neighbours placed so far had no choice either: nothing can repair a cut link.
                if not self._room(u, d):
                    raise ProblemError(f"{self.label[u]}: device {p.devices[d]}, the only one it may "
                                       f"use, has no link to the only device of a neighbour")
                self.assign(u, d)
        self.safe = safe
        self.completion: dict[int, int] = {}
        if safe:
            found = self._search(_FIRST_SEARCH_NODES + 10 * len(self.units))
            if found is False:
                raise ProblemError(f"no placement of the tasks respects their devices, pins, "
                                   f"collocation groups, memory capacities and links ({who})")
            if found is None:
                raise ProblemError(f"{who}: found no placement that respects memory capacities and "
                                   f"links (search limit reached)")
            self._set_completion(found)
            self.departure_nodes = _DEPARTURE_NODES

    def placed(self, u: int) -> bool:
        """Whether unit ``u`` has a device."""
        return self.device_of[self.units[u][0]] >= 0

    def duration(self, u: int, d: int) -> float:
        """Duration of unit ``u`` on device ``d`` (the sum over its tasks)."""
        members = self.units[u]
        if len(members) == 1:
            return self.p.durations[members[0]][d]
        return sum(self.p.durations[i][d] for i in members)

    def free(self, d: int) -> float:
        """Static memory left on device ``d`` (``inf`` when unlimited)."""
        return self.capacity[d] - self.used[d]

    def holds(self, u: int, d: int, extra: float = 0.0) -> bool:
        """Whether device ``d`` has memory for unit ``u`` besides ``extra``."""
        return fits(self.used[d] + extra + self.memory[u], self.capacity[d])

    def fits(self, u: int, d: int) -> bool:
        """Whether unit ``u`` may go to device ``d`` now (devices, memory, links)."""
        return d in self.allowed_set[u] and self._room(u, d)

    def _room(self, u: int, d: int) -> bool:
        """Memory and links (``d`` known to be allowed)."""
        if not self.holds(u, d):
            return False
        if self.all_linked:
            return True
        p, dev = self.p, self.device_of
        linked = p.linked
        for i in self.units[u]:
            for q, size in p.preds[i]:
                if size and dev[q] >= 0 and not linked[dev[q]][d]:
                    return False
            for q, size in p.succs[i]:
                if size and dev[q] >= 0 and not linked[d][dev[q]]:
                    return False
        return True

    def feasible(self, u: int) -> list[int]:
        """The devices unit ``u`` may go to now."""
        return [d for d in self.allowed[u] if self._room(u, d)]

    def assign(self, u: int, d: int) -> None:
        """Put unit ``u`` on device ``d`` without any check."""
        for i in self.units[u]:
            self.device_of[i] = d
        self.used[d] += self.memory[u]
        self.load[d] += self.duration(u, d)

    def unassign(self, u: int, d: int) -> None:
        """Undo :meth:`assign`."""
        for i in self.units[u]:
            self.device_of[i] = -1
        self.used[d] -= self.memory[u]
        self.load[d] -= self.duration(u, d)

    def _search(self, budget: int) -> dict[int, int] | bool | None:
        """Backtracking search placing every unplaced unit: the placement, False or None.

        ``False``: no placement exists; ``None``: the search stopped after ``budget`` nodes.
        Units with fewer devices and more memory go first; a unit tries the fitting devices
        with the least free memory first (best fit). The state is restored on return.
        """
        todo = [u for u in range(len(self.units)) if not self.placed(u)]
        todo.sort(key=lambda u: (len(self.allowed[u]), -self.memory[u], u))
        stack: list[tuple[int, int]] = []
        choices: list[list] = []
        nodes = 0
        result: dict[int, int] | bool | None = False
        while True:
            k = len(stack)
            if k == len(todo):
                result = dict(stack)
                break
            if len(choices) == k:
                u = todo[k]
                choices.append([sorted(self.feasible(u), key=lambda d: (self.free(d), d)), 0])
            options, pos = choices[k]
            if pos >= len(options):
                choices.pop()
                if not stack:
                    break
                self.unassign(*stack.pop())
                continue
            nodes += 1
            if nodes > budget:
                result = None
                break
            choices[k][1] = pos + 1
            self.assign(todo[k], options[pos])
            stack.append((todo[k], options[pos]))
        for u, d in reversed(stack):
            self.unassign(u, d)
        self.nodes_used = nodes
        return result

    def _set_completion(self, completion: dict[int, int]) -> None:
        self.completion = completion
        self.reserved = [0.0] * len(self.p.devices)
        for u, d in completion.items():
            self.reserved[d] += self.memory[u]

    def _keeps_completion(self, u: int, d: int) -> bool:
        """Whether the completion of the other units stays feasible with ``u`` on ``d``."""
        if not self.holds(u, d, self.reserved[d]):
            return False
        if self.all_linked:
            return True
        p, linked, plan = self.p, self.p.linked, self.completion
        for i in self.units[u]:
            for q, size in p.preds[i]:
                # a neighbour already placed (a pinned one, say) counts as much as a planned one
                c = self.device_of[q] if self.device_of[q] >= 0 else plan.get(self.unit_of[q])
                if size and c is not None and self.unit_of[q] != u and not linked[c][d]:
                    return False
            for q, size in p.succs[i]:
                c = self.device_of[q] if self.device_of[q] >= 0 else plan.get(self.unit_of[q])
                if size and c is not None and self.unit_of[q] != u and not linked[d][c]:
                    return False
        return True

    def _accept(self, u: int, d: int) -> bool:
        """Safe mode: place ``u`` on ``d`` if the other units can still be placed."""
        planned = self.completion.get(u)
        if planned == d or self._keeps_completion(u, d):
            del self.completion[u]
            self.reserved[planned] -= self.memory[u]
            self.assign(u, d)
            return True
        if self.departure_nodes <= 0:
            return False
        self.assign(u, d)
        found = self._search(min(self.departure_nodes, 10 * len(self.units) + 1000))
        self.departure_nodes -= self.nodes_used
        if isinstance(found, dict):
            self._set_completion(found)
            return True
        self.unassign(u, d)
        return False

    def place(self, u: int, preferred: Iterable[int] = ()) -> int:
        """Put ``u`` on the first feasible device of ``preferred``, else on the least loaded.

        The least loaded device is the feasible one where the assigned work plus the
        unit's duration is smallest. Returns the device; raises :class:`NoRoom` when no
        device is left.
        """
        if self.placed(u):
            return self.device_of[self.units[u][0]]
        tried = set()
        for d in preferred:
            if d not in tried and self.fits(u, d):
                tried.add(d)
                if self._take(u, d):
                    return d
        rest = sorted((d for d in self.feasible(u) if d not in tried),
                      key=lambda k: (self.load[k] + self.duration(u, k), k))
        for d in rest:
            if self._take(u, d):
                return d
        raise NoRoom(f"{self.who}: no device left for {self.label[u]} (memory used up, "
                     f"or no link to the devices of its neighbours)")

    def _take(self, u: int, d: int) -> bool:
        if not self.safe:
            self.assign(u, d)
            return True
        return self._accept(u, d)

    def unit_order(self, tasks: Iterable[int]) -> list[int]:
        """Units in the order their first task appears in ``tasks``."""
        seen = set()
        out = []
        for i in tasks:
            u = self.unit_of[i]
            if u not in seen:
                seen.add(u)
                out.append(u)
        return out

    def result(self) -> list[int]:
        """Place every unit still unplaced (least loaded) and return each task's device."""
        for u in range(len(self.units)):
            self.place(u)
        return list(self.device_of)


def partition(problem: Problem, who: str, body: Callable[..., list[int]], **options) -> list[int]:
    """Run the partitioner ``body(placer, **options)`` greedily; when it gets stuck, safely.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
    ...                        "tasks": [{"name": "x", "work": 1, "memory": 2},
    ...                                  {"name": "y", "work": 1, "memory": 2},
    ...                                  {"name": "z", "work": 1, "memory": 4}]})
    >>> def spread(placer):                # x on a and y on b leave no room for z
    ...     placer.place(0, [0]); placer.place(1, [1])
    ...     return placer.result()
    >>> partition(p, "spread", spread)     # the safe placer keeps room for z
    [0, 0, 1]
    """
    try:
        return body(Placer(problem, who), **options)
    except NoRoom:
        return body(Placer(problem, who, safe=True), **options)
