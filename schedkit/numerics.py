"""Tolerances: every numeric comparison of schedkit uses one of these.

Times are unit-free, so every time tolerance is relative, with no absolute floor: a
schedule in nanoseconds is judged as strictly as the same schedule in seconds. A duration
is checked relative to itself (:func:`lasts`), other times relative to the scale of the
schedule (its makespan, or the model's horizon).

Examples
--------
>>> time_tolerance(2000.0), time_tolerance(2e-6)
(0.002, 2e-12)
>>> fits(10.0 + 1e-12, 10.0), fits(10.1, 10.0)
(True, False)
>>> closed(55.0, 54.99999), closed(55.0, 54.9)
(True, False)
>>> shorter(9.999, 10.0), shorter(10.0 - 1e-12, 10.0)
(True, False)
>>> lasts(1.0 - 1e-6, 1.0, 1999.0), lasts((1e6 + 1e-3) - 1e6, 1e-3, 1e6 + 1e-3)
(False, True)
"""

from __future__ import annotations

import math

#: Relative tolerance of every check on a schedule: times are compared within
#: ``REL_TOL * max(1, makespan)``.
REL_TOL = 1e-6
#: Relative distance at which a solver's objective and bound meet (a proof of optimality),
#: and the grid on which solver times are compared when they are read back.
SOLVER_TOL = 1e-6
#: Relative slack added to model bounds derived from a horizon, so that a schedule whose
#: makespan *is* the horizon stays inside them despite rounding in sums of durations.
BOUND_SLACK = 1e-9
#: Relative and absolute slack of a capacity check (memory).
CAPACITY_SLACK = 1e-9
#: Largest relative gap between makespan and bound of a schedule called ``optimal``: an
#: exact solver proves optimality up to its relative MIP gap (HiGHS's default is 1e-4).
OPTIMAL_GAP = 1e-4
#: Relative improvement below which a new schedule does not count as shorter.
IMPROVEMENT = 1e-9
#: Relative tolerance of a duration (a task's run, a transfer's): relative to the duration
#: itself, never to the makespan, so that the slacks of many rows cannot add up.
DURATION_TOL = 1e-9
#: Units in the last place of a time that rounding ``start + duration`` may cost.
ROUNDING_ULPS = 4
#: Absolute slack of a task fitting an idle gap on a timeline.
GAP_SLACK = 1e-12
#: Relative distance from an integer within which a scaled value counts as whole (CP-SAT's
#: integer times and memory).
WHOLE_TOL = 1e-9


def time_tolerance(scale: float | None) -> float:
    """Absolute time tolerance for a schedule of makespan (or horizon) ``scale``."""
    return REL_TOL * abs(scale or 0.0)


def duration_slack(need: float, at: float) -> float:
    """How far a measured ``end - start`` may be from the duration ``need``: :data:`DURATION_TOL`
    of ``need`` plus the rounding of times near ``at`` (the row's end)."""
    return DURATION_TOL * abs(need) + ROUNDING_ULPS * math.ulp(abs(at))


def lasts(run: float, need: float, at: float) -> bool:
    """Whether a row that ends at ``at`` and runs for ``run`` lasts the duration ``need``."""
    return abs(run - need) <= duration_slack(need, at)


def bound_slack(horizon: float) -> float:
    """Absolute slack added to bounds derived from ``horizon`` (see :data:`BOUND_SLACK`)."""
    return BOUND_SLACK * abs(horizon)


def fits(used: float, capacity: float) -> bool:
    """Whether ``used`` fits in ``capacity`` (``math.inf``: unlimited)."""
    return used <= capacity * (1 + CAPACITY_SLACK) + CAPACITY_SLACK


def is_whole(value: float) -> bool:
    """Whether ``value`` is an integer, within :data:`WHOLE_TOL`."""
    return abs(value - round(value)) <= WHOLE_TOL * max(1.0, abs(value))


def whole_units(values, largest: int = 10**6) -> int:
    """The least power of ten ``u <= largest`` that makes every ``value * u`` whole
    (``largest`` when none does: the caller rounds the safe way).

    Examples
    --------
    >>> whole_units([2, 0.5, 1.25]), whole_units([1 / 3], largest=100)
    (100, 100)
    """
    unit = 1
    while unit < largest and not all(is_whole(v * unit) for v in values):
        unit *= 10
    return unit


def closed(objective: float | None, bound: float | None, tolerance: float = SOLVER_TOL) -> bool:
    """Whether a lower ``bound`` meets ``objective``: the objective is then proven optimal."""
    if objective is None or bound is None or not math.isfinite(objective):
        return False
    return objective - bound <= tolerance * abs(objective)


def shorter(candidate: float, incumbent: float) -> bool:
    """Whether ``candidate`` improves on ``incumbent`` by more than rounding."""
    return candidate < incumbent * (1 - IMPROVEMENT)


def finite_or_none(value: float | None) -> float | None:
    """``value`` when it is a finite number, else ``None``."""
    return value if value is not None and math.isfinite(value) else None
