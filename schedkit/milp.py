"""The ``milp`` method: build a formulation, solve it, return a validated schedule."""

from __future__ import annotations

from pathlib import Path

from pydantic import field_validator

from .errors import SchedkitError
from .methods import Method, MethodOptions, register_method, solve
from .problem import Problem


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
    verbose: bool = False
    """Stream the solver log."""
    warm_start: str = "auto"
    """``auto``: the best of a short seeded annealing from HEFT (when the heuristics are
    installed) and the kernel's list schedules starts the solver and sets the big-M horizon; ``none``: same horizon, no starting solution; or the name of a method whose
    schedule starts the solver (when it satisfies every block of the formulation)."""

    @field_validator("time_limit", "gap")
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
        from .formulation import Formulation, get_formulation

        if isinstance(formulation, (Formulation, dict)):
            self.formulation = get_formulation(formulation)
            super().__init__(formulation=self.formulation.name, **options)
        else:
            super().__init__(**({"formulation": formulation} if formulation else {}), **options)
            self.formulation = get_formulation(self.options.formulation)
        self.blocks = list(self.formulation.blocks)
        if self.options.solver != "highs":
            from .solver import pyomo_solver

            pyomo_solver(self.options.solver)  # fail before any model is built

    def build(self, problem: Problem, warm=None):
        """Build the model of ``problem`` (a :class:`~schedkit.build.BuiltModel`)."""
        return self.formulation.build(problem, warm=warm)

    def run(self, problem: Problem):
        from .solver import solve_model

        o = self.options
        warm = None
        if o.warm_start == "auto":
            warm = _search_start(problem)
        elif o.warm_start != "none":
            if o.warm_start == self.name:
                raise SchedkitError("--warm-start cannot be 'milp' itself")
            warm = solve(problem, o.warm_start)
        built = self.build(problem, warm=warm)
        return solve_model(built, solver=o.solver, time_limit=o.time_limit, gap=o.gap,
                           threads=o.threads, verbose=o.verbose, warm_start=o.warm_start != "none",
                           method=f"milp:{self.formulation.name}")


#: Iterations of the automatic warm-start search per task (deterministic: seed 0).
AUTO_SEARCH_ITERATIONS_PER_TASK = 100
AUTO_SEARCH_MAX_TASKS = 400


def _search_start(problem: Problem):
    """A short seeded annealing from HEFT, when the heuristics package registers it.

    The kernel's own list schedules still compete in :func:`~schedkit.horizon.choose_horizon`,
    which keeps the best schedule that satisfies every block of the formulation.
    """
    from .errors import ProblemError
    from .methods import METHODS

    if len(problem.tasks) > AUTO_SEARCH_MAX_TASKS or "annealing" not in METHODS:
        return None
    try:
        return solve(problem, "annealing", seed=0,
                     iterations=AUTO_SEARCH_ITERATIONS_PER_TASK * len(problem.tasks))
    except ProblemError:  # no heuristic placement (memory): the list schedules or the serial horizon remain
        return None
