"""The space of device strings: which are feasible, and moves between them.

A *device string* gives every task one device. :class:`PlacementSpace` applies the
mapping rule of :mod:`schedkit.problem.mapping` to a whole string, and to a move
incrementally (memory loads and links of the moved tasks only). Collocated tasks move
together: a collocation group is one *unit*, on the devices all its members may use;
every other task is a unit of its own. The search heuristics (``annealing``,
``evolution``) and the refinement after coarsening
(:func:`~schedkit.reductions.refine.refined`) move in it.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> space = PlacementSpace(p)
>>> [p.tasks[space.units[u][0]] for u in space.movable]   # 'sample' runs on the cpu only
['embed', 'attn', 'mlp', 'norm', 'logits']
>>> device_of = [0, 0, 0, 0, 0, 1]
>>> space.feasible(device_of)
True
>>> space.move(device_of, space.loads(device_of), [(0, 1)])[0]   # embed to the cpu
[1, 0, 0, 0, 0, 1]
"""

from __future__ import annotations

from typing import Sequence

from schedkit.errors import ProblemError
from schedkit.numerics import fits
from schedkit.problem.mapping import is_feasible_mapping, memory_loads
from schedkit.problem.problem import Problem

__all__ = ["PlacementSpace"]


class PlacementSpace:
    """Feasible device strings of a problem, and moves between them.

    Parameters
    ----------
    problem : Problem

    Attributes
    ----------
    units : list of list of int
        The tasks that move together (a collocation group, or one task), by first task.
    unit_of : list of int
        Each task's unit.
    devices : list of tuple of int
        Devices a unit may use (the intersection over its tasks).
    movable : list of int
        Units with a choice of device.

    Raises
    ------
    ProblemError
        When the tasks of a collocation group share no device.
    """

    def __init__(self, problem: Problem):
        p = problem
        self.problem = p
        n = len(p.tasks)
        groups = p.colocate_groups
        group_of = {i: name for name, members in groups.items() for i in members}
        self.units: list[list[int]] = []
        self.unit_of = [-1] * n
        for i in range(n):
            if self.unit_of[i] >= 0:
                continue
            members = groups[group_of[i]] if i in group_of else [i]
            for k in members:
                self.unit_of[k] = len(self.units)
            self.units.append(list(members))
        self.devices: list[tuple[int, ...]] = []
        for members in self.units:
            common = set(p.allowed[members[0]]).intersection(*(p.allowed[k] for k in members[1:]))
            if not common:
                raise ProblemError(f"collocation group '{group_of[members[0]]}': its tasks share no device")
            self.devices.append(tuple(sorted(common)))
        self.memory = [sum(p.task_memory[k] for k in members) for members in self.units]
        self.capacity = list(p.device_memory)
        self.movable = [u for u, devices in enumerate(self.devices) if len(devices) > 1]
        # Edges that leave a unit and carry data: their ends' devices must be linked.
        self.fully_linked = all(all(row) for row in p.linked)
        self.boundary: list[list[tuple[int, bool]]] = [[] for _ in self.units]
        for i, j, size in p.edges:
            if size == 0 or self.unit_of[i] == self.unit_of[j]:
                continue
            self.boundary[self.unit_of[i]].append((j, True))
            self.boundary[self.unit_of[j]].append((i, False))

    def loads(self, device_of: Sequence[int]) -> list[float]:
        """Static memory used on every device by ``device_of`` (:func:`~schedkit.problem.mapping.memory_loads`)."""
        return memory_loads(self.problem, device_of)

    def feasible(self, device_of: Sequence[int]) -> bool:
        """Whether ``device_of`` is a feasible mapping (:func:`~schedkit.problem.mapping.is_feasible_mapping`).

        The units are the collocation groups, which the mapping rule keeps together, so
        a feasible string also keeps every unit on one device.
        """
        return is_feasible_mapping(self.problem, device_of)

    def other_device(self, u: int, current: int, rng) -> int:
        """A device of unit ``u`` other than ``current``, uniformly at random (``rng``: a ``random.Random``)."""
        devices = self.devices[u]
        k = rng.randrange(len(devices) - 1)
        return devices[k] if devices[k] != current else devices[-1]

    def move(self, device_of: Sequence[int], loads: Sequence[float],
             changes: Sequence[tuple[int, int]]) -> tuple[list[int], list[float]] | None:
        """Move units to new devices: the new string and loads, or ``None`` when infeasible.

        Parameters
        ----------
        device_of, loads : sequences
            A feasible string and its :meth:`loads` (left unchanged).
        changes : sequence of (unit, device)
            Each unit at most once, each device one the unit may use.
        """
        new = list(device_of)
        used = list(loads)
        touched = set()
        for u, d in changes:
            old = device_of[self.units[u][0]]
            if old == d:
                continue
            for k in self.units[u]:
                new[k] = d
            used[old] -= self.memory[u]
            used[d] += self.memory[u]
            touched.add(d)
        for d in touched:
            if not fits(used[d], self.capacity[d]):
                return None
        if not self.fully_linked:
            linked = self.problem.linked
            for u, d in changes:
                for other, outgoing in self.boundary[u]:
                    a, b = (d, new[other]) if outgoing else (new[other], d)
                    if not linked[a][b]:
                        return None
        return new, used
