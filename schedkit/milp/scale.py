"""Time units the solver can work in: the problem rescaled before the solver sees it.

A solver's tolerances are absolute (HiGHS: 1e-7 on a row, 1e-6 on a MIP gap): times
measured in seconds of a 10 ns kernel, or in microseconds of a day-long pipeline, make
them meaningless, and the answer depends on the unit. The MILP therefore builds and
solves a copy of the problem whose times are multiplied by a power of ten that brings
the horizon near :data:`TARGET`; the schedule it finds is read back in the user's units
(the same device choices and device orders, times recomputed exactly), and bound and
objective are divided back. Horizons within :data:`SAFE` are left alone: the same
model, the same answer as without scaling.

Examples
--------
>>> choose_scale(4.5), choose_scale(1e-6), choose_scale(3e8)
(1.0, 1000000000.0, 1e-05)
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> q = scaled_problem(p, 1000.0)
>>> q.durations[0], round(q.comm_time(4e6, 0, 1), 6)
({0: 400.0, 1: 1800.0}, 260.0)
"""

from __future__ import annotations

import math

from schedkit.problem import Problem
from schedkit.schedule import Result, Schedule
from schedkit.timing import TimingRules, retime

#: Horizons the solver handles as they are (times from 1 to 100 000 units).
SAFE = (1.0, 1e5)
#: The horizon a rescaled problem gets, up to a power of ten.
TARGET = 1e3


def choose_scale(horizon: float) -> float:
    """The power of ten that brings ``horizon`` near :data:`TARGET` (1 when it is within :data:`SAFE`)."""
    if not horizon or not math.isfinite(horizon) or SAFE[0] <= horizon <= SAFE[1]:
        return 1.0
    return 10.0 ** round(math.log10(TARGET / horizon))


def scaled_problem(problem: Problem, factor: float) -> Problem:
    """``problem`` with every time multiplied by ``factor``: durations, work, latencies, transfers.

    Sizes and memory are unchanged; bandwidths are divided by ``factor`` so that a transfer
    of the same size takes ``factor`` times as long.
    """
    if factor == 1.0:
        return problem
    data = problem.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for task in data["tasks"]:
        if "durations" in task:
            task["durations"] = {d: _times(v, factor) for d, v in task["durations"].items()}
        if "work" in task:
            task["work"] *= factor
    for link in data.get("links", []):
        link["bandwidth"] /= factor
        link["latency"] = link.get("latency", 0.0) * factor
    for edge in data.get("edges", []):
        if "transfer_times" in edge:
            edge["transfer_times"] = {pair: t * factor for pair, t in edge["transfer_times"].items()}
    return Problem.from_dict(data)


def _times(value, factor: float):
    if isinstance(value, dict):  # per-batch durations
        return {b: t * factor for b, t in value.items()}
    return value * factor


def in_units(problem: Problem, schedule: Schedule, method: str | None = None,
             rules: TimingRules | None = None) -> Schedule:
    """``schedule`` (of a rescaled copy) re-timed on ``problem``: same devices, same device
    orders (and, when the formulation's ``rules`` congest transfers, same transfer orders).

    The times are recomputed exactly and left-shifted by :func:`~schedkit.timing.retime`,
    so that no rounding of the scaling reaches the user.
    """
    return retime(problem, schedule, method or schedule.method, rules)


def result_in_units(problem: Problem, result: Result, factor: float, rules: TimingRules | None = None) -> Result:
    """A result of the rescaled copy as a result of ``problem``: schedule re-timed, bound divided."""
    if factor == 1.0:
        return result
    update = {"bound": None if result.bound is None else result.bound / factor,
              "objective": None}
    if result.schedule is not None:
        update["schedule"] = in_units(problem, result.schedule, rules=rules)
    copy = result.model_copy(update=update)
    # The objective follows the re-timed schedule (the validator of Result fills it in).
    return Result.model_validate(copy.model_dump())
