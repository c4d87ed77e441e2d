"""A decomposition's time limit: one wall-clock budget for apply, every part, every round and invert.

A :class:`Budget` is made when a decomposition method starts (its ``time_limit``) and
asked how much of it a round of parts may use (:meth:`Budget.round_end`) and how many
seconds each part of a round gets (:func:`part_seconds`). Parts are solved wherever the
executor runs them, in another process or on another machine, so what travels with a part
is a wall-clock time (``time.time()``, the one clock processes and hosts share), never a
``perf_counter`` value, which means nothing outside this process.

Sharing, so that no part runs past the limit and no round is starved:

- **sequential rounds** (``kedge`` solves one module after the other) share what is left:
  a round gets the share its split gives it
  (:meth:`~schedkit.reductions.reduction.Split.round_share`; ``kedge``: an equal share of
  the modules left), and what a round does not use passes on to the next;
- **parts of one round** run ``workers`` at a time: a part gets, when it starts, the
  round's time left divided by the waves of parts still to run, its own included
  (``ceil(parts left / workers)``; :func:`~schedkit.reductions.parts.time_limit`), so what a
  part does not use passes on to the parts after it;
- **invert** keeps what the decomposition asks for (``merge``'s refinement), and a small
  reserve (:data:`RESERVE`) stays for finishing the parts that ran out of time with a fast
  heuristic and for validating the schedule;
- **the end of a solve** (:func:`finish_seconds`): on a large graph, building the schedule
  of the whole problem, validating it and writing its file take seconds after the last
  phase, linear in its edges and tasks. Every method with a time limit (``auto``, every
  decomposition) keeps them back; on a small graph they are about 0.

Examples
--------
>>> budget = Budget(None)
>>> budget.left() is None, budget.expired(), budget.round_end(share=0.5) is None
(True, False, True)
>>> budget = Budget(10.0)
>>> 9.0 < budget.left() <= 10.0, budget.expired()
(True, False)
>>> 2.9 < budget.round_end(share=1 / 3) - time.time() <= 10.0 * (1 - RESERVE) / 3
True
"""

from __future__ import annotations

import time

from schedkit.problem.levels import graph_levels
from schedkit.problem.edge_table import edge_count

#: Share of the time limit kept back from the parts for finishing the ones that ran out of
#: time (a fast heuristic), inverting, validating and writing the schedule.
RESERVE = 0.04

#: Seconds a caller waits for a part past its time, before it gives up on it (a solver's
#: stop is not instantaneous: it finishes its node, builds its answer, sends it back).
GRACE = 1.0

#: CPU seconds per edge or task of the end of a solve: the schedule of the whole problem,
#: its validation and its file (measured on a 100,000-task layered graph of 3.0 million
#: edges: ``auto``'s answer made, canonical and validated in 4.5 s, its 450 MB file
#: written in 2 s).
FINISH_SECONDS = 2e-6

#: From this many edges and tasks, :func:`finish_seconds` measures the machine's slowdown;
#: below it the reserve is a few milliseconds and not worth the measurement.
FINISH_MEASURED = 200_000

#: CPU seconds of HEFT's list schedule of a whole problem per edge and task, and per task
#: and device (measured: ranks and list schedule 3.9-4.1 s on a 100,000-task layered graph of
#: 3.1 million edges and 50 devices, 1.1-1.25 s on a 96-layer transformer of 10,752 tasks and
#: 19,568 edges on 1,025 devices).
LIST_SECONDS, LIST_PLACE_SECONDS = 1.1e-6, 1.1e-7


def slowdown(problem) -> float:
    """Wall-clock seconds per CPU second of the problem's topological order and levels
    (first linear passes that HEFT's ranks, the bounds and ``merge`` reuse): 1 on a machine
    of its own, more where other work shares the cores (at most 8). Measured once per
    problem, and only on one of at least :data:`FINISH_MEASURED` edges and tasks (1 below).

    Examples
    --------
    >>> from schedkit import Problem
    >>> slowdown(Problem.load("examples/tiny.yaml"))
    1.0
    """
    if edge_count(problem) + len(problem.tasks) < FINISH_MEASURED:
        return 1.0
    cache = problem.arrays.__dict__  # (the passes are cached after the first measure)
    if "_slowdown" not in cache:
        wall, cpu = time.perf_counter(), time.process_time()
        problem.topological_order
        graph_levels(problem.arrays)
        cache["_slowdown"] = wall_per_cpu(time.perf_counter() - wall, time.process_time() - cpu)
    return cache["_slowdown"]


def wall_per_cpu(wall: float, cpu: float) -> float:
    """The slowdown a stretch of work measured: its wall-clock seconds per CPU second, from
    1 to 8 (1 when it took no CPU time).

    Examples
    --------
    >>> wall_per_cpu(3.0, 1.5), wall_per_cpu(1.0, 2.0), wall_per_cpu(1.0, 0.0)
    (2.0, 1.0, 1.0)
    """
    return min(8.0, max(1.0, wall / cpu)) if cpu > 0 else 1.0


def finish_seconds(problem, cpu: float = FINISH_SECONDS) -> float:
    """Wall-clock seconds the end of a solve needs after its last phase for ``problem``'s
    schedule: building it, validating it and writing its file (``cpu`` seconds per edge and
    task, by default :data:`FINISH_SECONDS`; a method whose end it measured lighter gives
    its own; times the machine's :func:`slowdown`). About 0 on a small problem.

    Examples
    --------
    >>> from schedkit import Problem
    >>> finish_seconds(Problem.load("examples/tiny.yaml")) < 1e-3
    True
    """
    return slowdown(problem) * cpu * (edge_count(problem) + len(problem.tasks))


def list_schedule_seconds(problem, per_cpu: float | None = None) -> float:
    """Wall-clock seconds of HEFT's list schedule of ``problem`` (:data:`LIST_SECONDS`,
    :data:`LIST_PLACE_SECONDS`), times ``per_cpu`` wall-clock seconds per CPU second (by
    default the machine's :func:`slowdown`): the finisher's schedule of the whole problem,
    and ``merge``'s floor.

    Examples
    --------
    >>> from schedkit import Problem
    >>> list_schedule_seconds(Problem.load("examples/tiny.yaml")) < 1e-3
    True
    """
    tasks = len(problem.tasks)
    cpu = LIST_SECONDS * (edge_count(problem) + tasks) + LIST_PLACE_SECONDS * tasks * len(problem.devices)
    return (slowdown(problem) if per_cpu is None else per_cpu) * cpu


class Budget:
    """The wall-clock time of one decomposition run.

    Parameters
    ----------
    seconds : float, optional
        The method's ``time_limit``, from now; ``None``: no limit (every method below
        returns ``None`` or ``False``).
    """

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        # Both clocks are read once: perf_counter for this process, time.time() for parts.
        began, wall = time.perf_counter(), time.time()
        self.deadline = None if seconds is None else began + seconds
        self.wall_deadline = None if seconds is None else wall + seconds

    def left(self) -> float | None:
        """Seconds left (never negative), or ``None`` without a limit."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def expired(self) -> bool:
        """Whether the limit has been reached."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def round_end(self, share: float = 1.0, keep: float = 0.0) -> float | None:
        """The wall-clock time (``time.time()``) by which the next round of parts must end.

        ``share``: the round's share of the time left (the rounds after it get the rest);
        ``keep``: seconds the decomposition's ``invert`` wants after the last round. The
        :data:`RESERVE` is kept back too.
        """
        if self.seconds is None:
            return None
        usable = max(0.0, self.left() - keep - RESERVE * self.seconds)
        return time.time() + usable * min(1.0, max(0.0, share))

