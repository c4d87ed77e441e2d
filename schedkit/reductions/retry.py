"""Parts the time limit stopped before a proof, solved again with the time the others left.

Under a time limit each part starts with its share of the time left (:mod:`~schedkit.reductions.budget`),
so a hard part gets no more than an easy one, and the easy ones finish early: a round of
``bridge_dp`` on Inception v1 ended after 25 s of its 46 s with a few modules unproven.
:func:`retry_unproven` spends what is left of the round on the parts an exact inner method
stopped on its time limit, again and again while one of them improves, and
:func:`kept` keeps, per part, the better schedule and the larger bound of the two tries
(both are valid for the part: a bound of either try holds for every schedule of it).

Examples
--------
>>> from schedkit.schedule import Schedule, TaskRun
>>> rows = lambda end: Schedule(problem="p", method="m", status="feasible",
...                             tasks=[TaskRun(task="a", device="d", start=0, end=end)])
>>> first = Result(termination="time_limit", quality="feasible", schedule=rows(5.0), bound=3.0)
>>> second = Result(termination="time_limit", quality="feasible", schedule=rows(6.0), bound=5.0)
>>> both = kept(first, second)
>>> both.objective, both.bound, both.status      # the first's schedule, the second's bound: proven
(5.0, 5.0, 'optimal')
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from schedkit.numerics import OPTIMAL_GAP, closed
from schedkit.schedule import Quality, Result, Termination

__all__ = ["kept", "unproven", "retry_unproven"]

#: A retry needs at least this many seconds left in the round.
RETRY_LEAST = 1.0


def unproven(result: Result) -> bool:
    """Whether an exact part stopped on its time limit without a proof (it may gain from more time)."""
    return result.provenance == "exact" and result.termination is Termination.TIME_LIMIT \
        and result.quality in (Quality.FEASIBLE, Quality.NONE)


def kept(old: Result, new: Result) -> Result:
    """The better of two tries at one part: ``new`` when it proves infeasibility; else the
    shorter schedule, with the larger of the two bounds (``optimal`` when they meet)."""
    if new.quality is Quality.INFEASIBLE:
        return new
    bounds = [b for b in (old.bound, new.bound) if b is not None]
    bound = max(bounds) if bounds else None
    base = old
    if new.schedule is not None and (old.schedule is None or new.objective < old.objective):
        base = new
    if base.schedule is not None and bound is not None:
        bound = min(bound, base.objective)
    if base is old and bound == old.bound:
        return old
    quality = base.quality
    if base.schedule is not None and bound is not None and closed(base.objective, bound, OPTIMAL_GAP):
        quality = Quality.OPTIMAL
    return base.model_copy(update={"bound": bound, "quality": quality})


def retry_unproven(results: list[Result], solve_again: Callable[[Sequence[int], float], list[Result]],
                   end: float | None) -> list[Result]:
    """``results`` with the :func:`unproven` ones solved again until ``end`` (``time.time()``).

    ``solve_again(indices, end)`` solves the parts at ``indices`` by ``end`` and returns
    their new results; it is called while time is left (at least :data:`RETRY_LEAST` s),
    some part is unproven, and the last call improved one.
    """
    results = list(results)
    while end is not None and end - time.time() >= RETRY_LEAST:
        todo = [k for k, r in enumerate(results) if unproven(r)]
        if not todo:
            break
        improved = False
        for k, new in zip(todo, solve_again(todo, end)):
            better = kept(results[k], new)
            improved |= better is not results[k]
            results[k] = better
        if not improved:
            break
    return results
