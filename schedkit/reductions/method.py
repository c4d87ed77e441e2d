"""A registered decomposition as a method: apply, solve the parts with an inner method, invert.

:func:`decomposition_method` makes the :class:`~schedkit.methods.Method` of a
registered :class:`~schedkit.reductions.reduction.Reduction` or
:class:`~schedkit.reductions.reduction.Split` and registers it under the same name
(:func:`register_decomposition` does it for every decomposition). The method

1. asks the inner method for the blocks its schedules are judged by,
2. applies the decomposition to the problem (its :class:`~schedkit.reductions.chain.Chain`),
   or refuses it in one line (a block it does not support, a graph it cannot split),
3. solves every part with the inner method, reached by name, on the executor the
   options name (:func:`~schedkit.reductions.executor.run_parts`): by default a process
   pool over the usable cores, kept for later runs; a round of one part runs in this
   process. A split that comes in rounds (``kedge``) gets the next round from the results,
4. inverts the results; :func:`~schedkit.reductions.chain.combine` decides the quality.

With a ``time_limit``, the whole method (apply, every part and round, invert) keeps to it
(:mod:`~schedkit.reductions.budget`): each part gets its share of the time left (within
the inner method's own ``time_limit``), on every executor; the parts the limit leaves
without a schedule are finished by a fast heuristic (:data:`FINISHER`), and the result
says so (status ``feasible`` unless a bound proves it optimal, termination
``time_limit``). The inner method gets the method's ``seed`` unless its options set one;
``threads`` bounds the number of workers of ``process`` and ``dask`` executors.

On a terminal, a progress line counts the parts (:mod:`schedkit.progress`).

:meth:`~schedkit.methods.Method.result` then validates the schedule on the *original*
problem with the inner method's blocks: with ``inner="milp"`` and a formulation, that
formulation's semantic blocks; with a heuristic, the problem's own semantics.

Examples
--------
>>> from schedkit import Problem, solve
>>> from schedkit.reductions import Split, register_decomposition
>>> @register_decomposition("whole_method_example")
... class Whole(Split):
...     '''One part: the problem itself.'''
...     exactness = "equivalent"
...     def apply(self, problem, blocks=None):
...         return [problem], self.inverse(problem)
...     def invert(self, results, inverse):
...         return results[0]
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "whole_method_example", inner="milp", inner_options="time_limit=30")
>>> s.status, s.method, round(s.makespan, 3)
('optimal', 'whole_method_example:milp', 4.516)
>>> solve(p, "whole_method_example", inner="heft").status     # what heft's own schedule says
'heuristic'
"""

from __future__ import annotations

import signal
from typing import Any, ClassVar

from pydantic import field_validator

from schedkit.blocks.base import block_from_data
from schedkit.blocks.interchangeable import device_groups, first_difference
from schedkit.reductions.budget import Budget, finish_seconds, list_schedule_seconds
from schedkit.reductions.chain import Chain
from schedkit.reductions.executor import (OnProgress, bounded_executor, discard_pools, executor_for,
                                         executor_workers, parse_executor, run_parts)
from schedkit.reductions.parts import Part, parse_options_text, part_options
from schedkit.reductions.reduction import DECOMPOSITIONS, DecompositionOutOfTime, NoOptions, Reduction, Split
from schedkit.reductions.retry import retry_unproven
from schedkit import interrupt
from schedkit.errors import Interrupted, ProblemError, SchedkitError
from schedkit.methods import METHODS, Method, MethodOptions, register_method
from schedkit.registry import Registry
from schedkit.problem import Problem
from schedkit.progress import silenced, steps
from schedkit.schedule import Quality, Result, Termination

#: The fast heuristic that finishes the parts a time limit left without a schedule.
FINISHER = "heft"


class DecomposeOptions(MethodOptions):
    """Options of every decomposition method (a decomposition's own options are added)."""

    inner: str = "milp"
    """The registered method that solves every part."""
    inner_options: dict[str, Any] = {}
    """Its options, as plain data (a formulation as its data or its name), or as text: a
    JSON object or ``key=value`` pairs separated by commas (``time_limit=5,formulation=jssp``);
    a method that takes ``threads`` gets ``threads=1`` per part unless set here."""
    executor: str = "process"
    """Where the parts run: ``process`` (a process pool over the usable cores, the default),
    ``process:N``, ``serial`` (this process, one after the other), ``dask`` (a Dask
    ``LocalCluster``; ``dask:N`` with N workers) or ``dask://HOST:PORT`` (a running Dask
    scheduler). The schedule is the same on every executor."""

    @field_validator("inner")
    @classmethod
    def _known_method(cls, value: str) -> str:
        METHODS.get(value)  # one-line error naming the known methods
        return value

    @field_validator("inner_options", mode="before")
    @classmethod
    def _options_from_text(cls, value: Any) -> Any:
        return parse_options_text(value) if isinstance(value, str) else value


class DecompositionMethod(Method):
    """Base of the methods :func:`decomposition_method` makes.

    Parameters
    ----------
    progress : callable, optional
        ``progress(done, total)`` while the parts are solved (see
        :func:`~schedkit.reductions.executor.run_parts`).
    **options
        :class:`DecomposeOptions` and the decomposition's own options.
    """

    Options: ClassVar[type[MethodOptions]] = DecomposeOptions
    decomposition: ClassVar[type[Reduction] | type[Split] | None] = None
    """The registered reduction or split this method runs."""
    provenance: ClassVar[str] = "decomposition"

    def __init__(self, progress: OnProgress | None = None, **options: Any):
        super().__init__(**options)
        o = self.options
        if o.inner == self.name:
            raise SchedkitError(f"method '{self.name}': the inner method cannot be '{self.name}' itself")
        parse_executor(o.executor)  # fail before anything runs
        # The inner method, made here, checks its options and gives the blocks to judge by.
        self.inner = METHODS.get(o.inner)(**part_options(o.inner, o.inner_options))
        own = {key: getattr(o, key) for key in self.decomposition.Options.model_fields}
        self.chain = Chain.of(self.decomposition(**own))
        self.progress = progress if progress is not None else steps(self.name, "parts")

    def blocks(self, problem: Problem) -> list:
        """The inner method's blocks: the parts and the whole are judged by the same ones."""
        return self.inner.blocks(problem)

    def run(self, problem: Problem) -> Result:
        try:
            return self._run(problem)
        except ProblemError as failed:
            # (the problem passed its checks: the decomposition could not stitch it, kedge's
            # module that no longer fits the memory its earlier modules left, or a part
            # without a schedule; the whole problem may still have one)
            kept = self._finished_whole(problem, Termination.FINISHED,
                                        f"{failed}; {FINISHER}'s schedule of the whole problem instead")
            if kept is None:
                raise
            return kept
        except KeyboardInterrupt as stop:
            if isinstance(stop, Interrupted) and stop.result is not None and stop.problem is problem:
                raise
            # (Ctrl-C or SIGTERM before the parts were combined: the whole problem by the
            # finisher, in milliseconds, so that a schedule is kept; a second signal ends it)
            signum = getattr(stop, "signum", None) or interrupt.received() or signal.SIGINT
            discard_pools()  # (their running parts would hold the exit until their own limits)
            kept = self._finished_whole(problem, Termination.INTERRUPTED,
                                        f"interrupted before the parts were combined: {FINISHER}'s "
                                        f"schedule of the whole problem")
            if kept is None:
                raise
            raise Interrupted(kept, signum, problem) from None

    def _finished_whole(self, problem: Problem, termination: Termination, message: str) -> Result | None:
        """The whole problem solved by :data:`FINISHER` under the inner method's formulation,
        ended by ``termination`` and saying ``message`` (``None`` when the finisher does not
        take that formulation)."""
        takes = "formulation" in METHODS.get(FINISHER).Options.model_fields
        formulation = self._part_options(problem).get("formulation") if takes else None
        options = part_options(FINISHER, {} if formulation is None else {"formulation": formulation})
        try:
            with silenced():
                result = METHODS.get(FINISHER)(**options).result(problem)
        except Interrupted as again:  # (the signal still pending stops it once it has its schedule)
            result = again.result
        except SchedkitError:
            return None
        if result is None or result.schedule is None:
            return None
        label = f"{self.name}:{self.options.inner}"
        # (``seconds`` unset: the method's own time is reported, not the finisher's milliseconds)
        return result.model_copy(update={
            "schedule": result.schedule.model_copy(update={"method": label}), "method": label,
            "termination": termination, "message": message, "seconds": None})

    def _whole_in_time(self, problem: Problem, budget: Budget, finish: float,
                       late: DecompositionOutOfTime) -> Result:
        """What a decomposition that cannot end in time returns: :data:`FINISHER`'s schedule of
        the whole problem, saying why, when that and the solve's end (``finish`` seconds) fit
        in the time left; else the one-line reason ``late`` is raised."""
        left = budget.left()
        if left is not None and list_schedule_seconds(problem) + finish > left:
            raise late
        kept = self._finished_whole(problem, Termination.TIME_LIMIT,
                                    f"{late}: {FINISHER}'s schedule of the whole problem instead")
        if kept is None:
            raise late
        return kept

    def _run(self, problem: Problem) -> Result:
        o = self.options
        budget = Budget(o.time_limit)
        for step in self.chain.steps:
            step.deadline = budget.deadline
        blocks = self.blocks(problem)
        # (the whole problem's schedule is built, validated and written after the last round)
        finish = 0.0 if budget.seconds is None else finish_seconds(problem)
        try:
            subproblems, inverse = self.chain.apply(problem, blocks)
        except DecompositionOutOfTime as late:
            return self._whole_in_time(problem, budget, finish, late)
        results: list[Result] = []
        finished = 0
        with executor_for(bounded_executor(o.executor, o.threads)) as executor:
            while True:
                parts = [Part.of(sub, o.inner, self._part_options(sub)) for sub in subproblems]
                left = budget.left()
                end = budget.round_end(self.chain.round_share(inverse),
                                       0.0 if left is None else self.chain.invert_seconds(left) + finish)
                # A round of one part gains nothing from a worker: it runs here.
                pool = executor if len(parts) > 1 else None
                found = run_parts(parts, pool, self._round_progress(len(results)), deadline=end,
                                  workers=executor_workers(pool), whole=problem)
                if budget.seconds is not None:  # without a limit, a part's own limit stands
                    # (what the easy parts left goes to the hard ones)
                    found = retry_unproven(found, lambda todo, until: run_parts(
                        [parts[k] for k in todo], pool if len(todo) > 1 else None, deadline=until,
                        workers=executor_workers(pool)), end)
                    found, count = self._finish(subproblems, found)
                    finished += count
                results += found
                step = self.chain.advance(results, inverse)
                if step is None:
                    break
                subproblems, inverse = step
        result = self.chain.invert(results, inverse, problem=problem, method=f"{self.name}:{o.inner}")
        return self._told(result, finished, len(results))

    def _finish(self, subproblems: list[Problem], results: list[Result]) -> tuple[list[Result], int]:
        """The results, with every part the time limit left without a schedule solved by
        :data:`FINISHER` (in this process: it takes milliseconds), and how many were."""
        takes = "formulation" in METHODS.get(FINISHER).Options.model_fields
        done, count = list(results), 0
        for k, result in enumerate(results):
            if result.schedule is not None or result.termination is not Termination.TIME_LIMIT \
                    or result.quality is Quality.INFEASIBLE:
                continue
            # the part's formulation, so that the schedule is judged by the same blocks
            formulation = self._part_options(subproblems[k]).get("formulation") if takes else None
            options = part_options(FINISHER, {} if formulation is None else {"formulation": formulation})
            try:
                with silenced():
                    done[k] = METHODS.get(FINISHER)(**options).result(subproblems[k])
            except SchedkitError:
                continue  # (a formulation the finisher does not take): the part stays unsolved
            count += 1
        return done, count

    def _told(self, result: Result, finished: int, total: int) -> Result:
        """``result``, saying that the time limit ran out and what was done about it."""
        if not finished:
            return result
        note = (f"the time limit ran out: {finished} of {total} parts were finished by {FINISHER} "
                f"(a heuristic)")
        return result.model_copy(update={"termination": Termination.TIME_LIMIT,
                                         "message": "; ".join(filter(None, [result.message, note]))})

    def _part_options(self, sub: Problem) -> dict:
        """The inner method's options for the part ``sub``.

        A part may tell the devices of a group apart (a boundary task pinned to one of
        them): it is solved without the formulation's ``symmetry`` block, a speed-up that
        does not change the optimum, instead of being refused by it.
        """
        options = dict(self.options.inner_options)
        if "seed" not in options and "seed" in METHODS.get(self.options.inner).Options.model_fields:
            options["seed"] = self.options.seed
        if not device_groups(sub) or first_difference(sub) is None \
                or "formulation" not in METHODS.get(self.options.inner).Options.model_fields:
            return options
        data = self.inner.formulation_data(sub)
        kept = [b for b in data["blocks"] if block_from_data(b).kind != "symmetry"]
        if len(kept) == len(data["blocks"]):
            return options
        return {**options, "formulation": {**data, "blocks": kept}}

    def _round_progress(self, before: int) -> OnProgress | None:
        """The progress of one round, counted with the parts of the rounds before it."""
        if self.progress is None:
            return None
        return lambda done, total: self.progress(before + done, before + total)


def decomposition_method(name: str, decomposition: type[Reduction] | type[Split], *,
                         replace: bool = False) -> type[DecompositionMethod]:
    """Make and register (in :data:`~schedkit.methods.METHODS`, under ``name``) the method
    that runs ``decomposition``.

    Its options are :class:`DecomposeOptions` plus the fields of
    ``decomposition.Options``; its summary is the decomposition's.
    """
    own = decomposition.Options
    if own is NoOptions:
        options = DecomposeOptions
    else:
        clash = set(own.model_fields) & set(DecomposeOptions.model_fields)
        if clash:
            raise SchedkitError(f"decomposition '{name}': option '{sorted(clash)[0]}' is an option "
                                f"of every decomposition method; rename it")
        options = type(f"{decomposition.__name__}Options", (DecomposeOptions, own),
                       {"__doc__": own.__doc__, "__module__": decomposition.__module__})
    attrs = {"__doc__": decomposition.__doc__, "__module__": decomposition.__module__,
             "__qualname__": f"{decomposition.__qualname__}Method",
             "Options": options, "decomposition": decomposition}
    cls = type(f"{decomposition.__name__}Method", (DecompositionMethod,), attrs)
    return register_method(name, replace=replace)(cls)


def register_decomposition(name: str, *, replace: bool = False, method: bool = True):
    """Class decorator: register a :class:`Reduction` or :class:`Split` under ``name``.

    With ``method=True`` (the default) a :class:`~schedkit.methods.Method` of the same
    name is registered too (see :func:`decomposition_method`),
    so that ``schedkit.solve(problem, name, inner="milp")`` runs it. A plug-in package lists
    its module under the entry-point group ``schedkit.decompositions`` (and under
    ``schedkit.methods``, so that the method registry finds it without the decomposition
    registry being asked first).

    Examples
    --------
    >>> class Whole(Split):
    ...     '''One part: the problem itself.'''
    ...     exactness = "equivalent"
    ...     def apply(self, problem, blocks=None):
    ...         return [problem], self.inverse(problem)
    ...     def invert(self, results, inverse):
    ...         return results[0]
    >>> register_decomposition("whole_example")(Whole) is Whole
    True
    >>> DECOMPOSITIONS.get("whole_example").name
    'whole_example'
    >>> METHODS.get("whole_example").provenance
    'decomposition'
    """
    def add(cls):
        if not (isinstance(cls, type) and issubclass(cls, (Reduction, Split))):
            raise TypeError(f"{getattr(cls, '__name__', cls)!r} is neither a Reduction nor a Split")
        previous = _lookup(DECOMPOSITIONS, name)
        DECOMPOSITIONS.register(name, cls, replace=replace)
        if method:
            try:
                decomposition_method(name, cls, replace=replace)
            except Exception:  # both registries or neither
                DECOMPOSITIONS.unregister(name)
                if previous is not None:
                    DECOMPOSITIONS.register(name, previous)
                raise
        cls.name = name
        return cls
    return add


def _lookup(registry: Registry, name: str) -> Any:
    try:
        return registry.get(name)
    except SchedkitError:
        return None


def unregister_decomposition(name: str) -> None:
    """Remove the decomposition ``name`` and the method registered with it (a test's entry)."""
    cls = _lookup(DECOMPOSITIONS, name)
    if cls is not None and getattr(_lookup(METHODS, name), "decomposition", None) is cls:
        METHODS.unregister(name)
    DECOMPOSITIONS.unregister(name)
