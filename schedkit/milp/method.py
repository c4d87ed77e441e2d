"""The ``milp`` method: build a formulation, solve it, return a validated schedule."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from pydantic import Field, field_validator

from schedkit import interrupt
from schedkit.cpsat.solve import EXTRA, require_cpsat
from schedkit.cpsat.worker import SPARE
from schedkit.errors import FormulationError, Interrupted, OptionError, SchedkitError, SolverError
from schedkit.methods import MAX_TIME_LIMIT, METHODS, Method, MethodOptions, register_method, solve
from schedkit.milp.portfolio import choose_solver, combine, cp_beside, cpsat_installed, not_worse_than, solve_cpsat
from schedkit.milp.race import deadline_after, default_threads
from schedkit.milp.start import following, search_start
from schedkit.problem import Problem
from schedkit.schedule import Quality, Result, Termination


class FormulationOption(MethodOptions):
    """The ``formulation`` option of the methods that solve a formulation (``milp``, ``auto``)."""

    formulation: str = Field("latency", json_schema_extra={"flag": "-f"})
    """A preset name or a YAML/JSON formulation file."""

    @field_validator("formulation", mode="before")
    @classmethod
    def _path_to_str(cls, value):
        return str(value) if isinstance(value, Path) else value


class MilpOptions(FormulationOption):
    """Options of the ``milp`` method."""

    solver: str = "auto"
    """``highs`` (embedded), ``cpsat`` (OR-Tools CP-SAT in a worker process, extra ``cpsat``),
    ``auto`` (both raced, see :mod:`schedkit.milp.portfolio`, where OR-Tools is installed and
    two threads are allowed, else ``highs``) or any Pyomo solver name."""
    time_limit: float | None = Field(None, gt=0, le=MAX_TIME_LIMIT)
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
    exact solve, which searches them better); none by default when CP-SAT races beside HiGHS
    (``auto``), whose own search improves the start. ``0`` turns it off; so does
    ``warm_start: none``."""
    seed: int = 0
    """Random seed of CP-SAT (``cpsat``, ``auto``): with one thread and no time limit, the same
    schedule on every run."""

    @field_validator("threads")
    @classmethod
    def _positive(cls, value):
        if value is not None and value < 1:
            raise ValueError("must be >= 1")
        return value

    @field_validator("gap", "lns_seconds")
    @classmethod
    def _non_negative(cls, value):
        if value is not None and value < 0:
            raise ValueError("must be >= 0")
        return value


@register_method("milp")
class Milp(Method):
    """Exact MILP: the formulation's blocks built into one model and solved (HiGHS by default)."""

    Options = MilpOptions

    def __init__(self, formulation=None, start=None, **options):
        """``formulation``: a preset name, a file, or a :class:`Formulation` (or its data);
        ``start``: a schedule that starts the solver instead of the automatic search (a
        composite method's incumbent, see :mod:`schedkit.auto`); like any start, it only
        counts when every block of the formulation accepts it. ``options``: :class:`MilpOptions`."""
        from schedkit.semantics.formulation import formulation_given, get_formulation
        from schedkit.milp.solvers import get_adapter

        self.start = start
        given, formulation = formulation_given(formulation)
        super().__init__(**({"formulation": formulation} if formulation else {}), **options)
        try:
            self.formulation = given or get_formulation(self.options.formulation)
        except SchedkitError as exc:
            raise OptionError("formulation", str(exc)) from None
        try:
            self.solver = choose_solver(self.options.solver, self.options.threads or default_threads())
            if self.solver == "cpsat" and not cpsat_installed():
                raise SolverError(f"solver 'cpsat' needs OR-Tools: {EXTRA}")
            # fail before any model is built
            self.adapter = get_adapter("highs" if self.solver in ("auto", "cpsat") else self.solver)
        except SchedkitError as exc:
            raise OptionError("solver", str(exc)) from None

    def blocks(self, problem: Problem) -> list:
        """The formulation's blocks: every schedule is judged by them."""
        return list(self.formulation.blocks)

    def formulation_data(self, problem: Problem) -> dict:
        return self.formulation.to_data()

    def build(self, problem: Problem, warm=None):
        """Build the model of ``problem`` (a :class:`~schedkit.milp.context.BuiltModel`)."""
        return self.formulation.build(problem, warm=warm)

    runs_batches = True  # (with a formulation that has the ``batching`` block)

    def run_batches(self, problem: Problem) -> Result:
        if not self.formulation.has("batching"):
            raise FormulationError(f"formulation '{self.formulation.name}' has no 'batching' block for the "
                                   f"workload's {problem.inputs} inputs (use -f throughput)")
        return self.run(problem)

    def run(self, problem: Problem) -> Result:
        # CP-SAT's worker (the spare one, loaded, or a new one that loads OR-Tools while the
        # start schedule is searched and the model built).
        takes_part = self.solver == "cpsat" or self._cp_can_solve(problem)
        worker = SPARE.take(self.options.verbose) if takes_part else None
        stopped = False
        try:
            return self._run(problem, worker)
        except KeyboardInterrupt:
            stopped = True
            raise
        finally:
            if worker is not None:
                worker.close()
                if not stopped and interrupt.received() is None:  # (a run that stops needs no spare)
                    SPARE.refill()

    def _run(self, problem: Problem, worker) -> Result:
        from schedkit.milp.model_size import cp_too_large, model_size, too_large
        from schedkit.semantics.horizon import choose_horizon
        from schedkit.milp.prune import pruned_problem

        began = time.perf_counter()
        o = self.options
        deadline = None if o.time_limit is None else began + o.time_limit
        start = self._start(problem, deadline)
        # (the kernel's own candidates are timed while a quarter of the time is left)
        enough = None if deadline is None else deadline - 0.75 * (deadline - time.perf_counter())
        horizon, best = choose_horizon(problem, self.formulation.blocks, start, enough)
        if best is not None and self.formulation.objective == "makespan":
            # (what no schedule as short as the start can use is left out: not the optimum)
            problem = pruned_problem(problem, best.makespan)
        why = too_large(model_size(self.formulation, problem), _left(deadline))
        if self.solver == "cpsat" or (why is not None and self._cp_can_solve(problem)):
            too_many = cp_too_large(self.formulation, problem, _left(deadline))
            if too_many is not None:
                said = (why, too_many) if self.solver == "auto" else (too_many,)
                return self._without_model(problem, best, "; ".join(m for m in said if m), began)
            # (under auto, a model too large for HiGHS goes to CP-SAT alone: intervals, no big-M pairs)
            result = solve_cpsat(problem, self.formulation, best, horizon, _left(deadline),
                                 o.threads or default_threads(), o.seed, o.verbose, self._label, worker)
            if self.solver == "auto":
                said = "; ".join(m for m in (f"{why}: CP-SAT alone", result.message) if m)
                result = Result.model_validate({**result.model_dump(), "message": said})
            return result.with_seconds(time.perf_counter() - began)
        if why is not None:
            return self._without_model(problem, best, why, began)
        try:
            return self._exact(problem, worker, best, horizon, deadline, began)
        except Interrupted:
            raise
        except KeyboardInterrupt:  # (while the model is built or improved: the start schedule is kept)
            if best is None:
                raise
            kept = self._without_model(problem, best, "interrupted before the solver ran", began)
            raise Interrupted(kept.model_copy(update={"termination": Termination.INTERRUPTED}),
                              interrupt.received() or signal.SIGINT, problem) from None

    def _exact(self, problem: Problem, worker, best, horizon, deadline, began: float) -> Result:
        """The exact solve of the model (HiGHS, CP-SAT racing beside it under ``auto``)."""
        from schedkit.milp.scale import Rescaling

        o = self.options
        # The solver sees times near 1000 units whatever the user's unit (see milp.scale).
        scaling = Rescaling.apply(problem, horizon, self.formulation.timing_rules(problem))
        model_problem = scaling.scaled
        start = scaling.forward(best)
        raced: list[Result] = []
        try:
            built = self.formulation.build(model_problem, horizon=start.makespan if start else None, warm=start)
            if self.solver != "auto" or worker is None or o.lns_seconds is not None:
                # (racing, CP-SAT's own search improves the start from the first second)
                built = self._improve(model_problem, built, deadline)
            beside = self._cp_beside(built, scaling, deadline, raced, worker)
            result = self._solve(built, _left(deadline), beside)
        except MemoryError:
            # (budget.py's estimate is an average: HiGHS's presolve may need more)
            return self._without_model(problem, best, "the machine ran out of memory for the model", began)
        if result.schedule is None and result.quality is Quality.NONE and built.warm is not None:
            # Stopped before finding anything better: the start schedule, at least.
            why = result.message or "the solver stopped before it found a schedule"
            result = result.model_copy(update={"quality": Quality.FEASIBLE, "schedule": built.warm,
                                               "message": f"{why}: the start schedule is returned"})
            result = Result.model_validate(result.model_dump())
        result = combine(scaling.invert(result), raced[0] if raced else None)
        return result.with_seconds(time.perf_counter() - began)

    @property
    def _label(self) -> str:
        return f"milp:{self.formulation.name}"

    def _cp_can_solve(self, problem: Problem) -> bool:
        """Under ``auto``, whether CP-SAT takes part (a block without a CP-SAT form: HiGHS alone)."""
        if self.solver != "auto":
            return False
        try:
            require_cpsat(self.formulation, problem)
        except SchedkitError:
            return False
        return True

    def _cp_beside(self, built, scaling, deadline, raced: list, worker):
        """Under ``auto``, CP-SAT to race beside HiGHS (``None`` when it cannot take part)."""
        from schedkit.milp.readback import warm_values
        from schedkit.milp.scale import in_units

        if worker is None or self.solver != "auto":
            return None
        from schedkit.milp.model_size import cp_too_large

        problem = scaling.problem
        if cp_too_large(self.formulation, problem, _left(deadline)):
            return None  # (HiGHS alone: CP-SAT would not start its search in time)

        def to_model(schedule):
            timed = in_units(built.problem, schedule, rules=scaling.rules)
            return warm_values(built, timed), timed.makespan

        start = scaling.back(built.warm)
        return cp_beside(problem, self.formulation, start, deadline, to_model, scaling.factor, self.options.seed,
                         self.options.verbose, self._label, raced, worker)

    def _start(self, problem: Problem, deadline: float | None):
        """The schedule that starts the solver (``None``: none asked for or none found)."""
        o = self.options
        if self.start is not None and o.warm_start != "none":
            return self.start
        if o.warm_start == "auto":
            return search_start(problem, deadline, self.formulation)
        if o.warm_start == "none":
            return None
        if o.warm_start == self.name:
            raise OptionError("warm_start", "the warm start cannot be 'milp' itself")
        try:
            return solve(problem, o.warm_start, **following(METHODS.get(o.warm_start), self.formulation))
        except SchedkitError as exc:
            if "unknown method" not in str(exc):
                raise
            raise OptionError("warm_start", str(exc)) from None

    def _improve(self, problem: Problem, built, deadline: float | None):
        """Local search from the start schedule; a shorter one rebuilds the model (tighter big-Ms)."""
        if self.options.warm_start == "none" or built.warm is None:
            return built
        budget = self.lns_budget(problem)
        left = _left(deadline)
        if budget <= 0 or (left is not None and 2 * built.build_seconds > left):
            return built
        from schedkit.milp.lns import improve

        better = improve(built, built.warm, budget)
        if better.makespan < built.warm.makespan:
            return self.formulation.build(problem, warm=better)
        return built

    def _solve(self, built, time_limit: float | None, beside=None) -> Result:
        """The exact solve of ``built`` by the adapter, helped by subset bounds where it can be
        (or, ``beside``, by CP-SAT)."""
        from schedkit.milp.readback import exact_result, warm_values
        from schedkit.milp.solvers import Feature, SolveOptions

        o = self.options
        adapter = self.adapter
        start = None
        if o.warm_start != "none" and built.warm is not None and adapter.supports(Feature.WARM_START):
            start = warm_values(built, built.warm)
        racing = beside is not None and adapter.supports(Feature.STOP_CALLBACK)
        if not adapter.supports(Feature.STOP_CALLBACK):
            beside = None
        elif beside is None and (o.threads or default_threads()) >= 2 and _bounds_help(built):
            from schedkit.milp.subsets import subset_bounds

            deadline = deadline_after(time_limit)
            beside = lambda shared: subset_bounds(built, built.warm, shared, deadline, o.verbose)  # noqa: E731
        # Beside CP-SAT, HiGHS keeps one thread (paced: see milp.race.Pace); CP-SAT has two workers.
        threads = 1 if racing and o.threads is None else o.threads
        raw = adapter.solve(built, SolveOptions(time_limit, o.gap, threads, o.verbose), start, beside)
        result = exact_result(built, raw, method=self._label)
        # (a read-back longer than the start: the start; none at all: _exact returns it, saying why)
        return not_worse_than(result, built.warm) if result.schedule is not None else result

    def _without_model(self, problem: Problem, best, why: str, began: float) -> Result:
        """The answer when the model is too large to build: the best start schedule, saying why."""
        from schedkit.problem.bounds import formulation_bound

        if best is None:
            raise SchedkitError(f"{why}, and no heuristic schedule satisfies formulation "
                                f"'{self.formulation.name}': try a decomposition, or a larger time limit")
        orders = self.formulation.timing_rules(problem).ordered_edges
        return Result(termination=Termination.TIME_LIMIT, quality=Quality.FEASIBLE, provenance="heuristic",
                      schedule=best.model_copy(update={"method": f"milp:{self.formulation.name}"}),
                      bound=formulation_bound(problem, self.formulation.blocks) if orders else None,
                      seconds=time.perf_counter() - began,
                      message=f"{why}: the best start schedule is returned")

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
def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.perf_counter())
