"""From column values to a schedule, and from a schedule to column values.

A solver's values are never taken as they are. Every variable family reads what it
knows (the device of each task, the start times; the ``transfer`` family: each
transfer's start, in ``extras["transfer_starts"]``) into a
:class:`~schedkit.milp.families.Draft`; the order of the tasks on each device (and of the
transfers on each channel or port, under congestion) is taken from the draft and the
times recomputed exactly, left-shifted (under ``memory_timeline`` no earlier than the
solver's own) (:func:`~schedkit.timing.fixed_order_times`). :func:`exact_result` then decides
how good the schedule is proven to be.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.milp import Milp
>>> built = Milp().build(Problem.load("examples/tiny.yaml"))
>>> values = warm_values(built, built.warm)
>>> read_schedule(built, values, "again").makespan == built.warm.makespan
True
"""

from __future__ import annotations

from typing import Sequence

from schedkit.milp.families import Draft
from schedkit.milp.solvers.base import RawSolution
from schedkit.numerics import SOLVER_TOL, closed, finite_or_none
from schedkit.schedule import Quality, Result, Schedule
from schedkit.validate import canonical
from schedkit.timing import batched_schedule, device_orders, fixed_order_times, to_schedule


def warm_values(built, schedule: Schedule) -> list:
    """Column values of ``schedule`` in ``built`` (``None`` for columns no family knows).

    Every MILP start passes here: ``schedule`` is first relabelled into the canonical order of
    the model's symmetry blocks (:func:`~schedkit.validate.canonical`), which their rows accept.
    """
    schedule = canonical(built.problem, schedule, built.blocks)
    values: list = [None] * built.linear.num_cols
    for family in built.context.families.values():
        family.warm(schedule, values)
    return values


def read_schedule(built, values: Sequence[float], method: str) -> Schedule:
    """The schedule the column ``values`` describe: each family's reading, then exact times."""
    p = built.problem
    draft = Draft.empty(len(p.tasks))
    for family in built.context.families.values():
        family.read(values, draft)
    if "batches" in draft.extras:
        return batched_schedule(p, draft.extras["batches"], method)
    device_of = [d if d is not None else p.allowed[i][0] for i, d in enumerate(draft.device_of)]
    starts = [s if s is not None else 0.0 for s in draft.starts]
    # With congestion, the transfers keep the solver's order on every channel and port, and
    # the holders of a resource its order on every unit; with a memory timeline, nothing starts
    # before the solver had it (waiting for a release).
    rules = built.rules
    transfers = rules.transfers(p)
    exact = fixed_order_times(p, device_of, device_orders(p, device_of, starts), transfers,
                              draft.extras.get("transfer_starts"), not_before=starts if rules.waits else None,
                              starts=starts)
    return to_schedule(p, device_of, exact, method, transfers)


def exact_result(built, raw: RawSolution, method: str, seconds: float | None = None) -> Result:
    """The :class:`~schedkit.schedule.Result` of an exact solve's ``raw`` answer.

    The read-back schedule is ``optimal`` when the solver proved its own solution optimal
    and the read-back is not longer, or when its makespan meets a proven lower bound (the
    solver's, or the instance's own); otherwise ``feasible``, with the best proven bound.
    """
    problem = built.problem.name
    if raw.infeasible:
        return Result(termination=raw.termination, quality=Quality.INFEASIBLE, method=method,
                      problem=problem, seconds=seconds)
    bound = finite_or_none(raw.bound)
    if raw.values is None:
        return Result.nothing(method, problem, raw.termination, message=raw.note, bound=bound).with_seconds(seconds)
    schedule = read_schedule(built, raw.values, method)
    makespan = schedule.makespan
    lower = max(built.lower_bound, bound or 0.0)
    # The read-back is never shorter than the solver's own; a longer one is not proven.
    proven = raw.optimal and (raw.objective is None
                              or makespan <= raw.objective + SOLVER_TOL * max(1.0, raw.objective))
    if proven:
        # The proof is of the solver's objective: HiGHS may report a weaker dual bound with
        # it (0 when presolve alone solves the model).
        proof = raw.objective if raw.objective is not None else bound
        lower = max(lower, min(makespan, proof if proof is not None else makespan))
    final = min(lower, makespan) if lower else bound
    quality = Quality.OPTIMAL if proven or closed(makespan, final) else Quality.FEASIBLE
    return Result(termination=raw.termination, quality=quality, schedule=schedule, bound=final,
                  method=method, seconds=seconds)
