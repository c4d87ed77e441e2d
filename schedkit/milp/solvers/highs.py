"""The embedded HiGHS (``highspy``): the model passed as arrays, no Pyomo object made.

HiGHS's branch and bound runs on one core. With a helper (the subset bounds of
:mod:`schedkit.milp.subsets`), the helper runs in a second thread and both share an
incumbent and a bound (:mod:`schedkit.milp.race`); HiGHS is stopped as soon as the
bound meets its incumbent.
"""

from __future__ import annotations

import functools
import time

from schedkit import interrupt
from schedkit.errors import SolverError
from schedkit.milp.solvers.base import (Adapter, Feature, Helper, RawSolution, SolveOptions,
                                        register_solver)
from schedkit.numerics import SOLVER_TOL, closed
from schedkit.schedule import Termination


#: Share of the time limit HiGHS may overrun it (at least half a second) before it is asked to
#: cancel, and again before it is left to stop on its own.
LATE_SHARE = 0.02


@register_solver("highs")
class Highs(Adapter):
    """HiGHS through highspy (embedded): warm starts, a bound, a second thread beside it."""

    features = frozenset({Feature.MIP, Feature.WARM_START, Feature.STOP_CALLBACK, Feature.DUAL_BOUND})

    def solve(self, built, options: SolveOptions, start: list | None = None,
              beside: Helper | None = None) -> RawSolution:
        import numpy as np

        from schedkit.milp.race import Shared, run_beside, run_highs

        h = highs_for(built.linear, options.time_limit, options.gap, options.verbose)
        if start is not None:
            set_start(h, start)
        shared = Shared(tolerance=max(options.gap or 0.0, SOLVER_TOL))
        # HiGHS's own limit, and a watch on it: its presolve does not look at the clock
        late = None if options.time_limit is None else max(0.5, LATE_SHARE * options.time_limit)
        deadline = None if late is None else time.perf_counter() + options.time_limit + late
        # Ctrl-C stops HiGHS at its next callback, with its incumbent (see schedkit.interrupt).
        with interrupt.deferred(shared.stop.set):
            if beside is not None:
                finished = run_beside(h, beside, shared, deadline, late or 0.0)
            else:
                shared.watch(h)
                finished = run_highs(h, shared, deadline, late or 0.0)
        if not finished:  # (stopped in its presolve, where HiGHS cannot be stopped: nothing of it)
            bound = shared.bound if np.isfinite(shared.bound) else None
            if interrupt.received() is not None:
                return RawSolution(Termination.INTERRUPTED, bound=bound)
            return RawSolution(Termination.TIME_LIMIT, bound=bound,
                               note="HiGHS did not stop at its time limit (in its presolve): it was left behind")
        state = h.getModelStatus()
        info = h.getInfo()
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        bound = info.mip_dual_bound if info.valid else None
        if np.isfinite(shared.bound):
            bound = shared.bound if bound is None else max(bound, shared.bound)
        S = _highspy().HighsModelStatus
        if state in (S.kModelError, S.kSolveError):
            raise SolverError(f"HiGHS stopped with an error: {h.modelStatusToString(state)}")
        if state in (S.kInfeasible, S.kUnboundedOrInfeasible):
            return RawSolution(Termination.FINISHED, infeasible=True)
        objective = info.objective_function_value if has_solution or state == S.kOptimal else None
        if state == S.kOptimal:
            # A positive gap is a stop without proof of optimality.
            exact = not options.gap or closed(objective, bound)
            termination = Termination.FINISHED if exact else Termination.GAP
        else:
            exact = False
            termination = Termination.TIME_LIMIT if state == S.kTimeLimit else Termination.INTERRUPTED
        values = list(h.getSolution().col_value) if has_solution or state == S.kOptimal else None
        return RawSolution(termination, optimal=exact, values=values, objective=objective, bound=bound)


def quiet_highs():
    """A ``highspy.Highs`` that has printed nothing: its output is off until a caller turns it on.

    highspy 1.16's constructor enables the callbacks, and HiGHS writes its banner to the
    process's stdout then, before any option can be set; the JSON a user pipes out of
    ``schedkit solve`` must not start with it. The subclass turns ``output_flag`` off
    first. (Older highspy versions log nothing until a model is passed.)

    Examples
    --------
    >>> quiet_highs().getOptions().output_flag
    False
    """
    h = _quiet_class()()
    h.setOptionValue("output_flag", False)  # in versions whose constructor enables nothing
    h.built = True  # a later enableCallbacks leaves the caller's output setting alone
    return h


def _highspy():
    """The ``highspy`` module, loaded on first use.

    A Ctrl-C or SIGTERM that arrives while its C++ core initialises surfaces as
    ``ImportError: initialization failed``: that is the interrupt, raised again as one
    (:mod:`schedkit.interrupt` recorded it), not a broken installation.
    """
    try:
        import highspy
    except ImportError:
        if interrupt.received() is not None:
            raise KeyboardInterrupt from None
        raise
    return highspy


@functools.cache
def _quiet_class():
    highspy = _highspy()

    class QuietHighs(highspy.Highs):
        def enableCallbacks(self):
            if not getattr(self, "built", False):
                self.setOptionValue("output_flag", False)
            return super().enableCallbacks()

    return QuietHighs


def highs_for(lin, time_limit=None, gap=None, verbose=False):
    """A ``highspy.Highs`` holding the sparse model ``lin`` (passed as arrays, no Pyomo object).

    HiGHS's own ``threads`` option is left alone: its branch and bound runs on one core,
    and its thread pool is sized once per process.
    """
    import numpy as np

    highspy = _highspy()

    h = quiet_highs()
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
