"""Solving a built model: HiGHS by default (embedded, through highspy), any Pyomo solver by name.

A solve never returns a raw solver answer. The assignment and the per-device
task order are read from the solution, the start times are recomputed exactly
(left-shifted) by :func:`~schedkit.timing.fixed_order_times`, and the status
says whether optimality was proven.
"""

from __future__ import annotations

import math
import time

from schedkit.milp.context import BuiltModel
from schedkit.errors import SolverError
from schedkit.schedule import Schedule
from schedkit.timing import device_orders, fixed_order_times, to_schedule

#: Option names of common solvers for a time limit and a relative MIP gap.
_OPTION_NAMES = {
    "gurobi": ("TimeLimit", "MIPGap", "Threads"),
    "cplex": ("timelimit", "mipgap", "threads"),
    "cbc": ("seconds", "ratioGap", "threads"),
    "glpk": ("tmlim", "mipgap", None),
    "scip": ("limits/time", "limits/gap", None),
    "appsi": ("time_limit", "mip_rel_gap", "threads"),
}


def solve_model(built: BuiltModel, solver: str = "highs", time_limit: float | None = None,
                gap: float | None = None, threads: int | None = None, verbose: bool = False,
                warm_start: bool = True, method: str = "milp") -> Schedule:
    """Solve ``built`` and return its schedule (not yet validated: the method validates).

    Parameters
    ----------
    solver : str
        ``highs`` (default: the embedded HiGHS gets the sparse model directly) or any
        Pyomo solver name (the Pyomo model is made and handed to it).
    time_limit : float, optional
        Seconds; the schedule's status is ``feasible`` when it stops without proof.
    gap : float, optional
        Relative MIP gap at which to stop (the status is then ``feasible`` unless 0).
    warm_start : bool
        Pass the horizon schedule to the solver as a starting solution (HiGHS).
    """
    began = time.perf_counter()
    if solver == "highs":
        status, bound, values, objective = _solve_highs(built, time_limit, gap, threads, verbose, warm_start)
    else:
        status, bound, values, objective = _solve_pyomo(built, solver, time_limit, gap, threads, verbose)
    seconds = time.perf_counter() - began + built.build_seconds
    problem = built.problem
    if status in ("infeasible", "no_solution"):
        return Schedule(problem=problem.name, method=method, status=status, bound=_finite(bound),
                        solve_seconds=seconds)
    return extract_schedule(built, values, method=method, status=status, bound=bound, seconds=seconds,
                            objective=objective)


def _finite(value):
    return value if value is not None and math.isfinite(value) else None


def extract_schedule(built: BuiltModel, values, method: str, status: str, bound, seconds,
                     objective=None) -> Schedule:
    """Read device choice and per-device order from column ``values``; recompute exact times.

    ``objective`` is the solver's makespan: a read-back schedule longer than it is not
    called optimal.
    """
    p = built.problem
    ctx = built.context
    device_of = []
    for i in range(len(p.tasks)):
        if len(p.allowed[i]) == 1:
            device_of.append(p.allowed[i][0])
        else:
            device_of.append(max(p.allowed[i], key=lambda d: values[ctx.x_col(i, d)] or 0.0))
    starts = [values[ctx.start_col(i)] or 0.0 for i in range(len(p.tasks))]
    exact = fixed_order_times(p, device_of, device_orders(p, device_of, starts))
    bound = _finite(bound)
    schedule = to_schedule(p, device_of, exact, method, status=status, solve_seconds=seconds)
    lower = max(built.lower_bound, bound or 0.0)
    if status == "optimal":
        # Proven optimal: the bound is the objective itself (up to the solver's tolerance).
        lower = max(lower, min(schedule.makespan, bound if bound is not None else schedule.makespan))
    if status == "optimal" and objective is not None \
            and schedule.makespan > objective + 1e-6 * max(1.0, objective):
        # The read-back schedule is longer than the solver's: optimality is not shown for it.
        status = schedule.status = "feasible"
        lower = max(built.lower_bound, bound or 0.0)
    schedule.bound = min(lower, schedule.makespan) if lower else bound
    if schedule.status == "feasible" and schedule.bound is not None \
            and _closed(schedule.makespan, schedule.bound):
        # The makespan meets a proven lower bound: optimal, whatever stopped the solver.
        schedule.status = "optimal"
    return schedule


# ---------------------------------------------------------------------- HiGHS
def highs_for(lin, time_limit=None, gap=None, verbose=False):
    """A ``highspy.Highs`` holding the sparse model ``lin`` (passed as arrays, no Pyomo object).

    HiGHS's own ``threads`` option is left alone: its branch and bound runs on one core,
    and its thread pool is sized once per process.
    """
    import highspy
    import numpy as np

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if gap is not None:
        h.setOptionValue("mip_rel_gap", float(gap))
    model = highspy.HighsLp()
    model.num_col_ = lin.num_cols
    model.num_row_ = lin.num_rows
    cost = np.zeros(lin.num_cols)
    for col, coef in lin.objective.items():
        cost[col] = coef
    model.col_cost_ = cost
    model.col_lower_ = np.array(lin.lower, dtype=float)
    model.col_upper_ = np.array(lin.upper, dtype=float)
    model.row_lower_ = np.array(lin.row_lower, dtype=float)
    model.row_upper_ = np.array(lin.row_upper, dtype=float)
    model.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    model.a_matrix_.num_col_ = lin.num_cols
    model.a_matrix_.num_row_ = lin.num_rows
    model.a_matrix_.start_ = np.array(lin.row_start, dtype=np.int32)
    model.a_matrix_.index_ = np.array(lin.row_index, dtype=np.int32)
    model.a_matrix_.value_ = np.array(lin.row_value, dtype=float)
    integer, continuous = highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
    model.integrality_ = [integer if flag else continuous for flag in lin.integer]
    if h.passModel(model) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS rejected the model")
    return h


def set_start(h, values) -> None:
    """Give HiGHS a starting solution: ``values`` per column, ``None`` where unknown."""
    import numpy as np

    index = np.array([c for c, v in enumerate(values) if v is not None], dtype=np.int32)
    h.setSolution(len(index), index, np.array([values[c] for c in index], dtype=float))


def _solve_highs(built, time_limit, gap, threads, verbose, warm_start):
    """The embedded HiGHS on the sparse model, started from the horizon schedule.

    With ``threads >= 2`` a helper thread proves lower bounds on subsets of tasks
    (:mod:`schedkit.milp.subsets`) and stops HiGHS once one meets its incumbent.
    """
    import highspy

    from schedkit.milp.race import Shared, deadline_after, default_threads, run_beside

    h = highs_for(built.linear, time_limit, gap, verbose)
    if warm_start and built.warm is not None:
        set_start(h, warm_values(built, built.warm))
    shared = None
    if (threads or default_threads()) >= 2 and _bounds_help(built):
        from schedkit.milp.subsets import subset_bounds

        shared = Shared(tolerance=max(gap or 0.0, 1e-6))
        deadline = deadline_after(time_limit)
        run_beside(h, lambda s: subset_bounds(built, built.warm, s, deadline, verbose), shared)
    else:
        h.run()
    state = h.getModelStatus()
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    bound = info.mip_dual_bound if info.valid else None
    if shared is not None and math.isfinite(shared.bound):
        bound = shared.bound if bound is None else max(bound, shared.bound)
    S = highspy.HighsModelStatus
    if state == S.kOptimal:
        objective = info.objective_function_value
        # A positive gap is a stop without proof of optimality.
        exact = gap is None or gap == 0 or _closed(objective, bound)
        status = "optimal" if exact else "feasible"
    elif state in (S.kInfeasible, S.kUnboundedOrInfeasible):
        return "infeasible", None, None, None
    elif state == S.kModelError or state == S.kSolveError:
        raise SolverError(f"HiGHS stopped with an error: {h.modelStatusToString(state)}")
    elif has_solution:
        status = "feasible"
    else:
        return "no_solution", bound, None, None
    return status, bound, list(h.getSolution().col_value), info.objective_function_value


def _bounds_help(built: BuiltModel) -> bool:
    """Whether subset bounds apply: a makespan over timed tasks and a known schedule to start from."""
    ctx = built.context
    return built.warm is not None and ctx.has("makespan") and ctx.has("timing") \
        and len(built.problem.tasks) > 1


def _closed(objective, bound) -> bool:
    if objective is None or bound is None:
        return False
    return objective - bound <= 1e-6 * max(1.0, abs(objective))


def warm_values(built: BuiltModel, schedule: Schedule) -> list:
    """Column values of ``schedule`` in ``built`` (``None`` for columns of user blocks)."""
    p = built.problem
    ctx = built.context
    values: list = [None] * built.linear.num_cols
    where = {r.task: r for r in schedule.tasks}
    for i, name in enumerate(p.tasks):
        row = where[name]
        d = p.device_index[row.device]
        for e in p.allowed[i]:
            col = ctx.x_col(i, e)
            if col is not None:
                values[col] = 1.0 if e == d else 0.0
        values[ctx.start_col(i)] = row.start
        if ctx.end_col(i) is not None:
            values[ctx.end_col(i)] = row.end
    if ctx.has("order"):
        for a, b in ctx.order_pairs():
            ra, rb = where[p.tasks[a]], where[p.tasks[b]]
            values[ctx.order_col(a, b)] = 1.0 if (ra.start, a) <= (rb.start, b) else 0.0
    if ctx.has("makespan"):
        values[ctx.makespan_col()] = schedule.makespan
    return values


# ---------------------------------------------------------------------- other solvers
def pyomo_solver(solver: str):
    """The Pyomo solver called ``solver``; :class:`SolverError` when it is not available.

    Pyomo logs a traceback of its own when it probes a missing executable: its
    loggers are muted during the probe, the one-line error says it instead.
    """
    import logging

    import pyomo.environ as pyo

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
    """The Pyomo model (made now) solved by a Pyomo solver plug-in."""
    from pyomo.opt import TerminationCondition as TC

    opt = pyomo_solver(solver)
    model = built.model
    names = _OPTION_NAMES.get(solver.split("_")[0], (None, None, None))
    options = {}
    for value, key in ((time_limit, names[0]), (gap, names[1]), (threads, names[2])):
        if value is not None and key is not None:
            options[key] = value
    try:
        results = opt.solve(model, load_solutions=False, tee=verbose, options=options)
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
        return "infeasible", None, None, None
    elif has_solution:
        status = "feasible"
    else:
        return "no_solution", bound, None, None
    model.solutions.load_from(results)
    values = [var.value for var in built.variables]
    return status, bound, values, values[built.context.makespan_col()]
