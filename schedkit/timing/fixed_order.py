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
from schedkit.timing.resources import arrival


def fixed_order_times(problem: Problem, device_of: Sequence[int],
                      device_orders: Sequence[Sequence[int]]) -> list[float]:
    """Earliest start times given each task's device and the task order on every device.

    Raises :class:`~schedkit.errors.ScheduleError` when the device orders contradict the
    task graph (a cycle).
    """
    n = len(problem.tasks)
    after: list[list[int]] = [[] for _ in range(n)]
    indegree = [len(problem.preds[i]) for i in range(n)]
    for i in range(n):
        after[i] = [j for j, _ in problem.succs[i]]
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
        t = device_free[d]
        for p, size in problem.preds[i]:
            t = max(t, arrival(problem, end[p], size, device_of[p], d))
        start[i] = t
        end[i] = t + problem.durations[i][d]
        device_free[d] = end[i]
        done += 1
        for j in after[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                stack.append(j)
    if done < n:
        raise ScheduleError("the device orders contradict the task graph")
    return start


def device_orders(problem, device_of, starts) -> list[list[int]]:
    """Task order on every device from solver start times, never against the task graph.

    Sorting by start alone can put a zero-length task after its successor (equal
    starts, or starts within the solver's tolerance). Tasks are instead taken in one
    topological order that always picks the ready task with the earliest start and,
    among equal starts, the earliest end: a zero-length task the solver put at the
    start of a longer one comes first, as in the solver's schedule. Times are compared
    on a grid of the solver's tolerance (a zero-length task at 1e-9 still starts "at 0").
    """
    grid = SOLVER_TOL * max([1.0] + [abs(s) for s in starts])

    def key(i):
        start = starts[i]
        return (round(start / grid), round((start + problem.durations[i][device_of[i]]) / grid), i)

    indegree = [len(problem.preds[i]) for i in range(len(problem.tasks))]
    heap = [key(i) for i in range(len(problem.tasks)) if indegree[i] == 0]
    heapq.heapify(heap)
    orders: list[list[int]] = [[] for _ in problem.devices]
    while heap:
        i = heapq.heappop(heap)[2]
        orders[device_of[i]].append(i)
        for j, _ in problem.succs[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, key(j))
    return orders
