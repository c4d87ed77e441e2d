"""Times as integers for CP-SAT: the scale, chosen from the data, and what rounding costs.

CP-SAT's variables are integers. A problem whose durations and transfer times are all
multiples of ``1 / scale`` for a power of ten ``scale`` (up to :data:`MAX_EXACT_TICKS` ticks
in the horizon) is solved exactly: the answer in ticks is the answer. Otherwise every
time is rounded *up* to ``1 / scale`` with ``scale`` chosen so that the horizon spans
about :data:`INEXACT_TICKS` ticks: the solver's schedule, re-timed in the problem's own
units with the same orders, is valid and no longer than it claimed; its bound, lowered by
one tick per task and per edge (a path of the schedule holds each at most once), is a valid bound of the problem
(:meth:`Ticks.bound`).

Examples
--------
>>> from schedkit import Problem
>>> ticks = Ticks.choose(Problem.load("examples/ft06.json"), horizon=60)
>>> ticks.scale, ticks.exact
(1, True)
>>> ticks = Ticks.choose(Problem.load("examples/tiny.yaml"), horizon=5.0)
>>> ticks.scale, ticks.exact, ticks.up(0.4)
(100000, True, 40000)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedkit.errors import SolverError
from schedkit.numerics import is_whole, whole_units
from schedkit.problem import Problem

#: The most ticks an exact scale may give the horizon.
MAX_EXACT_TICKS = 10**8
#: About how many ticks the horizon spans when no power of ten makes every time an integer.
INEXACT_TICKS = 10**7
#: The largest horizon in ticks: CP-SAT's integers reach 2^62, and a model adds two horizons
#: (an end and a transfer) in some of its rows.
MAX_TICKS = 2**60


@dataclass(frozen=True)
class Ticks:
    """``scale`` ticks per time unit; ``exact``: every time of the problem is a whole number of ticks."""

    scale: int
    exact: bool

    @classmethod
    def choose(cls, problem: Problem, horizon: float) -> Ticks:
        """The scale of ``problem`` whose schedules end by ``horizon``."""
        values = [t for i, table in enumerate(problem.durations) for d, t in table.items()
                  if d in problem.allowed[i]]
        if problem.inputs > 1:  # the batches' times too
            b = problem.batches
            values += [b.time(i, d, size) for i in range(len(problem.tasks)) for d in problem.allowed[i]
                       for size in b.sizes[i][d]]
        for i, j, size in problem.edges:
            values += [problem.comm_time(size, u, v) for u in problem.allowed[i] for v in problem.allowed[j]
                       if problem.pair_allowed(size, u, v) and problem.moves(size, u, v)]
        horizon = max(horizon, max(values, default=0.0), 1e-12)
        if horizon > MAX_TICKS:  # (a tick is at least one unit: CP-SAT's integers cannot hold it)
            longest = max(((t, i) for i, table in enumerate(problem.durations) for t in table.values()),
                          default=(0.0, None))
            named = f"; its longest task, '{problem.tasks[longest[1]]}', takes {longest[0]:g}" \
                if longest[1] is not None else ""
            raise SolverError(f"CP-SAT counts time in integers up to {MAX_TICKS:.0e}: problem "
                              f"'{problem.name}' needs a horizon of {horizon:g}{named} (use --solver highs)")
        largest = 10 ** max(0, math.floor(math.log10(MAX_EXACT_TICKS / horizon)))
        scale = whole_units(values, largest)
        if all(is_whole(v * scale) for v in values):
            return cls(scale, True)
        return cls(max(1, 10 ** math.floor(math.log10(INEXACT_TICKS / horizon))), False)

    def up(self, time: float) -> int:
        """``time`` in ticks, rounded up (exact on a whole number of ticks)."""
        scaled = time * self.scale
        return int(round(scaled)) if is_whole(scaled) else int(math.ceil(scaled))

    def time(self, ticks: float) -> float:
        """``ticks`` in the problem's units."""
        return ticks / self.scale

    def bound(self, ticks: float | None, problem: Problem) -> float | None:
        """A lower bound of ``problem`` from a bound in ticks of the rounded-up problem.

        Exact ticks change nothing. Rounded up, a schedule's makespan grows by less than
        one tick per task and per transfer on its longest path, which holds each at most once.
        """
        if ticks is None:
            return None
        if self.exact:
            return ticks / self.scale
        return max(0.0, (ticks - len(problem.tasks) - len(problem.edges)) / self.scale)

