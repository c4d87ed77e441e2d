"""Any solver Pyomo knows, by name (``gurobi``, ``cplex``, ``scip``, ``cbc``, ``appsi_highs``...).

The Pyomo model is made from the sparse rows on demand (:mod:`schedkit.milp.pyomo_model`)
and handed to the solver plug-in; its solution is loaded only after the termination
condition was checked.
"""

from __future__ import annotations

import logging

from schedkit.errors import SolverError
from schedkit.milp.solvers.base import Adapter, Feature, Helper, RawSolution, SolveOptions
from schedkit.schedule import Termination

#: Option names of common solvers for a time limit, a relative MIP gap and threads.
_OPTION_NAMES = {
    "gurobi": ("TimeLimit", "MIPGap", "Threads"),
    "cplex": ("timelimit", "mipgap", "threads"),
    "cbc": ("seconds", "ratioGap", "threads"),
    "glpk": ("tmlim", "mipgap", None),
    "scip": ("limits/time", "limits/gap", None),
    "appsi": ("time_limit", "mip_rel_gap", "threads"),
}


class PyomoSolver(Adapter):
    """A Pyomo solver plug-in, by name; :class:`SolverError` at once when it is not available."""

    features = frozenset({Feature.MIP, Feature.DUAL_BOUND})

    def __init__(self, name: str):
        self.name = name
        self.opt = pyomo_solver(name)

    def solve(self, built, options: SolveOptions, start: list | None = None,
              beside: Helper | None = None) -> RawSolution:
        from pyomo.opt import TerminationCondition as TC

        model = built.model
        names = _OPTION_NAMES.get(self.name.split("_")[0], (None, None, None))
        given = {}
        for value, key in ((options.time_limit, names[0]), (options.gap, names[1]), (options.threads, names[2])):
            if value is not None and key is not None:
                given[key] = value
        try:
            results = self.opt.solve(model, load_solutions=False, tee=options.verbose, options=given)
        except Exception as exc:
            raise SolverError(f"solver '{self.name}' failed: {exc}") from None
        tc = results.solver.termination_condition
        bound = None
        try:
            bound = float(results.problem.lower_bound)
        except (TypeError, ValueError, AttributeError):
            pass  # the plug-in reports no bound
        if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
            return RawSolution(Termination.FINISHED, infeasible=True)
        termination = {TC.optimal: Termination.FINISHED, TC.maxTimeLimit: Termination.TIME_LIMIT,
                       TC.userInterrupt: Termination.INTERRUPTED, TC.error: Termination.ERROR}.get(
                           tc, Termination.INTERRUPTED)
        if len(results.solution) == 0:
            return RawSolution(termination, bound=bound)
        model.solutions.load_from(results)
        values = [var.value for var in built.variables]
        objective = values[built.context.family("makespan").col]
        return RawSolution(termination, optimal=tc == TC.optimal and not options.gap, values=values,
                           objective=objective, bound=bound)


def pyomo_solver(solver: str):
    """The Pyomo solver called ``solver``; :class:`SolverError` when it is not available.

    Pyomo logs a traceback of its own when it probes a missing executable: its
    loggers are muted during the probe, the one-line error says it instead.
    """
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
