"""``--solver cpsat`` and ``--solver auto``: CP-SAT alone, or raced against HiGHS.

The two exact solvers are strong on different instances (CP-SAT on tight disjunctive
ones, job shops; HiGHS where the LP bound is good). ``auto`` runs HiGHS in this process
and CP-SAT, with two workers, in its worker process: CP-SAT starts from the same schedule
as HiGHS (a solution hint); each schedule it finds is offered to HiGHS as it comes (HiGHS's
user solution) and each bound it proves raises HiGHS's; the first proof of optimality
stops the other. HiGHS races at full speed for the first twentieth of the time limit
(2-10 s), where small models are proven, then takes a tenth of its core unless it is within
1 % of a proof (:class:`~schedkit.milp.race.Pace`): on two cores, CP-SAT's second worker proves
more than HiGHS's full core (``benchmarks/exact.py``). The worker process starts with the
method, so that it has loaded OR-Tools by the time the model is built (a program's later
solves find a spare one loaded); the result says which solver proved it.

Examples
--------
>>> choose_solver("highs", threads=2), choose_solver("auto", threads=1)
('highs', 'highs')
"""

from __future__ import annotations

import importlib.util
import time

from schedkit.errors import SchedkitError, SolverError
from schedkit.cpsat import Worker, make_job, read_answer, require_cpsat
from schedkit.milp.race import Pace
from schedkit.numerics import OPTIMAL_GAP, closed
from schedkit.problem import Problem
from schedkit.schedule import Quality, Result, Termination



def cpsat_installed() -> bool:
    """Whether OR-Tools can be loaded (in a worker process)."""
    return importlib.util.find_spec("ortools") is not None


def choose_solver(name: str | None, threads: int) -> str:
    """The solver ``name`` means: ``auto`` (or none) races both where OR-Tools is installed
    and two threads are allowed, else it is ``highs``."""
    if name not in (None, "auto"):
        return name
    return "auto" if cpsat_installed() and threads >= 2 else "highs"


def solve_cpsat(problem: Problem, formulation, warm, horizon: float | None, time_limit: float | None,
                workers: int, seed: int, verbose: bool, method: str, worker: Worker | None = None) -> Result:
    """CP-SAT alone on ``problem`` (in ``worker``, or a new worker process), read back exactly."""
    require_cpsat(formulation, problem)
    job = make_job(problem, formulation, horizon, warm, time_limit, workers, seed, verbose)
    answer = (worker or Worker(verbose)).solve(job)
    if answer is None:  # interrupted before CP-SAT had anything: the start schedule, if any
        return not_worse_than(Result.nothing(method, problem.name, Termination.INTERRUPTED), warm)
    return not_worse_than(read_answer(problem, formulation, job, answer, method), warm)


#: CP-SAT's workers beside HiGHS's one thread (HiGHS is paced to leave them the cores, see
#: :class:`~schedkit.milp.race.Pace`).
RACING_WORKERS = 2
#: HiGHS races at full speed for this share of the time limit, within these seconds (then
#: paced: with a tenth of 60 s and a third of the core, er35x4-s1 of benchmarks/exact.py stayed
#: unproven in 1 run of 3; with a quarter, in 2 of 6; with a tenth, in none of 4).
FULL_SPEED_SHARE, FULL_SPEED_SECONDS = 0.05, (2.0, 10.0)


def cp_beside(problem: Problem, formulation, warm, deadline: float | None, to_model, factor: float,
              seed: int, verbose: bool, method: str, found: list, worker: Worker):
    """The helper that races CP-SAT beside HiGHS (see :func:`schedkit.milp.race.run_beside`).

    ``to_model(schedule)`` gives a schedule of ``problem`` as HiGHS's column values and its
    makespan in the model's units (``factor`` times the problem's); ``found`` receives
    CP-SAT's result; ``worker``: the (started) process that solves it.
    """

    def helper(shared) -> None:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0.5:
            return
        low, high = FULL_SPEED_SECONDS
        shared.pace = Pace(shared, high if left is None else min(high, max(low, FULL_SPEED_SHARE * left)))
        try:
            job = make_job(problem, formulation, warm.makespan if warm else None, warm, left, RACING_WORKERS, seed,
                           verbose)
        except SolverError:  # (times beyond CP-SAT's integers: HiGHS races alone)
            return

        def improving(found) -> None:
            # each schedule CP-SAT finds is offered to HiGHS as it comes, its bound too
            try:
                better = read_answer(problem, formulation, job, found, method)
                values, makespan = to_model(better.schedule)
            except SchedkitError:
                return  # not one HiGHS can take: the race goes on
            shared.offer(makespan, values)
            if better.bound is not None:
                shared.proved(better.bound * factor)

        def bounded(ticks) -> None:
            bound = job.ticks.bound(ticks, problem)
            if bound is not None:
                shared.proved(bound * factor)

        try:
            answer = worker.solve(job, stop=shared.stop, improving=improving, bounded=bounded)
            if answer is None:
                return  # HiGHS finished first
            result = read_answer(problem, formulation, job, answer, method)
        except SchedkitError:
            return  # CP-SAT cannot take part (a block it cannot load, a worker that died): HiGHS alone
        found.append(result)
        if result.schedule is not None:
            values, makespan = to_model(result.schedule)
            shared.offer(makespan, values)
        if result.bound is not None:
            shared.proved(result.bound * factor)
        if result.quality is Quality.OPTIMAL:
            shared.stop.set()

    return helper


def combine(highs: Result, cp: Result | None) -> Result:
    """The better answer of the race, with the better bound, saying who proved what."""
    if cp is None:
        return highs
    candidates = [r for r in (highs, cp) if r.schedule is not None]
    if not candidates:
        return highs if highs.quality is Quality.INFEASIBLE or cp.quality is not Quality.INFEASIBLE else cp
    best = min(candidates, key=lambda r: r.schedule.makespan)
    bounds = [b for b in (highs.bound, cp.bound) if b is not None]
    bound = min(max(bounds), best.schedule.makespan) if bounds else None
    proven = [name for name, r in (("HiGHS", highs), ("CP-SAT", cp)) if r.quality is Quality.OPTIMAL]
    optimal = bool(proven) or closed(best.schedule.makespan, bound, OPTIMAL_GAP)
    who = (f"proved optimal by {' and '.join(proven)}" if proven else
           "HiGHS and CP-SAT raced" + ("; their bounds meet" if optimal else ""))
    message = "; ".join(m for m in (best.message, f"{who}; schedule from "
                                    f"{'CP-SAT' if best is cp else 'HiGHS'}") if m)
    return _updated(best, quality=Quality.OPTIMAL if optimal else Quality.FEASIBLE, bound=bound,
                    message=message)


def not_worse_than(result: Result, warm) -> Result:
    """A solver's result, or the start schedule when the solver found nothing better (its
    read-back, timed exactly, may be longer than the start: times rounded for CP-SAT, or a
    formulation without ``precedence``, whose solutions are still timed along the edges).

    The start schedule satisfies every block: a claim of infeasibility beside it is a solver
    fault, never passed on as a proof.
    """
    if warm is not None and result.quality is Quality.INFEASIBLE:
        return _updated(result, schedule=warm.model_copy(update={"method": result.method}),
                        quality=Quality.FEASIBLE, bound=None,
                        message="CP-SAT called the model infeasible, but the start schedule satisfies "
                                "every block: that claim is a solver fault, not a proof")
    if warm is None or (result.schedule is not None and result.schedule.makespan <= warm.makespan) \
            or result.quality is Quality.INFEASIBLE:
        return result
    return _updated(result, schedule=warm.model_copy(update={"method": result.method}),
                    quality=Quality.OPTIMAL if closed(warm.makespan, result.bound) else Quality.FEASIBLE,
                    message="the solver found nothing shorter than the start schedule")


def _updated(result: Result, **changes) -> Result:
    """``result`` with ``changes``, validated again (another schedule brings its own objective)."""
    if "schedule" in changes and "objective" not in changes:
        changes["objective"] = None
    return Result.model_validate({**result.model_dump(), **changes})
