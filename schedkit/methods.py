"""Methods: every way to get a schedule (MILP, heuristic, decomposition) is a :class:`Method`.

A method declares its options as a pydantic model and returns a
:class:`~schedkit.schedule.Result` from :meth:`Method.run`; :meth:`Method.result`
times and validates it, and :func:`solve` hands a user the validated schedule.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "milp", time_limit=30)
>>> s.status, s.makespan == s.bound
('optimal', True)
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from schedkit import interrupt
from schedkit.errors import Interrupted, NoScheduleError, OptionError, ProblemError, SchedkitError
from schedkit.blocks.batching import check_batchable
from schedkit.problem import Problem, as_problem
from schedkit.problem.ignored import without_ignored
from schedkit.problem.without_transfers import without_transfers
from schedkit.registry import Registry, doc_line, one_line
from schedkit.schedule import Result, Schedule, Termination
from schedkit.timing import TimingRules
from schedkit.validate import canonical, semantic_blocks, symmetry_blocks, validate

METHODS = Registry("method", group="schedkit.methods")


#: The longest time limit a method takes (about three years): a wait much longer would pass
#: the end of the platform's clock (``none`` lifts the limit).
MAX_TIME_LIMIT = 1e8


class MethodOptions(BaseModel):
    """Options every method accepts; methods subclass this with their own fields.

    A field's attribute docstring (the string after it) documents it: the CLI's help and
    the docs read it with :func:`~schedkit.registry.attribute_docs`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    # The options every user loops over: every method accepts them, with the meaning it can
    # give them (a list heuristic's one pass ignores a seed; a search stops at the limit).
    time_limit: float | None = Field(None, gt=0, le=MAX_TIME_LIMIT)
    """Wall-clock seconds for the whole method (a search or a solver stops then, with the best
    schedule found so far)."""
    seed: int = 0
    """Random seed of the method's randomised parts (a method without any ignores it)."""
    threads: int | None = Field(None, ge=1)
    """Threads or worker processes the method may use (a single-threaded method ignores it)."""

    @field_validator("*", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any, info: ValidationInfo) -> Any:
        # (pydantic reads True as 1: ``time_limit=True`` would be a silent one-second limit,
        # ``gap=True`` a 100 % gap): every numeric option of every method refuses booleans
        if isinstance(value, bool) and _numeric(cls.model_fields[info.field_name].annotation):
            raise ValueError("must be a number, not a boolean")
        return value


def _numeric(annotation: Any) -> bool:
    """Whether an option's type takes numbers and no boolean (``int | None``, ``float``, ...)."""
    kinds: set = set()
    pending = [annotation]
    while pending:
        kind = pending.pop()
        args = get_args(kind)
        if args and get_origin(kind) is not Literal:
            pending.extend(args)
        else:
            kinds.add(kind)
    return bool(kinds & {int, float}) and bool not in kinds


class Method:
    """Base class of schedule-producing methods.

    Subclasses set ``name``, an ``Options`` model and implement :meth:`run`.
    Register them with :func:`register_method`.
    """

    name: ClassVar[str] = ""
    Options: ClassVar[type[MethodOptions]] = MethodOptions
    #: Whether the method schedules a workload of several inputs in batches (DiviML); one
    #: that does not refuses such a problem in one line rather than ignore its inputs.
    runs_batches: ClassVar[bool] = False

    def __init__(self, **options: Any):
        try:
            self.options = self.Options(**options)
        except ValidationError as exc:
            first = exc.errors()[0]["loc"]
            raise OptionError(str(first[0]) if first else "", one_line(
                exc, options, prefix=f"method '{self.name}'", extra="takes no option '{key}'")) from None

    def run(self, problem: Problem) -> Result:
        """Compute a :class:`~schedkit.schedule.Result`; called by :meth:`result`, which validates it."""
        raise NotImplementedError(f"method '{self.name}' does not implement run()")

    def run_batches(self, problem: Problem) -> Result:
        """:meth:`run` for a workload of several inputs: batch rows (methods with ``runs_batches``)."""
        raise NotImplementedError(f"method '{self.name}' does not implement run_batches()")

    @classmethod
    def auto_start(cls, problem: Problem) -> dict | None:
        """Options with which this method offers to start an exact solve of ``problem``.

        ``None`` (the default): it does not offer. The ``milp`` method's automatic warm
        start runs every method that offers and keeps the best schedule.
        """
        return None

    def blocks(self, problem: Problem) -> list:
        """The blocks whose meaning this method's schedules must satisfy.

        By default the problem's semantic blocks (:func:`~schedkit.validate.semantic_blocks`);
        a method with a formulation returns that formulation's blocks.
        """
        return semantic_blocks(problem)

    def formulation_data(self, problem: Problem) -> dict:
        """The formulation the schedules of this method are judged by, as data.

        Recorded in every schedule file, so that ``schedkit validate`` judges a schedule by
        the blocks its method was held to. By default the problem's own semantics.
        """
        return {"name": "semantics", "blocks": [b.to_data() for b in semantic_blocks(problem, self.blocks(problem))]}

    def result(self, problem: Problem) -> Result:
        """Run the method, time it, and validate its schedule (raises when invalid).

        Interrupted (Ctrl-C; SIGTERM under the command line), it raises
        :class:`~schedkit.errors.Interrupted` carrying the validated best result so far.

        Under a formulation with a symmetry block, the problem is checked against it before
        the method runs, and the schedule is relabelled into the block's canonical order
        (:func:`~schedkit.validate.canonical`) before it is validated and returned. Under
        blocks that time no transfer (``precedence: {communication: false}``), the method
        solves the problem without its edges' data, and without ``placement`` or ``memory``
        without its collocation groups or memory capacities (:func:`_as_formulated`).
        """
        problem = as_problem(problem)  # a path or data too; anything else is a one-line error
        if problem.inputs > 1 and not self.runs_batches:
            raise ProblemError(f"method '{self.name}' does not split inputs into batches: the problem's "
                               f"workload asks for {problem.inputs} inputs")
        blocks = self.blocks(problem)
        symmetry_blocks(problem, blocks)  # a group of devices that differ: one line, before any work
        check_batchable(problem, blocks)  # channels under a workload: not defined yet, before any work
        for block in blocks:  # a block's own data checks (memory_timeline's): bad input, not "no schedule"
            block.applies_to(problem)
        began = time.perf_counter()
        work = _as_formulated(problem, blocks)
        try:
            with interrupt.scope():
                result = self.run_batches(work) if problem.inputs > 1 else self.run(work)
        except Interrupted as stop:
            if stop.result is None or stop.problem is not work:  # (a part's answer is not this one's)
                raise Interrupted(None, stop.signum, problem) from None
            result, signum = stop.result, stop.signum
        except ProblemError as exc:
            # The problem passed its checks: a method that stops on it found no schedule (its
            # message says whether that is a proof), which is no bad input (exit 4, not 1).
            if isinstance(exc, NoScheduleError):
                raise
            raise NoScheduleError(str(exc)) from exc
        else:
            signum = interrupt.take()  # a solver stopped early by a signal it deferred
        if not isinstance(result, Result):
            raise TypeError(f"method '{self.name}': run() returned {type(result).__name__}, "
                            f"not a schedkit.schedule.Result")
        update = {"formulation": self.formulation_data(problem)}
        if result.seconds is None:
            update["seconds"] = time.perf_counter() - began
        if result.schedule is not None:
            update["schedule"] = canonical(problem, result.schedule, blocks)
        result = result.model_copy(update=update)
        schedule = result.to_schedule()
        if schedule.tasks:
            validate(problem, schedule, blocks)
        if signum is not None:
            raise Interrupted(_interrupted(result, signum), signum, problem)
        return result

    def solve(self, problem: Problem) -> Schedule:
        """The validated schedule file of :meth:`result`."""
        return self.result(problem).to_schedule()


def _as_formulated(problem: Problem, blocks: list) -> Problem:
    """The problem a method solves under ``blocks``: ``problem`` without the data they ignore
    and the methods would honour. Where they time no transfer (no block delays an edge by its
    data, and none gives transfers a channel, a port or memory):
    :func:`~schedkit.problem.without_transfers.without_transfers` (under ``jssp`` a fork on two
    devices took 13 where the formulation's optimum is 3). Without ``placement`` or ``memory``:
    :func:`~schedkit.problem.ignored.without_ignored` (HEFT kept groups whole, and memory)."""
    work = problem if TimingRules.of(blocks, problem).times_transfers else without_transfers(problem)
    kinds = {b.kind for b in blocks}.union(*(b.subsumes for b in blocks))
    return without_ignored(work, groups="placement" not in kinds, capacities="memory" not in kinds)


def _interrupted(result: Result, signum: int) -> Result:
    """``result`` as the answer of a run stopped by the signal ``signum``, its message saying so."""
    import signal

    said = f"interrupted ({signal.Signals(signum).name})"
    message = result.message or ""
    if not message.startswith("interrupted"):
        message = f"{said}; {message}" if message else said
    return result.model_copy(update={"termination": Termination.INTERRUPTED, "message": message})


def register_method(name: str, *, replace: bool = False):
    """Class decorator: register a :class:`Method` subclass under ``name``."""
    def add(cls):
        cls.name = name
        METHODS.register(name, cls, replace=replace)
        return cls
    return add


def method_options(name: str) -> list[str]:
    """Names of the options a registered method accepts."""
    return list(METHODS.get(name).Options.model_fields)


def solve(problem, method: str = "auto", **options: Any) -> Schedule:
    """Solve ``problem`` with the registered ``method``; the schedule is validated.

    Parameters
    ----------
    problem : Problem, ProblemSpec, dict or path
    method : str
        A name from :func:`list_methods`: by default ``auto``, schedkit's best under one time
        budget (60 s unless ``time_limit`` says otherwise; it stops early on a proof).
    **options
        The method's options (``time_limit``, ``seed``...).
    """
    cls = METHODS.get(method)
    return cls(**options).solve(as_problem(problem))


def list_methods() -> list[tuple[str, str]]:
    """``(name, summary)`` of every registered method."""
    return [(name, doc_line(cls)) for name, cls in METHODS.items()]
