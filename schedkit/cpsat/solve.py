"""Solve a formulation with CP-SAT and read its answer back as a validated-to-be schedule.

The parent process checks that OR-Tools is installed and that every block has a CP-SAT
form, chooses the integer scale of times (:class:`~schedkit.cpsat.ticks.Ticks`),
and sends the job to the worker (:mod:`schedkit.cpsat.worker`). Its answer is never
taken as it is: the devices and the orders (tasks on each device, transfers on each
channel or port) are kept and the times recomputed exactly in the problem's units, as
for HiGHS (:mod:`schedkit.milp.readback`).
"""

from __future__ import annotations

import importlib.util
import math
import time

from schedkit.blocks.base import has_cp_form
from schedkit.cpsat.ticks import Ticks
from schedkit.cpsat.worker import Answer, Job, run
from schedkit.errors import FormulationError, SolverError
from schedkit.numerics import OPTIMAL_GAP, SOLVER_TOL, closed
from schedkit.problem import Problem
from schedkit.problem.bounds import formulation_bound
from schedkit.schedule import Quality, Result, Termination
from schedkit.semantics.horizon import serial_horizon
from schedkit.validate import canonical
from schedkit.timing import TimingRules, batched_schedule, device_orders, fixed_order_times, to_schedule

#: What to install for CP-SAT.
EXTRA = "pip install 'schedkit[cpsat]'"


def require_cpsat(formulation, problem: Problem) -> None:
    """Raise a one-line error when CP-SAT cannot solve ``formulation`` on ``problem``."""
    if importlib.util.find_spec("ortools") is None:
        raise SolverError(f"solver 'cpsat' needs OR-Tools: {EXTRA}")
    if formulation.objective not in ("makespan", "throughput"):
        raise FormulationError(f"formulation '{formulation.name}': CP-SAT minimises the makespan only, "
                               f"not '{formulation.objective}' (use --solver highs)")
    for block in formulation.blocks:
        if block.applies_to(problem) and not has_cp_form(block):
            raise FormulationError(f"block '{block.kind}' of formulation '{formulation.name}' has no "
                                   f"CP-SAT form (use --solver highs)")


def make_job(problem: Problem, formulation, horizon: float | None, warm=None, time_limit=None,
             workers: int = 1, seed: int = 0, verbose: bool = False) -> Job:
    """The worker's job; ``horizon``: the makespan of a schedule that satisfies every block.

    ``warm``, the solver's hint, is first relabelled into the canonical order of the
    formulation's symmetry blocks (:func:`~schedkit.validate.canonical`).
    """
    warm = canonical(problem, warm, formulation.blocks)
    if horizon is None or not math.isfinite(horizon):
        horizon = serial_horizon(problem)
    ticks = Ticks.choose(problem, horizon)
    # Rounded up, a schedule of makespan H takes at most one more tick per task and edge.
    slack = 0 if ticks.exact else len(problem.tasks) + len(problem.edges)
    return Job(problem=problem, formulation=formulation, ticks=ticks, horizon=ticks.up(horizon) + slack + 1,
               hint=warm, deadline=None if time_limit is None else time.time() + time_limit, workers=workers,
               seed=seed, verbose=verbose)


def accepts(problem: Problem, formulation, schedule) -> bool:
    """Whether the CP-SAT model of ``formulation`` has ``schedule`` as a solution (its devices,
    starts and transfer starts fixed; times must be whole ticks of the chosen scale)."""
    require_cpsat(formulation, problem)
    job = make_job(problem, formulation, schedule.makespan, time_limit=60.0)
    job.fixed = schedule
    return run(job).status in ("OPTIMAL", "FEASIBLE")


def read_answer(problem: Problem, formulation, job: Job, answer: Answer, method: str) -> Result:
    """The :class:`~schedkit.schedule.Result` of the worker's ``answer`` (exact times, honest status)."""
    ticks = job.ticks
    termination = Termination.FINISHED if answer.status in ("OPTIMAL", "INFEASIBLE") else Termination.TIME_LIMIT
    if answer.status == "MODEL_INVALID":
        raise SolverError(f"CP-SAT rejected the model of formulation '{formulation.name}' (MODEL_INVALID)")
    if answer.status == "INFEASIBLE":
        if ticks.exact and not answer.rounded:
            return Result(termination=termination, quality=Quality.INFEASIBLE, method=method,
                          problem=problem.name, seconds=answer.seconds)
        return Result.nothing(method, problem.name, termination,
                              message="CP-SAT found the rounded model infeasible: not a proof "
                                      f"(times rounded to 1/{ticks.scale})").with_seconds(answer.seconds)
    # (a model whose memory was rounded the safe way is a restriction: its bound proves nothing)
    bound = None if answer.rounded else ticks.bound(answer.bound, problem)
    lower = max(formulation_bound(problem, formulation.blocks), bound or 0.0)
    if answer.starts is None:
        return Result.nothing(method, problem.name, termination, bound=lower or None).with_seconds(answer.seconds)
    if answer.batches is not None:
        schedule = batched_schedule(problem, [(i, d, inputs, ticks.time(start)) for i, d, inputs, start in answer.batches],
                                    method)
        return _result(schedule, answer, ticks, lower, bound, termination, method)
    rules = TimingRules.of(formulation.blocks, problem)
    transfers = rules.transfers(problem)
    starts = [ticks.time(s) for s in answer.starts]
    moved = {edge: ticks.time(s) for edge, s in answer.transfer_starts.items()}
    # (under a memory timeline nothing moves before CP-SAT had it: it may wait for a release;
    # holders of a resource keep CP-SAT's order on every unit)
    exact = fixed_order_times(problem, answer.devices, device_orders(problem, answer.devices, starts),
                              transfers, moved or None, not_before=starts if rules.waits else None, starts=starts)
    schedule = to_schedule(problem, answer.devices, exact, method, transfers)
    return _result(schedule, answer, ticks, lower, bound, termination, method)


def _result(schedule, answer, ticks, lower, bound, termination, method) -> Result:
    """The result of CP-SAT's read-back ``schedule``: optimal only when proven in exact ticks."""
    makespan = schedule.makespan
    claimed = ticks.time(answer.objective)
    proven = answer.status == "OPTIMAL" and ticks.exact and not answer.rounded \
        and makespan <= claimed + SOLVER_TOL * max(1.0, claimed)
    if proven:
        lower = max(lower, makespan)
    final = min(lower, makespan) if lower else bound
    # Rounded times prove optimality up to the relative gap HiGHS is held to.
    quality = Quality.OPTIMAL if proven or closed(makespan, final, OPTIMAL_GAP) else Quality.FEASIBLE
    message = None if ticks.exact else f"times rounded up to 1/{ticks.scale} for CP-SAT"
    return Result(termination=termination, quality=quality, schedule=schedule, bound=final, method=method,
                  seconds=answer.seconds, message=message)
