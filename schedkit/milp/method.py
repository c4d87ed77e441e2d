"""The ``milp`` method: build a formulation, solve it, return a validated schedule."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import field_validator

from schedkit.errors import SchedkitError
from schedkit.methods import Method, MethodOptions, register_method, solve
from schedkit.problem import Problem


class MilpOptions(MethodOptions):
    """Options of the ``milp`` method."""

    formulation: str = "latency"
    """A preset name or a YAML/JSON formulation file."""
    solver: str = "highs"
    """``highs`` (embedded) or any Pyomo solver name."""
    time_limit: float | None = None
    """Seconds before the solver stops (the status is then ``feasible`` or ``no_solution``)."""
    gap: float | None = None
    """Relative MIP gap at which the solver may stop."""
    threads: int | None = None
    """Threads of the exact solve (embedded HiGHS). With 2 or more (the default on a machine
    with two cores or more), a second thread proves lower bounds on critical subsets of tasks
    (:mod:`schedkit.milp.subsets`) while HiGHS searches, and stops it when one meets its incumbent;
    ``1``: HiGHS alone (with no time limit, the same schedule on every run; two threads may
    return another schedule of the same makespan). Passed on as the thread count of other
    solvers."""
    verbose: bool = False
    """Stream the solver log."""
    warm_start: str = "auto"
    """``auto``: the best of a short seeded annealing from HEFT (when the heuristics are
    installed) and the kernel's list schedules starts the solver and sets the big-M horizon; ``none``: same horizon, no starting solution; or the name of a method whose
    schedule starts the solver (when it satisfies every block of the formulation)."""
    lns_seconds: float | None = None
    """Seconds of MILP local search (:mod:`schedkit.milp.lns`) that improve the starting
    schedule before the exact solve; by default, with at least 25 tasks that have a choice
    of device, 0.15 s per such task, at most 30 s and at most a third of ``time_limit``,
    stopping early after 8 rounds without improvement (smaller problems go straight to the
    exact solve, which searches them better). ``0`` turns it off; so does ``warm_start: none``."""

    @field_validator("threads")
    @classmethod
    def _positive(cls, value):
        if value is not None and value < 1:
            raise ValueError("must be >= 1")
        return value

    @field_validator("time_limit", "gap", "lns_seconds")
    @classmethod
    def _non_negative(cls, value):
        if value is not None and value < 0:
            raise ValueError("must be >= 0")
        return value

    @field_validator("formulation", mode="before")
    @classmethod
    def _path_to_str(cls, value):
        return str(value) if isinstance(value, Path) else value


@register_method("milp")
class Milp(Method):
    """Exact MILP: the formulation's blocks built into one model and solved (HiGHS by default)."""

    Options = MilpOptions

    def __init__(self, formulation=None, **options):
        from schedkit.milp.formulation import Formulation, get_formulation

        if isinstance(formulation, (Formulation, dict)):
            self.formulation = get_formulation(formulation)
            super().__init__(formulation=self.formulation.name, **options)
        else:
            super().__init__(**({"formulation": formulation} if formulation else {}), **options)
            self.formulation = get_formulation(self.options.formulation)
        self.blocks = list(self.formulation.blocks)
        if self.options.solver != "highs":
            from schedkit.milp.solvers.highs import pyomo_solver

            pyomo_solver(self.options.solver)  # fail before any model is built

    def build(self, problem: Problem, warm=None):
        """Build the model of ``problem`` (a :class:`~schedkit.milp.context.BuiltModel`)."""
        return self.formulation.build(problem, warm=warm)

    def run(self, problem: Problem):
        from schedkit.milp.solvers.highs import solve_model

        began = time.perf_counter()
        o = self.options
        warm = None
        if o.warm_start == "auto":
            warm = _search_start(problem)
        elif o.warm_start != "none":
            if o.warm_start == self.name:
                raise SchedkitError("--warm-start cannot be 'milp' itself")
            warm = solve(problem, o.warm_start)
        built = self.build(problem, warm=warm)
        time_limit = o.time_limit
        if o.warm_start != "none" and built.warm is not None:
            budget = self.lns_budget(problem)
            if budget > 0:
                from schedkit.milp.lns import improve

                better = improve(built, built.warm, budget)
                if better.makespan < built.warm.makespan:
                    # A shorter schedule also shrinks the horizon: every big-M and bound.
                    built = self.build(problem, warm=better)
        if time_limit is not None:
            # the start, the search and the build count against the limit too
            time_limit = max(0.0, time_limit - (time.perf_counter() - began))
        schedule = solve_model(built, solver=o.solver, time_limit=time_limit, gap=o.gap,
                               threads=o.threads, verbose=o.verbose, warm_start=o.warm_start != "none",
                               method=f"milp:{self.formulation.name}")
        schedule.solve_seconds = time.perf_counter() - began
        return schedule

    def lns_budget(self, problem: Problem) -> float:
        """Seconds of local search before the exact solve (see ``lns_seconds``)."""
        o = self.options
        if o.lns_seconds is not None:
            budget = o.lns_seconds
        else:
            flexible = sum(1 for a in problem.allowed if len(a) > 1)
            budget = min(LNS_SECONDS_PER_TASK * flexible, LNS_MAX_SECONDS) if flexible >= LNS_MIN_TASKS else 0.0
        if o.time_limit is not None:
            budget = min(budget, o.time_limit / 3)
        return budget


#: Default local-search budget per task with a choice of device, and its cap (seconds).
LNS_SECONDS_PER_TASK = 0.15
LNS_MAX_SECONDS = 30.0
#: Below this many tasks with a choice, a round would free half the problem: no local search.
LNS_MIN_TASKS = 25
#: Iterations of the automatic warm-start search per task (deterministic: seed 0).
AUTO_SEARCH_ITERATIONS_PER_TASK = 100
AUTO_SEARCH_MAX_TASKS = 400


def _search_start(problem: Problem):
    """A short seeded annealing from HEFT, when the heuristics package registers it.

    The kernel's own list schedules still compete in :func:`~schedkit.milp.horizon.choose_horizon`,
    which keeps the best schedule that satisfies every block of the formulation.
    """
    from schedkit.errors import ProblemError
    from schedkit.methods import METHODS

    if len(problem.tasks) > AUTO_SEARCH_MAX_TASKS or "annealing" not in METHODS:
        return None
    try:
        return solve(problem, "annealing", seed=0,
                     iterations=AUTO_SEARCH_ITERATIONS_PER_TASK * len(problem.tasks))
    except ProblemError:  # no heuristic placement (memory): the list schedules or the serial horizon remain
        return None
