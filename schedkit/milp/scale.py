"""Time units the solver can work in: the problem rescaled before the solver sees it.

A solver's tolerances are absolute (HiGHS: 1e-7 on a row, 1e-6 on a MIP gap): times
measured in seconds of a 10 ns kernel, or in microseconds of a day-long pipeline, make
them meaningless, and the answer depends on the unit. The MILP therefore builds and
solves a copy of the problem whose times are multiplied by a power of ten that brings
the horizon near :data:`TARGET`; the schedule it finds is read back in the user's units
(the same device choices and device orders, times recomputed exactly), and bound and
objective are divided back. Horizons within :data:`SAFE` are left alone: the same
model, the same answer as without scaling.

:class:`Rescaling` is that change of unit as a reduction with its inverse, like the
decompositions': :meth:`Rescaling.apply` makes the problem the solver sees and keeps
what the way back needs (the user's problem, the factor, the formulation's timing rules),
:meth:`Rescaling.invert` turns a result of the solver's problem into one of the user's.

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
from dataclasses import dataclass

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


def representable(factor: float, bandwidths) -> float:
    """``factor``, or the power of ten nearest it that leaves every scaled bandwidth
    (``bandwidth / factor``) a normal float: a horizon of 1e20 brought to 1,000 would turn a
    bandwidth of 1e300 into infinity. Times stay proportional; only the solver's unit moves.

    >>> representable(1e-17, [1.6e7, 1e300]), representable(1e-17, [1.6e7])
    (1.0, 1e-17)
    """
    widths = list(bandwidths)
    if not widths:
        return factor
    low = math.ceil(math.log10(max(widths)) - _EXPONENT)     # bandwidth / factor <= 10**_EXPONENT
    high = math.floor(math.log10(min(widths)) + _EXPONENT)   # bandwidth / factor >= 10**-_EXPONENT
    if low > high:
        return factor
    return float(10.0 ** min(max(round(math.log10(factor)), low), high))


#: Largest power of ten, either way, that a scaled bandwidth may reach.
_EXPONENT = 300


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


@dataclass(frozen=True)
class Rescaling:
    """The MILP's change of time unit as a reduction: the solver's problem and the way back.

    Attributes
    ----------
    problem : Problem
        The user's problem.
    factor : float
        Every time of :attr:`scaled` is ``factor`` times that of :attr:`problem`.
    rules : TimingRules
        The formulation's timing rules: with congestion, a schedule keeps its transfer
        orders both ways.
    scaled : Problem
        The problem the solver sees (:attr:`problem` itself when ``factor`` is 1).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> scaling = Rescaling.apply(p, horizon=4.5e-6)
    >>> scaling.factor, scaling.scaled.durations[0]
    (100000000.0, {0: 40000000.0, 1: 180000000.0})
    >>> heft = solve(p, "heft")
    >>> round(scaling.back(scaling.forward(heft)).makespan, 9) == round(heft.makespan, 9)
    True
    """

    problem: Problem
    factor: float
    rules: TimingRules
    scaled: Problem

    @classmethod
    def apply(cls, problem: Problem, horizon: float, rules: TimingRules | None = None) -> Rescaling:
        """The rescaling that brings ``horizon`` (of ``problem``) near :data:`TARGET`."""
        factor = representable(choose_scale(horizon), (link.bandwidth for link in problem.spec.links))
        return cls(problem, factor, rules or TimingRules(), scaled_problem(problem, factor))

    def forward(self, schedule: Schedule | None) -> Schedule | None:
        """A schedule of :attr:`problem` as one of :attr:`scaled` (a warm start); unchanged at factor 1."""
        if schedule is None or self.factor == 1.0:
            return schedule
        return in_units(self.scaled, schedule, rules=self.rules)

    def back(self, schedule: Schedule | None) -> Schedule | None:
        """A schedule of :attr:`scaled` as one of :attr:`problem`; unchanged at factor 1."""
        if schedule is None or self.factor == 1.0:
            return schedule
        return in_units(self.problem, schedule, rules=self.rules)

    def invert(self, result: Result) -> Result:
        """A result of :attr:`scaled` as a result of :attr:`problem`: schedule re-timed, bound divided."""
        return result_in_units(self.problem, result, self.factor, self.rules)
