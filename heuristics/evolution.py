"""Method ``evolution``: a biased (1+1) evolutionary algorithm over device strings (a DiviML baseline).

The state is a device string (one device per task, collocation groups moving as
one), timed like ``annealing``'s by list scheduling in breadth-first topological
order with the devices fixed. *Biased*: the parent starts from each task's fastest
allowed device (when memory, collocation or links forbid that string, from MET's
mapping), or from the mapping of the method named by ``start``. Each of the
``iterations`` steps:

1. mutate: every unit with a choice of device moves, with probability ``1/k``
   (``k`` such units), to another of its devices drawn uniformly; when none
   moved, one drawn uniformly does;
2. reject the child if it breaks memory or links;
3. the child replaces the parent if its makespan is not worse.

The parent at the end is the best string seen (or the start method's own schedule
when nothing beat it).

Under ``memory_timeline`` a string on which some task never fits its memory level is
worth ``inf`` (:class:`~schedkit.heuristics.search.LevelledTiming`): an ``inf`` parent is
replaced by any child, and the method raises when the parent is still ``inf`` at the end.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> s = solve(p, "evolution", iterations=300)
>>> s.status, s.makespan >= s.bound
('heuristic', True)
"""

from __future__ import annotations

import random
import time

from schedkit.methods import register_method

from schedkit.timing import OrderedTiming

from schedkit.heuristics.search import SearchMethod, SearchOptions
from schedkit.problem.space import PlacementSpace

__all__ = ["Evolution"]


@register_method("evolution")
class Evolution(SearchMethod):
    """Biased (1+1) evolutionary algorithm over device strings, from the fastest devices (DiviML baseline).

    Options: ``seed``, ``iterations``, ``time_limit``, ``start`` (default ``None``:
    each task's fastest device), ``insertion``. Same seed and iterations, same
    schedule (unless ``time_limit`` cuts the run short).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> Evolution(iterations=100, seed=3).solve(p).method
    'evolution'
    """

    Options = SearchOptions

    def search(self, space: PlacementSpace, timing: OrderedTiming, device_of: list[int],
               value: float, deadline: float | None) -> tuple[list[int], float]:
        o = self.options
        rng = random.Random(o.seed)
        movable = space.movable
        if not movable:
            return device_of, value
        rate = 1.0 / len(movable)
        units = space.units
        first = [min(timing.position[k] for k in members) for members in units]
        parent, parent_value = device_of, value
        loads = space.loads(parent)
        tick = self.ticks(o.iterations)
        for k in range(o.iterations):
            if deadline is not None and time.perf_counter() > deadline:
                break
            tick(k)
            chosen = [u for u in movable if rng.random() < rate]
            if not chosen:
                chosen = [movable[rng.randrange(len(movable))]]
            changes = [(u, space.other_device(u, parent[units[u][0]], rng)) for u in chosen]
            moved = space.move(parent, loads, changes)
            if moved is None:
                continue
            child, child_loads = moved
            child_value = timing(child, min(first[u] for u in chosen))
            if child_value <= parent_value:
                parent, parent_value, loads = child, child_value, child_loads
                timing.keep()
        tick(o.iterations)  # erases the line
        return parent, parent_value
