"""Method ``annealing``: simulated annealing over device strings (a DiviML baseline).

The state is a device string (one device per task, collocation groups moving as
one); a string is timed by list scheduling in breadth-first topological order with
the devices fixed (:class:`~schedkit.heuristics.components.OrderedTiming`). The
search starts from the mapping of another method (HEFT by default) and repeats
``iterations`` times:

1. draw a unit with a choice of device and move it to another of its devices, at
   random; a move that breaks memory or links is rejected (it still counts);
2. accept the new string if its makespan ``M'`` is not worse than the current
   ``M``, else with probability ``exp(-(M' - M) / T)`` (Metropolis);
3. cool geometrically, from ``T0`` to ``final_temperature * T0`` at the last iteration.

The initial temperature is calibrated on the instance: ``T0 = -w / ln(p0)`` with
``p0 = initial_acceptance`` and ``w`` the mean worsening among
``min(50, iterations // 10)`` random moves from the start (1% of the starting
makespan when none is worse); those moves count as iterations, and a better one
among them is kept as the best. So the temperature follows the makespan changes
of the instance, whatever its scale or size.

The best string seen is returned, or the start method's own schedule when nothing
beat it: the result is never worse than the start.

Under ``memory_timeline`` a string on which some task never fits its memory level is
worth ``inf`` (:class:`~schedkit.heuristics.search.LevelledTiming`): the calibration
ignores such moves, a move from one such string to another counts as not worse, and any
finite string replaces one. From an ``inf`` start with no finite worsening to measure,
the temperature is calibrated on 1% of the instance's lower bound.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/topcuoglu2002.json")
>>> s = solve(p, "annealing", iterations=300, seed=1)
>>> s.status, s.makespan <= solve(p, "heft").makespan
('heuristic', True)
"""

from __future__ import annotations

import math
import random
import time

from pydantic import Field

from schedkit.methods import register_method
from schedkit.problem.bounds import lower_bound

from schedkit.timing import OrderedTiming

from schedkit.heuristics.search import SearchMethod, SearchOptions
from schedkit.problem.space import PlacementSpace

__all__ = ["Annealing", "AnnealingOptions"]

#: Iterations per task of the annealing that starts an exact solve (deterministic: seed 0).
AUTO_START_ITERATIONS_PER_TASK = 100
#: Above this many tasks the annealing does not offer to start an exact solve.
AUTO_START_MAX_TASKS = 400
#: At most this long, also without a time limit: timed under a memory timeline, a string
#: costs a list schedule (about 35 ms at 400 tasks), and 100 x n of them would take minutes.
AUTO_START_SECONDS = 10.0


class AnnealingOptions(SearchOptions):
    """Options of ``annealing``."""

    start: str | None = "heft"
    """Registered method whose schedule starts the search; ``None``: each task on its
    fastest allowed device."""
    initial_acceptance: float = Field(0.5, gt=0, lt=1)
    """Probability of accepting the mean worsening move at the first iteration: the
    initial temperature is ``-mean / ln(initial_acceptance)``, the mean taken over the
    worsening moves among ``min(50, iterations // 10)`` random moves from the start
    (they count as iterations; 1% of the starting makespan when none is worse)."""
    final_temperature: float = Field(0.01, gt=0)
    """Temperature at the last iteration, as a fraction of the initial temperature."""


@register_method("annealing")
class Annealing(SearchMethod):
    """Simulated annealing over device strings, timed in breadth-first order (DiviML baseline).

    Options: ``seed``, ``iterations``, ``time_limit``, ``start`` (default ``heft``),
    ``insertion``, ``initial_acceptance``, ``final_temperature``. Same seed and
    iterations, same schedule (unless ``time_limit`` cuts the run short).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> Annealing(iterations=100).solve(p).method
    'annealing'
    """

    Options = AnnealingOptions

    @classmethod
    def auto_start(cls, problem):
        """A short seeded annealing from HEFT starts the exact solve (up to 400 tasks)."""
        if len(problem.tasks) > AUTO_START_MAX_TASKS:
            return None
        return {"seed": 0, "iterations": AUTO_START_ITERATIONS_PER_TASK * len(problem.tasks),
                "time_limit": AUTO_START_SECONDS}

    def search(self, space: PlacementSpace, timing: OrderedTiming, device_of: list[int],
               value: float, deadline: float | None) -> tuple[list[int], float]:
        o = self.options
        rng = random.Random(o.seed)
        movable = space.movable
        best, best_value = device_of, value
        if not movable or o.iterations == 0:
            return best, best_value
        current, current_value = device_of, value
        loads = space.loads(current)
        units = space.units
        first = [min(timing.position[k] for k in members) for members in units]
        # Calibration: the mean worsening of random moves from the start sets the temperature.
        samples = min(50, o.iterations // 10)
        worse = []
        for _ in range(samples):
            u = movable[rng.randrange(len(movable))]
            moved = space.move(current, loads, ((u, space.other_device(u, current[units[u][0]], rng)),))
            if moved is not None:
                candidate_value = timing(moved[0], first[u])
                if candidate_value > current_value:
                    if candidate_value < math.inf:  # a string that never fits measures nothing
                        worse.append(candidate_value - current_value)
                elif candidate_value < best_value:
                    best, best_value = moved[0], candidate_value
        scale = value if value < math.inf else lower_bound(space.problem)  # inf: memory_timeline
        mean = sum(worse) / len(worse) if worse else 0.01 * scale
        temperature = -mean / math.log(o.initial_acceptance)
        steps = o.iterations - samples
        cooling = o.final_temperature ** (1.0 / steps) if steps else 1.0
        tick = self.ticks(o.iterations)
        for k in range(steps):
            if deadline is not None and time.perf_counter() > deadline:
                break
            tick(samples + k)
            u = movable[rng.randrange(len(movable))]
            d = space.other_device(u, current[units[u][0]], rng)
            temperature *= cooling
            moved = space.move(current, loads, ((u, d),))
            if moved is None:
                continue
            candidate, candidate_loads = moved
            candidate_value = timing(candidate, first[u])
            # (equal values are no change, inf ones too: inf - inf would be nan)
            delta = candidate_value - current_value if candidate_value != current_value else 0.0
            if delta <= 0 or (temperature > 0 and rng.random() < math.exp(-delta / temperature)):
                current, current_value, loads = candidate, candidate_value, candidate_loads
                timing.keep()
                if current_value < best_value:
                    best, best_value = current, current_value
        tick(o.iterations)  # erases the line
        return best, best_value
