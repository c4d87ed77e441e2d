"""Solving a built model: HiGHS by default (embedded, through highspy), any Pyomo solver by name.

A solve never returns a raw solver answer. The assignment and the per-device
task order are read from the solution, the start times are recomputed exactly
(left-shifted) by :func:`~schedkit.simulator.fixed_order_times`, and the status
says whether optimality was proven.
"""

from __future__ import annotations

import math
import time

import pyomo.environ as pyo
from pyomo.opt import TerminationCondition as TC

from .build import BuiltModel
from .errors import SolverError
from .schedule import Schedule
from .simulator import fixed_order_times, to_schedule

#: Option names of common solvers for a time limit and a relative MIP gap.
_OPTION_NAMES = {
    "gurobi": ("TimeLimit", "MIPGap", "Threads"),
    "cplex": ("timelimit", "mipgap", "threads"),
    "cbc": ("seconds", "ratioGap", "threads"),
    "glpk": ("tmlim", "mipgap", None),
    "scip": ("limits/time", "limits/gap", None),
}


def solve_model(built: BuiltModel, solver: str = "highs", time_limit: float | None = None,
                gap: float | None = None, threads: int | None = None, verbose: bool = False,
                warm_start: bool = True, method: str = "milp") -> Schedule:
    """Solve ``built`` and return its schedule (not yet validated: the method validates).

    Parameters
    ----------
    solver : str
        ``highs`` (default, embedded) or any Pyomo solver name.
    time_limit : float, optional
        Seconds; the schedule's status is ``feasible`` when it stops without proof.
    gap : float, optional
        Relative MIP gap at which to stop (the status is then ``feasible`` unless 0).
    warm_start : bool
        Pass the horizon schedule to the solver as a starting solution (HiGHS).
    """
    began = time.perf_counter()
    if solver in ("highs", "appsi_highs"):
        status, bound = _solve_highs(built, time_limit, gap, threads, verbose, warm_start)
    else:
        status, bound = _solve_pyomo(built, solver, time_limit, gap, threads, verbose)
    seconds = time.perf_counter() - began + built.build_seconds
    problem = built.problem
    if status in ("infeasible", "no_solution"):
        return Schedule(problem=problem.name, method=method, status=status, bound=_finite(bound),
                        solve_seconds=seconds)
    schedule = extract_schedule(built, method=method, status=status, bound=bound, seconds=seconds)
    return schedule


def _finite(value):
    return value if value is not None and math.isfinite(value) else None


def extract_schedule(built: BuiltModel, method: str, status: str, bound, seconds) -> Schedule:
    """Read device choice and per-device order from the loaded values; recompute exact times."""
    p = built.problem
    ctx = built.context
    device_of = []
    for i in range(len(p.tasks)):
        if len(p.allowed[i]) == 1:
            device_of.append(p.allowed[i][0])
        else:
            device_of.append(max(p.allowed[i], key=lambda d: pyo.value(ctx.x(i, d), exception=False) or 0.0))
    starts = [pyo.value(ctx.start(i), exception=False) or 0.0 for i in range(len(p.tasks))]
    exact = fixed_order_times(p, device_of, device_orders(p, device_of, starts))
    bound = _finite(bound)
    schedule = to_schedule(p, device_of, exact, method, status=status, solve_seconds=seconds)
    lower = max(built.lower_bound, bound or 0.0)
    if status == "optimal":
        # Proven optimal: the bound is the objective itself (up to the solver's tolerance).
        lower = max(lower, min(schedule.makespan, bound if bound is not None else schedule.makespan))
    solver_makespan = pyo.value(built.model.makespan, exception=False)
    if status == "optimal" and solver_makespan is not None \
            and schedule.makespan > solver_makespan + 1e-6 * max(1.0, solver_makespan):
        # The read-back schedule is longer than the solver's: optimality is not shown for it.
        status = schedule.status = "feasible"
        lower = max(built.lower_bound, bound or 0.0)
    schedule.bound = min(lower, schedule.makespan) if lower else bound
    if schedule.status == "feasible" and schedule.bound is not None \
            and _closed(schedule.makespan, schedule.bound):
        # The makespan meets a proven lower bound: optimal, whatever stopped the solver.
        schedule.status = "optimal"
    return schedule


def device_orders(problem, device_of, starts) -> list[list[int]]:
    """Task order on every device from solver start times, never against the task graph.

    Sorting by start alone can put a zero-length task after its successor (equal
    starts, or starts within the solver's tolerance). Tasks are instead taken in one
    topological order that always picks the ready task with the earliest start.
    """
    import heapq

    indegree = [len(problem.preds[i]) for i in range(len(problem.tasks))]
    heap = [(starts[i], i) for i in range(len(problem.tasks)) if indegree[i] == 0]
    heapq.heapify(heap)
    orders: list[list[int]] = [[] for _ in problem.devices]
    while heap:
        _, i = heapq.heappop(heap)
        orders[device_of[i]].append(i)
        for j, _ in problem.succs[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, (starts[j], j))
    return orders


# ---------------------------------------------------------------------- HiGHS
def _solve_highs(built, time_limit, gap, threads, verbose, warm_start):
    from pyomo.contrib.appsi.base import TerminationCondition as ATC
    from pyomo.contrib.appsi.solvers.highs import Highs

    opt = Highs()
    if not opt.available():
        raise SolverError("solver 'highs' is not available: install highspy (pip install highspy)")
    opt.config.stream_solver = verbose
    opt.config.load_solution = False
    if time_limit is not None:
        opt.config.time_limit = float(time_limit)
    if gap is not None:
        opt.config.mip_gap = float(gap)
    if threads is not None:
        opt.highs_options["threads"] = int(threads)
    if warm_start and built.warm is not None:
        set_warm_start(built, built.warm)
        opt.config.warmstart = True
    results = opt.solve(built.model)
    tc = results.termination_condition
    has_solution = results.best_feasible_objective is not None
    bound = results.best_objective_bound
    if tc == ATC.optimal:
        # A positive gap is a stop without proof of optimality.
        exact = gap is None or gap == 0 or _closed(results.best_feasible_objective, bound)
        status = "optimal" if exact else "feasible"
    elif tc in (ATC.infeasible, ATC.infeasibleOrUnbounded):
        return "infeasible", None
    elif has_solution:
        status = "feasible"
    else:
        return "no_solution", bound
    results.solution_loader.load_vars()
    return status, bound


def _closed(objective, bound) -> bool:
    if objective is None or bound is None:
        return False
    return objective - bound <= 1e-6 * max(1.0, abs(objective))


def set_warm_start(built: BuiltModel, schedule: Schedule) -> None:
    """Set every variable of ``built`` to the values of ``schedule`` (a starting solution)."""
    p = built.problem
    ctx = built.context
    where = {r.task: r for r in schedule.tasks}
    for i, name in enumerate(p.tasks):
        row = where[name]
        d = p.device_index[row.device]
        for e in p.allowed[i]:
            var = ctx.x_var(i, e)
            if var is not None:
                var.set_value(1 if e == d else 0)
        ctx.start(i).set_value(row.start)
        if len(p.allowed[i]) > 1:
            built.model.end[name].set_value(row.end)
    if hasattr(built.model, "order"):
        for a, b in ctx.order_pairs():
            ra, rb = where[p.tasks[a]], where[p.tasks[b]]
            ctx.order(a, b).set_value(1 if (ra.start, a) <= (rb.start, b) else 0)
    if hasattr(built.model, "makespan"):
        built.model.makespan.set_value(schedule.makespan)


# ---------------------------------------------------------------------- other solvers
def pyomo_solver(solver: str):
    """The Pyomo solver called ``solver``; :class:`SolverError` when it is not available.

    Pyomo logs a traceback of its own when it probes a missing executable: its
    loggers are muted during the probe, the one-line error says it instead.
    """
    import logging

    logger = logging.getLogger("pyomo")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        opt = pyo.SolverFactory(solver)
        available = opt is not None and bool(opt.available(exception_flag=False))
    except Exception:  # some plug-ins raise on probing when their binary is missing
        available = False
    finally:
        logger.setLevel(level)
    if not available:
        raise SolverError(f"solver '{solver}' is not installed or not available to Pyomo "
                          f"(the default 'highs' is always available)")
    return opt


def _solve_pyomo(built, solver, time_limit, gap, threads, verbose):
    opt = pyomo_solver(solver)
    names = _OPTION_NAMES.get(solver.split("_")[0], (None, None, None))
    options = {}
    for value, key in ((time_limit, names[0]), (gap, names[1]), (threads, names[2])):
        if value is not None and key is not None:
            options[key] = value
    try:
        results = opt.solve(built.model, load_solutions=False, tee=verbose, options=options)
    except Exception as exc:
        raise SolverError(f"solver '{solver}' failed: {exc}") from None
    tc = results.solver.termination_condition
    has_solution = len(results.solution) > 0
    bound = None
    try:
        bound = float(results.problem.lower_bound)
    except (TypeError, ValueError, AttributeError):
        pass
    if tc == TC.optimal:
        status = "optimal" if not gap else "feasible"
    elif tc in (TC.infeasible, TC.infeasibleOrUnbounded):
        return "infeasible", None
    elif has_solution:
        status = "feasible"
    else:
        return "no_solution", bound
    built.model.solutions.load_from(results)
    return status, bound
