"""The ``auto`` method: schedkit's best schedule of a problem under one wall-clock budget.

It reads the problem's structure (:func:`~schedkit.auto.traits.traits_of`), takes a fast
incumbent from the list heuristics, then runs the phases of :func:`~schedkit.auto.phases.plan`
(``bridge_dp``, the exact race, ``kedge``, windows re-solved exactly, local search), each started from the best
schedule so far and given its share of the time left. The result carries the best
schedule, valid under ``auto``'s formulation, and the best lower bound any phase proved;
it is ``optimal`` only when that is proven for the whole problem. The schedule file's
``phases`` and ``message`` say which phase gave the schedule and which the bound.

Without ``time_limit``, the budget is :data:`DEFAULT_BUDGET` seconds; ``time_limit=None``
lifts it (``--time-limit none``). ``auto`` stops early once the bound meets the incumbent.

Examples
--------
>>> from schedkit import Problem, solve
>>> s = solve(Problem.load("examples/tiny.yaml"), "auto", time_limit=20)
>>> s.status, round(s.makespan, 3), s.method
('optimal', 4.516, 'auto')
>>> [(p["phase"], p["method"]) for p in s.phases]
[('incumbent', 'heft'), ('incumbent', 'chain_split'), ('incumbent', 'greedy'), ('bridge_dp', 'bridge_dp')]
"""

from __future__ import annotations

import signal
import time
from typing import Any, Callable

from pydantic import Field

from schedkit.auto.phases import Phase, cuts_least, plan, share
from schedkit.auto.runnable import honours, runnable
from schedkit.auto.traits import traits_of
from schedkit.auto.state import AutoEvent, Incumbent
from schedkit.reductions.budget import Budget, finish_seconds
from schedkit import interrupt
from schedkit.errors import Interrupted, OptionError, SchedkitError
from schedkit.methods import MAX_TIME_LIMIT, METHODS, Method, register_method
from schedkit.milp.method import FormulationOption
from schedkit.numerics import closed
from schedkit.problem import Problem
from schedkit.progress import silenced
from schedkit.schedule import Quality, Result, Termination

__all__ = ["Auto", "AutoOptions", "DEFAULT_BUDGET"]

#: Seconds ``auto`` spends when no ``time_limit`` is given.
DEFAULT_BUDGET = 60.0
#: Share of the budget (at least :data:`RESERVE_MIN` s, and the end of the solve of a large
#: graph: :func:`~schedkit.reductions.budget.finish_seconds`) kept for validating and
#: writing the answer.
RESERVE_SHARE = 0.03
RESERVE_MIN = 0.3
#: A phase that would get less than this many seconds is skipped.
MIN_PHASE_SECONDS = 0.5
#: The list heuristics that give the incumbent (those registered run, while time is left;
#: the first always runs, so that a budget too small for any phase still gets a schedule).
#: ``chain_split`` places contiguous pieces of a chain within memory: it runs only where
#: some device's memory is limited.
INCUMBENT_METHODS = ("heft", "chain_split", "greedy")
MEMORY_METHODS = ("chain_split",)
#: The series search's parts of at most this many tasks go to the exact race, larger ones to
#: CP-SAT alone (when ``solver`` is ``auto``).
SERIES_RACE_TASKS = 8
#: From this many tasks, ``greedy`` (no insertion: about 60 % of HEFT's time) runs first.
LARGE = 2000
#: The formulation of a workload of several inputs when none is given.
WORKLOAD_FORMULATION = "throughput"


class AutoOptions(FormulationOption):
    """Options of the ``auto`` method (``formulation``: every phase's schedule must satisfy it)."""

    time_limit: float | None = Field(DEFAULT_BUDGET, gt=0, le=MAX_TIME_LIMIT)
    """Wall-clock seconds for the whole method, loading and building included (``auto``:
    60 by default, ``none`` for no limit)."""
    solver: str = "auto"
    """The exact phases' solver (see the ``milp`` method): ``auto`` races HiGHS and CP-SAT."""
    gap: float | None = Field(None, ge=0)
    """Relative gap at which the exact phases may stop."""
    executor: str = "process"
    """Where the parts of the decomposition phases run (see the decomposition methods)."""
    verbose: bool = False
    """Print each phase (method, time, schedule, bound) on standard error as it ends."""


@register_method("auto")
class Auto(Method):
    """Schedkit's best under one time budget: heuristics, bridge DP, the exact race, k-edge, local search."""

    Options = AutoOptions

    def __init__(self, progress: Callable[[AutoEvent], None] | None = None, formulation=None, **options: Any):
        """``formulation``: a preset name, a file, or a :class:`Formulation` (or its data), as
        for ``milp``; ``progress``: a function that receives each :class:`AutoEvent`."""
        from schedkit.semantics.formulation import formulation_given, get_formulation

        given, formulation = formulation_given(formulation)
        super().__init__(**({"formulation": formulation} if formulation else {}), **options)
        try:
            self.formulation = self._given = given or get_formulation(self.options.formulation)
        except SchedkitError as exc:
            raise OptionError("formulation", str(exc)) from None
        self._defaulted = "formulation" not in self.options.model_fields_set
        # (the exact phases' options, checked before anything runs: an unknown solver is one line now)
        METHODS.get("milp")(formulation=self.formulation, **_given({"solver": self.options.solver,
                                                                     "gap": self.options.gap}))
        if progress is not None and not callable(progress):
            raise OptionError("progress", f"progress: needs a function of an AutoEvent, not {type(progress).__name__}")
        if progress is None:  # (a line on the terminal; nothing off it)
            from schedkit.progress import PhaseLine

            line = PhaseLine("auto", limit=self.options.time_limit)
            progress = line if line.enabled else None
        self.progress = progress

    def blocks(self, problem: Problem) -> list:
        """The formulation's blocks: every phase's schedule is judged by them."""
        return list(self.formulation_for(problem).blocks)

    def formulation_data(self, problem: Problem) -> dict:
        return self.formulation_for(problem).to_data()

    def formulation_for(self, problem: Problem):
        """The formulation given; when none was, :data:`WORKLOAD_FORMULATION` for a workload of
        several inputs (the default ``latency`` has no ``batching``: the exact phases could not
        split the inputs, and only heuristics would run)."""
        if self._defaulted and problem.inputs > 1 and not any(b.kind == "batching" for b in self._given.blocks):
            from schedkit.milp.formulation import get_formulation

            return get_formulation(WORKLOAD_FORMULATION)
        return self._given

    runs_batches = True  # (a workload goes to the MILP, with a formulation that has 'batching')

    def run_batches(self, problem: Problem) -> Result:
        return self.run(problem)

    def run(self, problem: Problem) -> Result:
        o = self.options
        began = time.perf_counter()
        self.formulation = self.formulation_for(problem)
        reserve = None if o.time_limit is None else \
            max(RESERVE_MIN, RESERVE_SHARE * o.time_limit, finish_seconds(problem))
        budget = Budget(None if reserve is None else max(0.0, o.time_limit - reserve))
        state = Incumbent(problem, self.blocks(problem), self._event)
        left = budget.left()
        shape = traits_of(problem, cuts=left is None or left >= cuts_least(len(problem.tasks)))
        cut_short = False
        try:
            self._incumbent(problem, state, budget, shape.memory_limited)
            phases = runnable(problem, plan(shape), state, budget, self.blocks(problem),
                              self.formulation.timing_rules(problem), self._too_large)
            for k, phase in enumerate(phases):
                if state.finished:
                    break
                left = budget.left()
                seconds = None if left is None else share(phases[k:]) * left
                if seconds is not None and seconds < max(phase.least, MIN_PHASE_SECONDS):
                    state.skip(phase.name, phase.method, f"{seconds:.1f} s left for it, it needs "
                                                         f"{max(phase.least, MIN_PHASE_SECONDS):.1f} s")
                    cut_short = True
                    continue
                self._phase(problem, state, phase, seconds)
            if o.verbose:
                chosen = "" if self.formulation is self._given else f", formulation '{self.formulation.name}'"
                _print_phases(shape.describe() + chosen, state)
        except KeyboardInterrupt as stop:  # Ctrl-C: the incumbent, validated by Method.result
            _interrupted_phase(problem, state, stop)
            raise Interrupted(self._result(problem, state, True, began), getattr(stop, "signum", None)
                              or interrupt.received() or signal.SIGINT, problem) from None
        finally:  # (the progress line ends, whatever happened)
            self._event(AutoEvent("done", state.elapsed, state.makespan, state.bound))
        return self._result(problem, state, cut_short or budget.expired(), began)

    def _event(self, event: AutoEvent) -> None:
        if self.progress is not None:
            self.progress(event)

    # ------------------------------------------------------------------ phases
    def _incumbent(self, problem: Problem, state: Incumbent, budget: Budget, limited: bool) -> None:
        """The list heuristics' best schedule (a heuristic that cannot place says why, in its
        phase); ``limited``: some device's memory is finite."""
        order = sorted(INCUMBENT_METHODS, key=lambda name: name != "greedy") \
            if len(problem.tasks) >= LARGE else INCUMBENT_METHODS
        began = state.elapsed
        for name in order:
            if name not in METHODS.names() or (name in MEMORY_METHODS and not limited):
                continue
            # (the next heuristic, no faster than the first, would end past the time left)
            left = budget.left()
            if state.schedule is not None and left is not None and left <= state.elapsed - began:
                state.skip("incumbent", name, "no time left")
                continue
            state.begin("incumbent", name)
            self._offer(problem, state, name, {"formulation": self.formulation.to_data()})

    def _phase(self, problem: Problem, state: Incumbent, phase: Phase, seconds: float | None) -> None:
        o = self.options
        if phase.name == "series":
            return self._series(problem, state, seconds)
        if phase.name == "refine":
            return self._refine(problem, state, seconds)
        if phase.name == "windows":
            return self._windows(problem, state, seconds)
        if phase.name == "spine":
            from schedkit.auto.spine_bound import spine_phase
            return spine_phase(problem, state, seconds, self.blocks(problem), self.formulation.timing_rules(problem))
        inner = _given({"formulation": self.formulation.to_data(), "seed": o.seed, "solver": o.solver,
                        "gap": o.gap})
        if phase.method == "milp":
            why = self._too_large(problem, seconds)
            if why is not None:
                state.skip(phase.name, phase.method, why)
                return
            options = {**inner, "threads": o.threads, "time_limit": seconds}
            state.begin(phase.name, phase.method)
            return self._offer(problem, state, "milp", _given(options), start=state.schedule)
        options = {"inner": "milp", "inner_options": inner, "executor": o.executor, "time_limit": seconds,
                   "seed": o.seed, "threads": o.threads}
        state.begin(phase.name, phase.method)
        self._offer(problem, state, phase.method, _given(options))

    def _offer(self, problem: Problem, state: Incumbent, name: str, options: dict, **extra: Any) -> None:
        """Run the registered method ``name``; its result goes to ``state``, a refusal to the log."""
        try:
            cls = METHODS.get(name)
            kept = {k: v for k, v in options.items() if k in cls.Options.model_fields}
            with silenced():
                result = cls(**kept, **extra).result(problem)
        except SchedkitError as exc:  # the method does not apply here: one note, the plan goes on
            state.end(note=str(exc).splitlines()[0])
            return
        state.offer(result)
        state.end(note=result.message)

    def _refine(self, problem: Problem, state: Incumbent, seconds: float | None) -> None:
        """Local search from the incumbent, then, while time is left, from the other phases'
        schedules (another start often ends in another, sometimes better, local optimum)."""
        from schedkit.reductions.refine import refined

        if state.schedule is None:
            state.skip("refine", "refine", "no schedule to refine")
            return
        rules = self.formulation.timing_rules(problem)
        if rules.memory is not None:  # (the local search times no memory timeline)
            state.skip("refine", "refine", "the local search does not follow a memory timeline")
            return
        end = time.perf_counter() + (REFINE_UNBOUNDED if seconds is None else seconds)
        singles = [[i] for i in range(len(problem.tasks))]
        for start in [state.schedule] + [s for s in state.starts() if s is not state.schedule]:
            left = end - time.perf_counter()
            if left < MIN_PHASE_SECONDS:
                break
            state.begin("refine", "refine")
            try:
                better = refined(problem, start, singles, left, method="auto", rules=rules)
            except SchedkitError as exc:
                state.end(note=str(exc).splitlines()[0])
                return
            if better is start:
                state.end(note=f"no improvement from the {start.makespan:.6g} of {state.origin(start)}")
                continue
            state.offer(Result.heuristic(better.model_copy(update={"status": "heuristic"})))
            state.end(note=f"from the {start.makespan:.6g} of {state.origin(start)}")

    def _windows(self, problem: Problem, state: Incumbent, seconds: float | None) -> None:
        """Windows of the incumbent re-solved by the exact race, the rest kept
        (:func:`~schedkit.auto.windows.window_search`)."""
        from schedkit.auto.windows import window_search

        if state.schedule is None:
            state.skip("windows", "milp", "no schedule to improve")
            return
        o = self.options
        options = _given({"formulation": self.formulation.to_data(), "seed": o.seed, "solver": o.solver,
                          "gap": o.gap, "threads": o.threads})
        milp = METHODS.get("milp")

        def solve(part: Problem, limit: float, start) -> Result:
            with silenced():
                return milp(**options, time_limit=limit, start=start).result(part)

        start = state.schedule
        state.begin("windows", "milp")
        better = window_search(problem, start, REFINE_UNBOUNDED if seconds is None else seconds, solve,
                               rules=self.formulation.timing_rules(problem))
        if better is None:
            state.end(note=f"no improvement from the {start.makespan:.6g} of {state.origin(start)}")
            return
        state.offer(Result.heuristic(better.model_copy(update={"status": "heuristic"})))
        state.end(note=f"from the {start.makespan:.6g} of {state.origin(start)}")

    def _series(self, problem: Problem, state: Incumbent, seconds: float | None) -> None:
        """The chain of modules solved module by module (:func:`~schedkit.auto.series.series_search`):
        its bound, proven for the whole problem, and its schedule go to ``state``."""
        from schedkit.auto.series import MAX_CHAIN_TASKS, series_search
        from schedkit.milp.portfolio import cpsat_installed

        o = self.options
        options = _given({"formulation": self.formulation.to_data(), "seed": o.seed, "gap": o.gap,
                          "threads": o.threads, "lns_seconds": 0.0,
                          # (HEFT's start for the big-M horizon: a module of 14 tasks is solved
                          # in 2.9 s instead of 3.9 s, without the start search and local search;
                          # where HEFT cannot honour a block, every part's solve would fail on it)
                          "warm_start": "heft" if honours("heft", self.formulation, problem) else None})
        milp = METHODS.get("milp")
        # (a module of a dozen tasks: CP-SAT alone proves it in about half the time of the race
        # on two cores, MOIRAI's GoogLeNet modules of 14 tasks: 2.6-3.6 s against 6.4-9.3 s; a
        # part of a few tasks goes to the race, whose HiGHS answers before CP-SAT's worker starts)
        alone = "cpsat" if o.solver == "auto" and cpsat_installed() else o.solver

        def solve(part: Problem, limit: float) -> Result:
            solver = alone if len(part.tasks) > SERIES_RACE_TASKS else o.solver
            with silenced():
                return milp(**options, solver=solver, time_limit=limit).result(part)

        state.begin("series", "milp")
        try:
            found = series_search(problem, solve, seconds, self.formulation.timing_rules(problem), state.schedule,
                                  self.blocks(problem))
        except SchedkitError as exc:
            state.end(note=str(exc).splitlines()[0])
            return
        if found is None:
            state.end(note="no chain of modules")
            return
        state.bound_at_least(found.bound, state.phases[-1].label)
        for schedule in found.schedules:   # (each judged by auto's blocks; the shortest valid kept)
            quality = Quality.OPTIMAL if closed(schedule.makespan, found.bound) else Quality.FEASIBLE
            state.offer(Result(termination=Termination.FINISHED, quality=quality, provenance="decomposition",
                               method="auto", schedule=schedule, bound=found.bound))
        state.end(note=f"{found.modules} modules, {found.solves} parts solved" if found.solves else
                  f"{found.modules} modules, bounds only (a module has more than {MAX_CHAIN_TASKS} tasks)")

    def _too_large(self, problem: Problem, seconds: float | None) -> str | None:
        # (HiGHS's size decides, not CP-SAT's: where HiGHS cannot build the model, CP-SAT alone
        # on the whole graph found nothing in its share on MSR's ResNet-50 operator graph, 3 runs
        # of 3, where kedge and refine use that time)
        from schedkit.milp.model_size import model_size, too_large

        return too_large(model_size(self.formulation, problem), seconds)

    # ------------------------------------------------------------------ answer
    def _result(self, problem: Problem, state: Incumbent, cut_short: bool, began: float) -> Result:
        termination = Termination.TIME_LIMIT if cut_short and not state.optimal else Termination.FINISHED
        phases = state.records()
        if state.schedule is None and state.infeasible_from is not None:
            return Result(termination=Termination.FINISHED, quality=Quality.INFEASIBLE, method="auto",
                          problem=problem.name, seconds=time.perf_counter() - began, phases=phases,
                          message=f"{state.infeasible_from} proved that no schedule exists")
        if state.schedule is None:
            why = "; ".join(f"{p['method']}: {p['note']}" for p in phases if p.get("note"))
            return Result.nothing("auto", problem.name, termination, message=f"no phase found a schedule ({why})",
                                  bound=state.bound, provenance="heuristic").model_copy(update={"phases": phases})
        quality = Quality.OPTIMAL if state.optimal else Quality.FEASIBLE
        provenance = "exact" if quality is Quality.OPTIMAL else state.provenance
        said = f"schedule from {state.schedule_from}"
        if state.bound_from is not None:
            said += f", bound from {state.bound_from}"
        return Result(termination=termination, quality=quality, provenance=provenance, method="auto",
                      schedule=state.schedule.model_copy(update={"method": "auto"}), bound=state.bound,
                      seconds=time.perf_counter() - began, message=said, phases=phases)


#: Seconds of local search when ``auto`` runs without a time limit.
REFINE_UNBOUNDED = 30.0


def _interrupted_phase(problem: Problem, state: Incumbent, stop: KeyboardInterrupt) -> None:
    """The running phase ends, interrupted; the best answer it had (when it kept one) is offered."""
    record = state.phases[-1] if state.phases else None
    if record is None or record.seconds or not record.began:
        return  # (between phases)
    if isinstance(stop, Interrupted) and stop.result is not None and stop.problem is problem:
        state.offer(stop.result)
    state.end(note="interrupted")


def _given(options: dict) -> dict:
    """The options that are set (``None`` leaves a method's own default)."""
    return {k: v for k, v in options.items() if v is not None}


def _print_phases(shape: str, state: Incumbent) -> None:
    import sys

    print(f"auto: {shape}", file=sys.stderr)
    for p in state.records():
        figures = " ".join(f"{k}={p[k]:.6g}" for k in ("makespan", "bound") if k in p)
        print(f"auto: {p['phase']:<10} {p['method']:<12} {p.get('seconds', 0):7.2f} s {p.get('status', ''):<11} "
              f"{figures}{'  ' + p['note'] if p.get('note') else ''}", file=sys.stderr)
