"""Resources that tasks hold: a :class:`Resource` and the unit timelines :class:`Holds` of a schedule.

A block may ask that every task of a set *hold* a shared resource for its whole run (the
one weight-streaming engine of a cluster, one of ``capacity`` licences), so that at most
``capacity`` of them run at once, on whatever devices. It says so through its
:meth:`~schedkit.blocks.Block.timing_rules` hook
(``rules.replace(resources=rules.resources + (Resource(...),))``), and every timing engine
then books the holders on :class:`Holds`: one :class:`~schedkit.timing.resources.Timeline`
per unit of each resource, a holder on the first unit free over its whole run.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> engine = Resource("engine", frozenset({"attn", "mlp"}))
>>> units = Holds(p, (engine,))
>>> attn, mlp = p.task_index["attn"], p.task_index["mlp"]
>>> units.add(attn, 0.0, 1.2)
>>> units.earliest(mlp, 0.5, 1.5)        # the one unit is busy until 1.2
1.2
>>> Holds(p, (Resource("engine", frozenset({"attn", "mlp"}), capacity=2),)).earliest(mlp, 0.5, 1.5)
0.5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from schedkit.errors import ProblemError
from schedkit.timing.resources import Timeline

__all__ = ["Resource", "Holds"]


@dataclass(frozen=True)
class Resource:
    """A resource that every task of ``tasks`` holds for its whole run; ``capacity`` units.

    Examples
    --------
    >>> Resource("licence", frozenset({"a", "b"}), capacity=2).capacity
    2
    >>> Resource("licence", frozenset({"a"}), capacity=0)
    Traceback (most recent call last):
    ...
    ValueError: resource 'licence': capacity 0 is not a whole number >= 1
    """

    name: str
    tasks: frozenset[str]
    capacity: int = 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"resource {self.name!r}: the name must be a non-empty string")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 1:
            raise ValueError(f"resource '{self.name}': capacity {self.capacity!r} is not a whole number >= 1")
        if not isinstance(self.tasks, frozenset) or not all(isinstance(t, str) for t in self.tasks):
            raise ValueError(f"resource '{self.name}': tasks must be a frozenset of task names")

    def holders(self, problem) -> list[int]:
        """Indices of the tasks of ``problem`` that hold the resource, in task order.

        Raises :class:`~schedkit.errors.ProblemError` naming a task ``problem`` lacks.
        """
        index = problem.task_index
        missing = sorted(t for t in self.tasks if t not in index)
        if missing:
            raise ProblemError(f"resource '{self.name}': task '{missing[0]}' is not in problem '{problem.name}'")
        return sorted(index[t] for t in self.tasks)


class Holds:
    """The units of the resources tasks hold, in one schedule being built.

    Parameters
    ----------
    problem : Problem
    resources : sequence of Resource
        A formulation's :attr:`TimingRules.resources <schedkit.timing.rules.TimingRules.resources>`.
    """

    __slots__ = ("problem", "resources", "held", "_units")

    def __init__(self, problem, resources: Sequence[Resource]):
        self.problem = problem
        self.resources = tuple(resources)
        #: per task, the indices of the resources it holds
        self.held: list[tuple[int, ...]] = [() for _ in problem.tasks]
        for r, resource in enumerate(self.resources):
            for i in resource.holders(problem):
                self.held[i] += (r,)
        # (no insertion index: a unit holds few intervals next to a device's many)
        self._units = [[Timeline() for _ in range(resource.capacity)] for resource in self.resources]

    def holds(self, i: int) -> bool:
        """Whether task ``i`` holds a resource."""
        return bool(self.held[i])

    def earliest(self, i: int, ready: float, length: float, line: Timeline | None = None,
                 insertion: bool = True) -> float:
        """Earliest start at or after ``ready`` of task ``i`` running for ``length``: a unit of
        every resource it holds free over the run and, with ``line``, its device's timeline
        too (first gap with ``insertion``, else after its last interval)."""
        t = ready if line is None else line.earliest(ready, length, insertion)
        if not self.held[i] or length <= 0:
            return t  # (a task of zero duration holds nothing for no time, as on its device)
        while True:
            moved = t
            for r in self.held[i]:
                moved = max(moved, min(unit.earliest(moved, length, True) for unit in self._units[r]))
            if line is not None and moved > t:
                moved = line.earliest(moved, length, insertion)
            if moved <= t:
                return t
            t = moved

    def add(self, i: int, start: float, end: float) -> None:
        """Book task ``i`` over ``[start, end)`` on a unit of every resource it holds (the
        first free over it; :meth:`earliest` said one is)."""
        if end <= start:
            return
        for r in self.held[i]:
            units = self._units[r]
            unit = next((u for u in units if u.earliest(start, end - start, True) <= start), None)
            if unit is None:
                raise ProblemError(f"resource '{self.resources[r].name}': no unit is free for task "
                                   f"'{self.problem.tasks[i]}' over [{start:g}, {end:g})")
            unit.add(start, end)

    def orders(self, order: Sequence[int], starts: Sequence[float], ends: Sequence[float]) -> list[list[int]]:
        """Per unit of every resource, its holders in ``order``: each holder, taken in ``order``
        (a solver's start order), goes to the unit whose last holder ended first by
        ``starts`` and ``ends``. A read-back keeps these chains as it keeps device orders."""
        chains = []
        for r, resource in enumerate(self.resources):
            units: list[list[int]] = [[] for _ in range(resource.capacity)]
            for i in order:
                if r in self.held[i] and ends[i] > starts[i]:
                    min(units, key=lambda u: ends[u[-1]] if u else float("-inf")).append(i)
            chains.extend(unit for unit in units if len(unit) > 1)
        return chains
