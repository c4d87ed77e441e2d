"""What the search heuristics (``annealing``, ``evolution``) share.

A search state is a *device string*: one device per task.
:class:`~schedkit.problem.space.PlacementSpace` knows which strings are feasible (allowed
devices, static memory, collocation, links between the devices of adjacent tasks) and
makes moves, a collocation group as one unit; a string is timed by
:class:`~schedkit.timing.ordered.OrderedTiming` in breadth-first topological order
(DiviML's evaluation). :class:`SearchMethod` holds the common options, the starting
point and the final schedule.

Under ``memory_timeline`` a string's memory levels depend on its times, which the space
cannot foresee: :class:`LevelledTiming` times it by
:func:`~schedkit.timing.list_schedule` with the levels (a task waits for memory rather
than overflow) and values a string it cannot time that way ``inf``, which no search
keeps over a finite one.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, ClassVar, Sequence

from pydantic import Field

from schedkit.errors import ProblemError, SchedkitError
from schedkit.heuristics.components import fastest_devices, order_priority
from schedkit.heuristics.formulation import HONOURED, FollowsFormulation, FormulationOptions
from schedkit.methods import MAX_TIME_LIMIT, METHODS, MethodOptions
from schedkit.problem import Problem
from schedkit.problem.bounds import formulation_bound
from schedkit.problem.space import PlacementSpace
from schedkit.progress import steps
from schedkit.schedule import Result, Schedule
from schedkit.timing import (OrderedTiming, TimingRules, bfs_order, list_schedule, placement_indices,
                             to_schedule)

__all__ = ["SearchOptions", "SearchMethod"]


class LevelledTiming:
    """Times device strings under ``memory_timeline``: :class:`OrderedTiming`'s interface.

    A string is timed by :func:`~schedkit.timing.list_schedule` in ``order``, its devices
    fixed, with fresh :class:`~schedkit.timing.Transfers` and
    :class:`~schedkit.timing.MemoryLevels`: a task starts only when it fits its device's
    level, and waits for a release otherwise. A string on which some task never fits is
    worth ``math.inf``. Each string is timed from the start (``first`` is ignored: a wait
    moves tasks after it whatever their position), so a call costs a whole list schedule.

    Parameters
    ----------
    problem : Problem
    order : sequence of int
        A topological order of all tasks.
    insertion : bool
    rules : TimingRules
        The formulation's timing rules: its ``memory`` mode (``deltas`` or ``lifetime``) and,
        when it congests transfers, the resource they hold.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"name": "two", "devices": [{"name": "a", "memory": 3}, {"name": "b"}],
    ...     "tasks": [{"name": "x", "work": 1, "activation_memory": 2},
    ...               {"name": "y", "work": 1, "activation_memory": 2}]})
    >>> timing = LevelledTiming(p, bfs_order(p), rules=TimingRules(memory="deltas"))
    >>> timing([0, 1]), timing([0, 0])      # 4 units never fit on a (capacity 3)
    (1.0, inf)
    """

    def __init__(self, problem: Problem, order: Sequence[int], insertion: bool = True,
                 rules: TimingRules = TimingRules(memory="deltas")):
        if rules.memory is None:
            raise ValueError("LevelledTiming times a memory timeline: rules.memory is None")
        self.problem, self.order, self.insertion, self.rules = problem, list(order), insertion, rules
        self.position = [0] * len(self.order)
        for k, i in enumerate(self.order):
            self.position[i] = k
        self._priority = order_priority(self.order)

    def keep(self) -> None:
        """Nothing to keep: every string is timed from the start."""

    def __call__(self, device_of: Sequence[int], first: int = 0) -> float:
        """The makespan of ``device_of`` with the memory levels, ``inf`` when some task never fits."""
        p = self.problem
        transfers = self.rules.transfers(p)
        try:
            _, start = list_schedule(p, self._priority, device_of=device_of, insertion=self.insertion,
                                     transfers=transfers, levels=self.rules.levels(p, transfers))
        except ProblemError:
            return math.inf
        return max((t + p.durations[i][device_of[i]] for i, t in enumerate(start)), default=0.0)


#: What the schedule of the best string costs to assemble (list schedule, rows, transfers), in
#: timings of one whole string (measured on 10,000 tasks: a timing 0.09 s, the rest 1-2 s).
FINISH_EVALUATIONS = 20


class SearchOptions(FormulationOptions):
    """Options of the search heuristics."""

    seed: int = 0
    """Seed of the random generator: a seed and an iteration budget give one schedule."""
    iterations: int = Field(5000, ge=0)
    """Number of candidate strings drawn (infeasible ones count)."""
    time_limit: float | None = Field(None, gt=0, le=MAX_TIME_LIMIT)
    """Stop after this many seconds even if iterations remain (the result then depends
    on the machine's speed)."""
    start: str | None = None
    """Registered method whose schedule starts the search; ``None``: each task on its
    fastest allowed device."""
    insertion: bool = True
    """Time strings with insertion (a task may fill an idle gap on its device); ``False``
    queues the tasks on every device in breadth-first order, as DiviML does."""


class SearchMethod(FollowsFormulation):
    """Base class of the searches over device strings (not registered itself).

    Subclasses implement :meth:`search`; :meth:`run` prepares the starting string,
    the timing and the space, and turns the best string found into a schedule. The
    result is never worse than the starting point: when ``start`` names a method,
    that method's own schedule competes with the strings the search times.

    Under ``memory_timeline`` strings are timed by :class:`LevelledTiming` (``inf``: some
    task never fits), the final schedule is built with the levels too, and a search whose
    best string is still ``inf`` raises a :class:`~schedkit.errors.ProblemError` (not a
    proof that no schedule exists).

    Parameters
    ----------
    progress : callable, optional
        ``progress(done, total)`` over the iterations, called about every 1% of them;
        by default a progress line on a terminal (:func:`schedkit.progress.steps`).
    **options
        The method's options.
    """

    Options: ClassVar[type[MethodOptions]] = SearchOptions
    honours = HONOURED | {"memory_timeline"}

    def __init__(self, progress: Callable[[int, int], Any] | None = None, **options: Any):
        super().__init__(**options)
        self.progress = progress if progress is not None else steps(self.name, "iterations")

    def ticks(self, total: int) -> Callable[[int], None]:
        """A ``tick(done)`` for a loop of ``total`` iterations: reports to :attr:`progress`
        every 1% of them (and at the end, ``tick(total)``); does nothing without progress."""
        show = self.progress
        if show is None or total <= 0:
            return lambda done: None
        every = max(1, total // 100)

        def tick(done: int) -> None:
            if done % every == 0 or done >= total:
                show(min(done, total), total)

        return tick

    def search(self, space: PlacementSpace, timing: OrderedTiming, device_of: list[int],
               value: float, deadline: float | None) -> tuple[list[int], float]:
        """Improve the feasible string ``device_of`` (makespan ``value``); return the best string.

        ``timing`` has ``device_of`` kept (see :meth:`OrderedTiming.keep`): a candidate that
        differs from the kept string from position ``first`` of the order on is timed by
        ``timing(candidate, first)``; keep it when it becomes the current string. Under
        ``memory_timeline`` it is a :class:`LevelledTiming`, whose values (``value`` too)
        may be ``inf``.
        """
        raise NotImplementedError

    def starting_point(self, problem: Problem, space: PlacementSpace,
                       timing: LevelledTiming | None = None) -> tuple[list[int], Schedule | None]:
        """The first string, and the schedule of the ``start`` method if one is named.

        ``timing``: under ``memory_timeline``, the timing that values a string ``inf`` when
        some task never fits. The fastest string is then also refused when it is ``inf``
        (MET starts instead), and when the start method finds no schedule the search starts
        from the fastest string all the same, if the space allows it: it may still find one.
        """
        name = self.options.start
        fastest = fastest_devices(problem)
        usable = space.feasible(fastest)
        if name is None:
            if usable and (timing is None or timing(fastest) < math.inf):
                return fastest, None
            # Memory, collocation or links forbid it (or, under memory_timeline, a task of it
            # never fits): the fastest device where the task fits (MET, which honours levels).
            name = "met"
        if name == self.name:
            raise SchedkitError(f"method '{self.name}': option 'start' cannot name the method itself")
        start = METHODS.get(name)
        # The formulation itself, not its name: a formulation given as data has no preset name.
        given = self._given if self._given is not None else self.options.formulation
        follows = {"formulation": given} if "formulation" in start.Options.model_fields else {}
        try:
            schedule = start(**follows).solve(problem)
        except ProblemError:
            if timing is None or not usable:
                raise
            return fastest, None
        if not schedule.tasks:
            raise SchedkitError(f"method '{self.name}': start method '{name}' found no schedule "
                                f"(status {schedule.status})")
        return placement_indices(problem, schedule), \
            (schedule if self.options.start is not None else None)

    def run(self, problem: Problem) -> Result:
        began = time.perf_counter()
        limit = self.options.time_limit
        space = PlacementSpace(problem)
        order = bfs_order(problem)
        rules = self.timing_rules(problem)
        levelled = None if rules.memory is None else LevelledTiming(problem, order, self.options.insertion, rules)
        device_of, start_schedule = self.starting_point(problem, space, levelled)
        bound = formulation_bound(problem, self.blocks(problem))
        if start_schedule is not None and limit is not None and time.perf_counter() - began > limit / 2:
            # (the start method took half the time: setting up the search's timing takes as
            # long again on large graphs, for a search that would have no time left)
            return self._start_result(problem, start_schedule, bound)
        timing = levelled if levelled is not None else \
            OrderedTiming(problem, order, insertion=self.options.insertion, rules=rules)
        timed = time.perf_counter()
        value = timing(device_of)
        timing.keep()
        # The search stops early enough to list-schedule its best string and assemble the
        # schedule's rows and transfers in time: about FINISH_EVALUATIONS timings of a string.
        finish = FINISH_EVALUATIONS * (time.perf_counter() - timed)
        deadline = None if limit is None else began + limit - finish
        best, value = self.search(space, timing, device_of, value, deadline)
        if start_schedule is not None and start_schedule.makespan <= value:
            # The search found nothing better than the start method's own schedule.
            return self._start_result(problem, start_schedule, bound)
        if value == math.inf:
            raise ProblemError(f"method '{self.name}': no device string it tried lets every task fit the "
                               f"memory levels (memory_timeline; not a proof that no schedule exists)")
        transfers = rules.transfers(problem)
        device_of, start = list_schedule(problem, order_priority(order), device_of=best,
                                         insertion=self.options.insertion, transfers=transfers,
                                         levels=rules.levels(problem, transfers))
        return Result.heuristic(to_schedule(problem, device_of, start, self.name, transfers), bound=bound)

    def _start_result(self, problem: Problem, start_schedule: Schedule, bound: float) -> Result:
        """The start method's schedule as this method's answer: its rows and transfer times."""
        return Result.heuristic(Schedule(problem=problem.name, method=self.name, status="heuristic",
                                         makespan=start_schedule.makespan, tasks=start_schedule.tasks,
                                         transfers=start_schedule.transfers), bound=bound)
