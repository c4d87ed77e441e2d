"""Event simulation of per-device scheduling on a fixed mapping (Mayer et al. 2017).

Every task has a device (``device_of``). The simulation advances from event to
event (a task ends, or a task's last input arrives); whenever a device is idle it
starts, among the *ready* tasks mapped to it, the one with the highest priority.
A task is ready once every predecessor has ended and its data has arrived:
``end[p] + problem.comm_time(size, device_of[p], device_of[i])``. Devices never
wait on purpose (the schedule is non-delay) and never run two tasks at once.

Under ``memory_timeline`` (``levels``, a :class:`~schedkit.timing.memory_levels.MemoryLevels`)
an idle device starts the first of its ready tasks, in priority order, that fits its
memory level now; while none fits it stays idle until a start changes the levels (in
``deltas`` a start on the device, whose negative activation is released before its
successor on the device starts; in ``lifetime`` a start anywhere, which may end an
output's lifetime) or a new task is ready. The schedule is then no longer non-delay, and a
simulation in which nothing can ever start again raises.

Resources that tasks hold (``transfers.holds``, :class:`~schedkit.timing.holds.Holds`) act
the same way: an idle device starts the first of its ready tasks, in priority order, that
finds a free unit of every resource it holds now, and a device none of whose ready tasks
does looks again when a holder ends.

The priority is one of

- ``None``: first in, first out -- the task whose inputs arrived first (ties: lower index);
- a sequence of floats, one per task (a static rule such as PCT);
- a callable ``priority(task, state) -> value`` (a dynamic rule such as MSR), called
  when a device chooses among its ready tasks; ``state`` is a :class:`SimState`.
  The values must be comparable (floats, or tuples compared element by element).

In every case a tie goes to the lower task index, so the result is deterministic.
Static and FIFO rules keep one heap per device: ``O((V + E) log V)``. A dynamic rule
is evaluated for every ready task of a device each time it chooses.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import to_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> gpu, cpu = p.device_index["gpu0"], p.device_index["cpu"]
>>> device_of = [gpu, gpu, gpu, gpu, gpu, cpu]
>>> start = simulate(p, device_of)                  # FIFO
>>> [round(t, 3) for t in start]                    # 'sample' waits for the logits to reach the cpu
[0.0, 0.4, 1.6, 3.1, 3.3, 4.216]
>>> round(to_schedule(p, device_of, start, "fifo").validate(p).makespan, 3)
4.516
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Sequence

from schedkit.errors import ProblemError
from schedkit.problem.mapping import check_mapping
from schedkit.problem import Problem
from schedkit.timing.transfers import Transfers

__all__ = ["SimState", "simulate"]


class SimState:
    """What a dynamic priority rule may read during :func:`simulate` (read-only).

    Attributes
    ----------
    problem : Problem
    device_of : sequence of int
        The mapping being simulated.
    time : float
        The current time.
    running : list of int
        Task running on each device, ``-1`` when the device is idle.
    unstarted_preds : list of int
        Number of each task's predecessors that have not started yet.
    ready_time : list of float
        Arrival time of the last input of each task (final once it is ready).
    """

    __slots__ = ("problem", "device_of", "time", "running", "unstarted_preds", "ready_time")

    def __init__(self, problem: Problem, device_of: Sequence[int]):
        n = len(problem.tasks)
        self.problem = problem
        self.device_of = device_of
        self.time = 0.0
        self.running = [-1] * len(problem.devices)
        self.unstarted_preds = [len(problem.preds[i]) for i in range(n)]
        self.ready_time = [0.0] * n

    def idle(self, device: int) -> bool:
        """Whether ``device`` runs no task at the current time."""
        return self.running[device] < 0


Priority = Sequence[float] | Callable[[int, SimState], Any] | None


def simulate(problem: Problem, device_of: Sequence[int], priority: Priority = None, *,
             check: bool = True, transfers: Transfers | None = None, levels=None) -> list[float]:
    """Start times of every task when each device runs its ready tasks by ``priority``.

    Parameters
    ----------
    problem : Problem
    device_of : sequence of int
        The device of each task.
    priority : None, sequence of float or callable
        ``None`` for FIFO (earliest input arrival first); a static priority per task
        (higher first); or ``priority(task, state)`` evaluated at choice time with a
        :class:`SimState` (higher first). Ties go to the lower task index.
    check : bool
        Validate the mapping first (:func:`~schedkit.problem.mapping.check_mapping`). Only
        skip it for a mapping already known to be feasible: devices, memory and
        collocation are then not checked (data sent between unlinked devices still raises,
        from :meth:`~schedkit.problem.Problem.comm_time`).
    transfers : Transfers, optional
        Channel and port timelines of a ``congestion`` formulation: when a task ends, its
        outgoing transfers (in edge order) are booked into the earliest slots their
        resources leave free, and their times kept in ``transfers.booked``. With ``holds``,
        a task starts only when a unit of every resource it holds is free.
    levels : MemoryLevels, optional
        Fresh memory levels of a ``memory_timeline`` formulation (built with the same
        ``transfers``): an idle device starts the first of its ready tasks, by priority,
        that :meth:`~schedkit.timing.memory_levels.MemoryLevels.earliest` lets start now, and
        waits while none does.

    Returns
    -------
    list of float
        Start time of each task; end times are ``start + problem.durations[i][device_of[i]]``.

    Raises
    ------
    ProblemError
        When the mapping is infeasible (see :func:`~schedkit.problem.mapping.check_mapping`),
        or, with ``levels``, when tasks are left that no memory level ever lets start (this
        simulation found no memory-feasible schedule: not a proof that none exists).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({
    ...     "devices": [{"name": "d"}],
    ...     "tasks": [{"name": "a", "work": 1}, {"name": "b", "work": 2}, {"name": "c", "work": 1}],
    ...     "edges": [{"src": "a", "dst": "c"}]})
    >>> simulate(p, [0, 0, 0])                  # FIFO: a and b ready at 0, a has the lower index
    [0.0, 1.0, 3.0]
    >>> simulate(p, [0, 0, 0], [0.0, 5.0, 0.0])  # b first
    [2.0, 0.0, 3.0]

    Under ``memory_timeline`` a task waits for the memory a release frees:

    >>> from schedkit.timing import MemoryLevels
    >>> q = Problem.from_dict({"devices": [{"name": "d", "memory": 3}],
    ...     "tasks": [{"name": "f", "work": 1, "activation_memory": 2},
    ...               {"name": "w", "work": 1, "activation_memory": -2},
    ...               {"name": "g", "work": 1, "activation_memory": 2}],
    ...     "edges": [{"src": "f", "dst": "w"}]})
    >>> simulate(q, [0, 0, 0], [3.0, 1.0, 2.0])          # g before w: 4 units at 1
    [0.0, 2.0, 1.0]
    >>> simulate(q, [0, 0, 0], [3.0, 1.0, 2.0], levels=MemoryLevels(q, "deltas"))
    [0.0, 1.0, 2.0]
    """
    if check:
        check_mapping(problem, device_of)
    n, m = len(problem.tasks), len(problem.devices)
    dev = list(device_of)
    durations = problem.durations
    dur = [durations[i][dev[i]] for i in range(n)]
    succs = problem.succs
    # The transfer rule, problem.comm_time, called per edge: arrival() would add one call per
    # edge, and no precomputed table can be cheaper since every mapping needs new entries.
    comm_time = problem.comm_time
    congested = transfers is not None and transfers.congested
    holds = transfers.holds if transfers is not None else None
    waits = levels is not None or holds is not None   # a ready task may have to wait
    waiting = [len(problem.preds[i]) for i in range(n)]
    ready_at = [0.0] * n
    start = [0.0] * n

    dynamic = callable(priority)
    fifo = priority is None
    if not dynamic and not fifo:
        if len(priority) != n:
            raise ProblemError(f"the priority has {len(priority)} entries for {n} tasks")
        neg = [-float(v) for v in priority]
    state = SimState(problem, dev) if dynamic else None
    if state is not None:
        state.ready_time = ready_at
    queues: list[list] = [[] for _ in range(m)]
    running = state.running if state is not None else [-1] * m
    # memory_timeline: end times for the levels, and the idle devices none of whose ready
    # tasks fits (they look again after every start: only a placement changes the levels).
    end = [0.0] * n if levels is not None else None
    blocked: set[int] = set()

    def release(i: int) -> None:
        d = dev[i]
        if dynamic:
            queues[d].append(i)
        elif fifo:
            heapq.heappush(queues[d], (ready_at[i], i))
        else:
            heapq.heappush(queues[d], (neg[i], i))

    def fitting(d: int, now: float) -> int:
        """Take from ``d``'s queue its first ready task, by priority, that fits now (-1: none)."""
        queue = queues[d]
        if dynamic:
            ranked = sorted(((priority(i, state), -i), i) for i in queue)[::-1]
        else:
            ranked = [(entry, entry[1]) for entry in sorted(queue)]
        for entry, i in ranked:
            # A later time than now would be a release the levels already know of, but on an
            # idle device every item that has an end has ended (its last consumer here ended,
            # its transfers arrived before their consumers started): "not now" is enough.
            at = now if levels is None else levels.earliest(i, d, now, dev, end)
            if at is not None and at <= now and (holds is None or holds.earliest(i, now, dur[i]) <= now):
                queue.remove(i if dynamic else entry)
                if not dynamic:
                    heapq.heapify(queue)
                return i
        return -1

    events: list[tuple[float, int, int]] = []   # (time, kind, task); kind 0: end, 1: inputs arrived
    dirty = set()
    for i in range(n):
        if waiting[i] == 0:
            release(i)
            dirty.add(dev[i])
    now = 0.0
    done = 0
    while True:
        # Choose on every device whose situation changed at time `now` (with levels, the
        # blocked devices again after a start: it may have freed memory for them).
        while dirty:
            if state is not None:
                state.time = now
            started = False
            for d in sorted(dirty):
                queue = queues[d]
                if running[d] >= 0 or not queue:
                    continue
                if waits:
                    i = fitting(d, now)
                    if i < 0:
                        blocked.add(d)
                        continue
                    blocked.discard(d)
                    if dynamic:
                        for j, _ in succs[i]:
                            state.unstarted_preds[j] -= 1
                elif dynamic:
                    best_k, best_key = 0, None
                    for k, i in enumerate(queue):
                        key = (priority(i, state), -i)
                        if best_key is None or key > best_key:
                            best_k, best_key = k, key
                    i = queue[best_k]
                    queue[best_k] = queue[-1]
                    queue.pop()
                    for j, _ in succs[i]:
                        state.unstarted_preds[j] -= 1
                else:
                    i = heapq.heappop(queue)[1]
                start[i] = now
                running[d] = i
                heapq.heappush(events, (now + dur[i], 0, i))
                if levels is not None:
                    end[i] = now + dur[i]
                    levels.place(i, d, now, end[i], dev, end)
                    started = True
                if holds is not None:
                    holds.add(i, now, now + dur[i])
            dirty.clear()
            if started and blocked:
                dirty.update(blocked)
        if not events:
            break
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, i = heapq.heappop(events)
            d = dev[i]
            if kind == 1:
                release(i)
                dirty.add(d)
                continue
            running[d] = -1
            dirty.add(d)
            if holds is not None and holds.holds(i):
                dirty.update(blocked)     # a unit is free again
            done += 1
            for j, size in succs[i]:
                e = dev[j]
                if congested:
                    at = transfers.book(i, j, size, d, e, now)[1]
                else:
                    at = now + comm_time(size, d, e)     # = arrival(problem, now, size, d, e)
                if at > ready_at[j]:
                    ready_at[j] = at
                waiting[j] -= 1
                if waiting[j] == 0:
                    if ready_at[j] <= now:
                        release(j)
                        dirty.add(e)
                    else:
                        heapq.heappush(events, (ready_at[j], 1, j))
    if done < n:
        if levels is not None:
            left = sorted(i for d in blocked for i in (queues[d] if dynamic else (e[1] for e in queues[d])))
            names = ", ".join(f"'{problem.tasks[i]}'" for i in left[:3])
            raise ProblemError(f"task {names}: its device never has memory for it in this simulation "
                               f"(memory_timeline, fixed mapping; not a proof that no schedule exists)")
        raise ProblemError("the simulation stalled: the task graph has a cycle")  # pragma: no cover
    return start
