"""The ``milp`` method: build a formulation, solve it, return a validated schedule."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import Field, field_validator

from schedkit.errors import ProblemError, SchedkitError
from schedkit.methods import METHODS, Method, MethodOptions, register_method, solve
from schedkit.milp.race import deadline_after, default_threads
from schedkit.problem import Problem
from schedkit.schedule import Result


class MilpOptions(MethodOptions):
    """Options of the ``milp`` method."""

    formulation: str = Field("latency", json_schema_extra={"flag": "-f"})
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
    """``auto``: the best of the methods that offer a start (a short seeded annealing from
    HEFT, when the heuristics are installed) and the kernel's list schedules starts the
    solver and sets the big-M horizon; ``none``: same horizon, no starting solution; or the
    name of a method whose schedule starts the solver (when it satisfies every block of the
    formulation)."""
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
        from schedkit.milp.solvers import get_adapter

        if isinstance(formulation, (Formulation, dict)):
            self.formulation = get_formulation(formulation)
            super().__init__(formulation=self.formulation.name, **options)
        else:
            super().__init__(**({"formulation": formulation} if formulation else {}), **options)
            self.formulation = get_formulation(self.options.formulation)
        self.adapter = get_adapter(self.options.solver)  # fail before any model is built

    def blocks(self, problem: Problem) -> list:
        """The formulation's blocks: every schedule is judged by them."""
        return list(self.formulation.blocks)

    def formulation_data(self, problem: Problem) -> dict:
        return self.formulation.to_data()

    def build(self, problem: Problem, warm=None):
        """Build the model of ``problem`` (a :class:`~schedkit.milp.context.BuiltModel`)."""
        return self.formulation.build(problem, warm=warm)

    def run(self, problem: Problem) -> Result:
        from schedkit.milp.readback import exact_result, warm_values
        from schedkit.milp.solvers import Feature, SolveOptions

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
        if o.warm_start != "none" and built.warm is not None:
            budget = self.lns_budget(problem)
            if budget > 0:
                from schedkit.milp.lns import improve

                better = improve(built, built.warm, budget)
                if better.makespan < built.warm.makespan:
                    # A shorter schedule also shrinks the horizon: every big-M and bound.
                    built = self.build(problem, warm=better)
        time_limit = o.time_limit
        if time_limit is not None:
            # the start, the search and the build count against the limit too
            time_limit = max(0.0, time_limit - (time.perf_counter() - began))
        adapter = self.adapter
        start = None
        if o.warm_start != "none" and built.warm is not None and adapter.supports(Feature.WARM_START):
            start = warm_values(built, built.warm)
        beside = None
        if adapter.supports(Feature.STOP_CALLBACK) and (o.threads or default_threads()) >= 2 \
                and _bounds_help(built):
            from schedkit.milp.subsets import subset_bounds

            deadline = deadline_after(time_limit)
            beside = lambda shared: subset_bounds(built, built.warm, shared, deadline, o.verbose)  # noqa: E731
        raw = adapter.solve(built, SolveOptions(time_limit, o.gap, o.threads, o.verbose), start, beside)
        return exact_result(built, raw, method=f"milp:{self.formulation.name}",
                            seconds=time.perf_counter() - began)

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


def _bounds_help(built) -> bool:
    """Whether subset bounds apply: a makespan over timed tasks and a known schedule to start from."""
    ctx = built.context
    return built.warm is not None and ctx.has("makespan") and ctx.has("timing") \
        and len(built.problem.tasks) > 1


#: Default local-search budget per task with a choice of device, and its cap (seconds).
LNS_SECONDS_PER_TASK = 0.15
LNS_MAX_SECONDS = 30.0
#: Below this many tasks with a choice, a round would free half the problem: no local search.
LNS_MIN_TASKS = 25


def _search_start(problem: Problem):
    """The best schedule of the registered methods that offer to start an exact solve.

    A method offers through :meth:`~schedkit.methods.Method.auto_start` (the heuristics
    package's ``annealing`` does: a short seeded annealing from HEFT). The kernel's own
    list schedules still compete in :func:`~schedkit.milp.horizon.choose_horizon`, which
    keeps the best schedule that satisfies every block of the formulation.
    """
    best = None
    for name, cls in METHODS.items():
        options = cls.auto_start(problem)
        if options is None or name == "milp":
            continue
        try:
            found = cls(**options).solve(problem)
        except ProblemError:  # no heuristic placement (memory): other starts remain
            continue
        if found.tasks and (best is None or found.makespan < best.makespan):
            best = found
    return best
