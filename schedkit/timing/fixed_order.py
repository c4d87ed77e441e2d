"""Times from a fixed mapping and a fixed task order on every device: the read-back engine.

A solver's answer is never taken as it is: its device choices and the order of the
tasks on each device are read (:func:`device_orders`), and the times recomputed
exactly and left-shifted (:func:`fixed_order_times`).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> device_of = [0, 0, 0, 0, 0, 1]
>>> orders = device_orders(p, device_of, [0.0, 0.4, 1.6, 3.1, 3.3, 4.2])
>>> [p.tasks[i] for i in orders[0]]
['embed', 'attn', 'mlp', 'norm', 'logits']
>>> [round(t, 3) for t in fixed_order_times(p, device_of, orders)]
[0.0, 0.4, 1.6, 3.1, 3.3, 4.216]
"""

from __future__ import annotations

import heapq
from typing import Sequence

from schedkit.errors import ScheduleError
from schedkit.numerics import SOLVER_TOL
from schedkit.problem import Problem
from schedkit.timing.assemble import to_schedule
from schedkit.timing.resources import arrival
from schedkit.timing.rules import TimingRules
from schedkit.timing.transfers import Transfers


def fixed_order_times(problem: Problem, device_of: Sequence[int],
                      device_orders: Sequence[Sequence[int]], transfers: Transfers | None = None,
                      transfer_starts: dict[tuple[int, int], float] | None = None,
                      not_before: Sequence[float] | None = None,
                      starts: Sequence[float] | None = None) -> list[float]:
    """Earliest start times given each task's device and the task order on every device.

    With ``transfers`` of a ``congestion`` formulation, transfers hold their channels and
    ports: given ``transfer_starts`` (a solver's transfer start per edge), the transfers on
    every resource keep the order of those starts and all times are the earliest that
    respect every order (the longest paths of the orders' graph); without, each task's
    inputs are booked into their earliest free slots as the tasks are timed
    (:meth:`~schedkit.timing.transfers.Transfers.arrivals`). The transfers' times are
    then in ``transfers.booked``.

    ``not_before``: a least start per task (and then ``transfer_starts``, congested or not, a
    least start per transfer): under ``memory_timeline`` a solver may delay a task or a
    transfer until memory is released, and moving it earlier could break the level.

    With ``transfers.holds`` (resources tasks hold), a holder starts no earlier than a unit of
    its resource is free: given ``starts`` (the solver's), in the order of those starts, each
    holder on the unit its predecessors in that order leave free first
    (:meth:`~schedkit.timing.holds.Holds.orders`), a chain kept like a device order; without,
    each holder is booked on the first unit free as it is timed.

    Raises :class:`~schedkit.errors.ScheduleError` when the device orders contradict the
    task graph (a cycle).
    """
    holds = transfers.holds if transfers is not None else None
    chains: list[list[int]] = []
    if holds is not None and starts is not None:
        ends = [t + problem.durations[i][device_of[i]] for i, t in enumerate(starts)]
        chains = holds.orders(start_order(problem, device_of, starts), starts, ends)
        holds = None    # (the chains keep the units; nothing is booked as the tasks are timed)
    if transfers is not None and transfer_starts is not None and (transfers.congested or not_before is not None):
        # (a transfer that waited for a memory release keeps its wait: the copy it makes
        # lives from its start, so starting it earlier could break the level)
        return _ordered_transfers(problem, device_of, [*device_orders, *chains], transfers, transfer_starts,
                                  not_before)
    congested = transfers is not None and transfers.congested
    n = len(problem.tasks)
    after: list[list[int]] = [[] for _ in range(n)]
    indegree = [len(problem.preds[i]) for i in range(n)]
    for i in range(n):
        after[i] = [j for j, _ in problem.succs[i]]
    unit_before: list[list[int]] = [[] for _ in range(n)]
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            after[a].append(b)
            indegree[b] += 1
            unit_before[b].append(a)
    for order in device_orders:
        for a, b in zip(order, order[1:]):
            after[a].append(b)
            indegree[b] += 1
    start = [0.0] * n
    end = [0.0] * n
    device_free = [0.0] * len(problem.devices)
    stack = [i for i in range(n) if indegree[i] == 0]
    done = 0
    while stack:
        i = stack.pop()
        d = device_of[i]
        held = problem.durations[i][d] > 0  # a task of zero duration holds its device for no time
        t = device_free[d] if held else 0.0
        if congested:
            t = max(t, transfers.arrivals(i, d, device_of, end, commit=True))
        else:
            for p, size in problem.preds[i]:
                t = max(t, arrival(problem, end[p], size, device_of[p], d))
        if not_before is not None and not_before[i] > t:
            t = not_before[i]
        for a in unit_before[i]:
            t = max(t, end[a])
        if holds is not None:
            t = holds.earliest(i, t, problem.durations[i][d])
            holds.add(i, t, t + problem.durations[i][d])
        start[i] = t
        end[i] = t + problem.durations[i][d]
        if held:
            device_free[d] = end[i]
        done += 1
        for j in after[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                stack.append(j)
    if done < n:
        raise ScheduleError("the device orders contradict the task graph")
    return start


def _ordered_transfers(problem: Problem, device_of: Sequence[int], device_orders: Sequence[Sequence[int]],
                       transfers: Transfers, transfer_starts: dict[tuple[int, int], float],
                       not_before: Sequence[float] | None = None) -> list[float]:
    """Earliest times of tasks and transfers under the device orders (and the units' chains
    of held resources, given with them) and, on every channel or port, the order of
    ``transfer_starts`` (a longest-path pass in topological order)."""
    n = len(problem.tasks)
    moving = [(i, j, size) for i, j, size in problem.edges
              if problem.moves(size, device_of[i], device_of[j])]
    # Nodes: tasks 0..n-1, then transfer k as node n + k.
    length = [problem.durations[i][device_of[i]] for i in range(n)]
    length += [problem.comm_time(size, device_of[i], device_of[j]) for i, j, size in moving]
    after: list[list[int]] = [[] for _ in length]
    moved = {}
    for k, (i, j, _) in enumerate(moving):
        after[i].append(n + k)
        after[n + k].append(j)
        moved[i, j] = k
    for i, j, _ in problem.edges:
        if (i, j) not in moved:
            after[i].append(j)
    for order in device_orders:
        for a, b in zip(order, order[1:]):
            after[a].append(b)
    users: dict[str, list[int]] = {}
    for k, (i, j, _) in enumerate(moving):
        for name in problem.occupies(device_of[i], device_of[j], transfers.resource):
            users.setdefault(name, []).append(k)
    for held in users.values():
        held.sort(key=lambda k: (transfer_starts.get(moving[k][:2], 0.0), moving[k][:2]))
        for a, b in zip(held, held[1:]):
            after[n + a].append(n + b)
    indegree = [0] * len(length)
    for targets in after:
        for b in targets:
            indegree[b] += 1
    start = [0.0] * len(length)
    if not_before is not None:
        start[:n] = [float(t) for t in not_before]
        for k, (i, j, _) in enumerate(moving):
            start[n + k] = transfer_starts.get((i, j), 0.0)
    stack = [a for a in range(len(length)) if indegree[a] == 0]
    done = 0
    while stack:
        a = stack.pop()
        done += 1
        finish = start[a] + length[a]
        for b in after[a]:
            if finish > start[b]:
                start[b] = finish
            indegree[b] -= 1
            if indegree[b] == 0:
                stack.append(b)
    if done < len(length):
        raise ScheduleError("the device and transfer orders contradict the task graph")
    for k, (i, j, _) in enumerate(moving):
        transfers.hold(i, j, device_of[i], device_of[j], start[n + k], start[n + k] + length[n + k])
    return start[:n]


def retime(problem: Problem, schedule, method: str, rules: TimingRules | None = None):
    """``schedule`` re-timed exactly on ``problem``: the same devices, the same order of the
    tasks on every device and (when the formulation's ``rules`` congest transfers) of the
    transfers on every channel or port, and of the holders on every unit of a held resource;
    every time the earliest those orders allow.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import to_schedule
    >>> p = Problem.load("examples/tiny.yaml")
    >>> late = to_schedule(p, [0, 0, 0, 0, 0, 1], [1.0, 2.0, 3.5, 5.0, 5.5, 7.0], "late")
    >>> round(retime(p, late, "again").makespan, 5)
    4.51625
    """
    rows = {r.task: r for r in schedule.tasks}
    device_of = [problem.device_index[rows[t].device] for t in problem.tasks]
    starts = [rows[t].start for t in problem.tasks]
    index = problem.task_index
    transfers = (rules or TimingRules()).transfers(problem)
    moved = {(index[t.src], index[t.dst]): t.start for t in schedule.transfers} if transfers.congested else None
    exact = fixed_order_times(problem, device_of, device_orders(problem, device_of, starts),
                              transfers, moved, starts=starts)
    return to_schedule(problem, device_of, exact, method, transfers)


def batched_schedule(problem: Problem, batches, method: str):
    """A solver's batches ``(task, device, inputs, start)`` re-timed exactly: one task per batch
    on its device (:class:`~schedkit.schedule.unrolled.Unrolled`), every batch as early as the
    solver's order on each device and the batches holding its inputs allow, folded back into
    batch rows."""
    from schedkit.schedule.unrolled import Unrolled

    unrolled = Unrolled(problem, [(i, inputs, d) for i, d, inputs, _ in batches])
    q = unrolled.problem
    device_of = [d for _, d, _, _ in batches]
    starts = [start for _, _, _, start in batches]
    exact = fixed_order_times(q, device_of, device_orders(q, device_of, starts))
    return unrolled.fold(to_schedule(q, device_of, exact, method))


def device_orders(problem, device_of, starts, among=None) -> list[list[int]]:
    """Task order on every device from solver start times, never against the task graph.

    Sorting by start alone can put a zero-length task after its successor (equal
    starts, or starts within the solver's tolerance). Tasks are instead taken in one
    topological order that always picks the ready task with the earliest start and,
    among equal starts, the earliest end: a zero-length task the solver put at the
    start of a longer one comes first, as in the solver's schedule. Times are compared
    on a grid of the solver's tolerance (a zero-length task at 1e-9 still starts "at 0").
    A task of zero duration holds its device for no time (as the validator and the
    ``no_overlap`` block say): it is in no device's order, and waits only for its inputs.

    ``among``: order only these tasks (a part's schedule covers some tasks of the
    problem; ``device_of`` and ``starts`` are then read, by index, for them alone), edges
    from the other tasks ignored.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> device_orders(p, {4: 1, 5: 1}, {4: 2.0, 5: 2.5}, among=[5, 4])
    [[], [4, 5]]
    """
    orders: list[list[int]] = [[] for _ in problem.devices]
    for i in start_order(problem, device_of, starts, among):
        if problem.durations[i][device_of[i]] > 0:
            orders[device_of[i]].append(i)
    return orders


def start_order(problem, device_of, starts, among=None) -> list[int]:
    """The tasks in one topological order by solver start (ties: earliest end, then index),
    on the grid of the solver's tolerance: every device's order (:func:`device_orders`) and
    every held resource's (:meth:`~schedkit.timing.holds.Holds.orders`) is a part of it, so
    that no two contradict each other.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> start_order(p, {4: 1, 5: 1}, {4: 2.0, 5: 2.5}, among=[5, 4])
    [4, 5]
    """
    tasks = range(len(problem.tasks)) if among is None else sorted(set(among))
    inside = set(tasks)
    grid = SOLVER_TOL * max([1.0] + [abs(starts[i]) for i in tasks])

    def key(i):
        start = starts[i]
        return (round(start / grid), round((start + problem.durations[i][device_of[i]]) / grid), i)

    indegree = {i: sum(1 for p, _ in problem.preds[i] if p in inside) for i in tasks}
    heap = [key(i) for i in tasks if indegree[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        i = heapq.heappop(heap)[2]
        order.append(i)
        for j, _ in problem.succs[i]:
            if j not in inside:
                continue
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, key(j))
    return order
