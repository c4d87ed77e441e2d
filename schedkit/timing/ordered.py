"""Timing device strings fast: a fixed task order, each task on its given device.

The search heuristics (annealing, evolution) time thousands of device strings;
:class:`OrderedTiming` is a precomputed copy of
:func:`~schedkit.timing.list_schedule.list_schedule` with a fixed mapping and a fixed
priority, proven equal to it float for float by a hypothesis test.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import list_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> order = p.topological_order
>>> priority = [float(len(order) - order.index(i)) for i in range(len(order))]
>>> device_of = [0, 0, 0, 0, 0, 1]
>>> _, start = list_schedule(p, priority, device_of=device_of)
>>> timing = OrderedTiming(p, order)
>>> timing(device_of) == max(s + p.durations[i][d] for i, (d, s) in enumerate(zip(device_of, start)))
True
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections import deque
from typing import Sequence

from schedkit.numerics import GAP_SLACK
from schedkit.problem import Problem
from schedkit.timing.list_schedule import list_schedule
from schedkit.timing.rules import TimingRules
from schedkit.timing.transfers import Transfers

#: The most transfer-time floats :class:`OrderedTiming` tables (distinct sizes x devices^2).
_TABLED_FLOATS = 1 << 20


def bfs_order(problem: Problem) -> list[int]:
    """Breadth-first topological order (Kahn's algorithm with a first-in first-out queue).

    The sources come first, in file order; a task joins the queue when its last
    predecessor leaves it, successors in edge order. This is the order in which
    DiviML's search baselines time a device string.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> [p.tasks[i] for i in bfs_order(p)]
    ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n9', 'n8', 'n10']
    """
    n = len(problem.tasks)
    indegree = [len(problem.preds[i]) for i in range(n)]
    queue = deque(i for i in range(n) if indegree[i] == 0)
    order = []
    while queue:
        i = queue.popleft()
        order.append(i)
        for j, _ in problem.succs[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                queue.append(j)
    return order


def priority_order(problem: Problem, priority: Sequence[float]) -> list[int]:
    """The order in which :func:`~schedkit.timing.list_schedule` takes the tasks under ``priority``.

    Ready tasks by decreasing priority, ties to the lower index. With every device fixed
    (and no memory levels) the order does not depend on the devices, so
    :class:`OrderedTiming` of this order times any mapping exactly as ``list_schedule``
    with that ``priority`` does.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.problem.graph import upward_rank
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> [p.tasks[i] for i in priority_order(p, upward_rank(p))]
    ['n1', 'n4', 'n3', 'n2', 'n5', 'n6', 'n9', 'n7', 'n8', 'n10']
    """
    n = len(problem.tasks)
    indegree = [len(problem.preds[i]) for i in range(n)]
    heap = [(-priority[i], i) for i in range(n) if indegree[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(i)
        for j, _ in problem.succs[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                heapq.heappush(heap, (-priority[j], j))
    return order


class OrderedTiming:
    """Times device strings fast: tasks in a fixed topological order, each on its given device.

    Calling it with a device string returns the makespan of the schedule that
    :func:`~schedkit.timing.list_schedule` builds with ``device_of`` fixed and the
    priority :func:`order_priority` of ``order``: each task starts as early as its
    predecessors' data arrives and its device is free (in the first idle gap long
    enough when ``insertion``, else after the device's last task). The results are
    identical, float for float; the placement is not checked (memory, collocation,
    links): that is the caller's job (see :class:`~schedkit.problem.space.PlacementSpace`).

    Everything that does not depend on the string is computed once: per task its
    durations by device and, per incoming edge, a device-by-device table of transfer
    times (shared between edges of equal size), unless the edges have too many distinct
    sizes for tables: then an edge's time is computed per call, as ``comm_time`` does.

    Incremental timing: a string that differs from a *kept* one (see :meth:`keep`) only
    at positions ``first`` or later of the order has the same times before ``first``;
    ``timing(device_of, first)`` reuses them and times the rest.

    Parameters
    ----------
    problem : Problem
    order : sequence of int, optional
        A topological order of all tasks; default :func:`bfs_order`.
    insertion : bool
        Let a task fill an idle gap between tasks already on its device.
    rules : TimingRules, optional
        A formulation's timing rules. When they congest transfers, transfers wait for their
        channels or ports (:class:`~schedkit.timing.transfers.Transfers`), and every string
        is timed from the start by :func:`~schedkit.timing.list_schedule` itself (``first``
        is ignored: a transfer booked late may take a slot before ``first``); so is every
        string when tasks hold resources (``rules.resources``), which these loops do not know.

    Attributes
    ----------
    position : list of int
        Each task's position in the order.
    start, end : list of float
        Times of the string timed last.
    transfers : Transfers or None
        When the rules congest transfers or hold resources: the shared timelines of the string
        timed last, whose ``booked`` times a schedule of it carries (else ``None``).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> timing = OrderedTiming(p)
    >>> heft = [2, 0, 2, 1, 2, 1, 2, 0, 1, 1]   # HEFT's mapping, timed in BFS order
    >>> timing(heft)
    80.0
    >>> timing.keep()
    >>> other = heft[:9] + [0]                   # n10 (last in the order) moves to p1
    >>> timing(other, first=timing.position[9]) == OrderedTiming(p)(other)
    True
    """

    def __init__(self, problem: Problem, order: Sequence[int] | None = None, insertion: bool = True,
                 rules: TimingRules | None = None):
        p = problem
        self.problem = problem
        self.rules = rules or TimingRules()
        self.transfers: Transfers | None = None
        self._priority: list[float] | None = None   # the order as a list-scheduling priority
        m = len(p.devices)
        n = len(p.tasks)
        self.order = list(bfs_order(p) if order is None else order)
        if sorted(self.order) != list(range(n)):
            raise ValueError("order must list every task once")
        self.position = [0] * n
        for k, i in enumerate(self.order):
            self.position[i] = k
        self.insertion = insertion
        # Per task its inputs. Few distinct sizes: each input carries a table of its transfer
        # times, table[d][u] from u into d, shared by equal sizes. Many (random sizes: one
        # table per edge would be edges x m x m floats): each input carries its size, and the
        # time is size / bandwidth + latency as comm_time makes it, per call.
        sizes = {size if size.__class__ is float else id(size) for _, _, size in p.edges}
        self._tabled = len(sizes) * m * m <= _TABLED_FLOATS
        columns: dict[float | int, list[list[float]]] = {}
        plan = []
        for i in self.order:
            preds = []
            for q, size in p.preds[i]:
                if self.position[q] > self.position[i]:
                    raise ValueError("order must be a topological order")
                if not self._tabled:
                    preds.append((q, float(size), getattr(size, "times", None)))
                    continue
                # An edge with its own transfer times (a Payload) has a table of its own.
                key = size if size.__class__ is float else id(size)
                if key not in columns:
                    columns[key] = [[p.comm_time(size, u, d) if p.linked[u][d] or size == 0
                                     else math.inf for u in range(m)] for d in range(m)]
                preds.append((q, columns[key]))
            durations = [p.durations[i].get(d, math.inf) for d in range(m)]
            plan.append((i, durations, tuple(preds)))
        # Into each device d, from each device u: the route's 1 / bandwidth, latency, link.
        self._into = [([p.inv_bandwidth[u][d] for u in range(m)], [p.latency[u][d] for u in range(m)],
                       [p.linked[u][d] for u in range(m)]) for d in range(m)]
        self._plan = tuple(plan)
        self._m = m
        self.start = [0.0] * n
        self.end = [0.0] * n
        # The last string timed ("pending") and the kept one: per device its tasks, starts
        # and ends sorted by start ("lanes"), and the running makespan along the order.
        self._pending = None
        self._kept = None

    def keep(self) -> None:
        """Keep the string timed last as the base of later incremental timings."""
        self._kept = self._pending

    def __call__(self, device_of: Sequence[int], first: int = 0) -> float:
        """The makespan of ``device_of``, reusing the kept times before position ``first``."""
        if self.rules.shared:
            return self._shared(device_of)
        m = self._m
        if first == 0:
            start = [0.0] * len(self.order)
            end = [0.0] * len(self.order)
            lane_tasks: list[list[int]] = [[] for _ in range(m)]
            lane_starts: list[list[float]] = [[] for _ in range(m)]
            lane_ends: list[list[float]] = [[] for _ in range(m)]
            running: list[float] = []
            makespan = 0.0
        else:
            if self._kept is None:
                raise ValueError("incremental timing needs a kept string (call keep())")
            k_start, k_end, k_tasks, _, _, k_running = self._kept
            start = list(k_start)
            end = list(k_end)
            position = self.position
            lane_tasks = [[i for i in tasks if position[i] < first] for tasks in k_tasks]
            lane_starts = [[start[i] for i in tasks] for tasks in lane_tasks]
            lane_ends = [[end[i] for i in tasks] for tasks in lane_tasks]
            running = k_running[:first]
            makespan = running[-1]
        insertion = self.insertion
        tabled, into = self._tabled, self._into
        for i, durations, preds in self._plan[first:]:
            d = device_of[i]
            ready = 0.0
            if tabled:
                for q, table in preds:
                    arrival = end[q] + table[d][device_of[q]]
                    if arrival > ready:
                        ready = arrival
            else:
                inv, lat, linked = into[d]
                for q, size, own in preds:
                    u = device_of[q]
                    # comm_time, step by step (inf where no route: the caller's placement check).
                    if u == d or size == 0:
                        arrival = end[q]
                    elif not linked[u]:
                        arrival = math.inf
                    elif own is not None and (u, d) in own:
                        arrival = end[q] + own[u, d]
                    else:
                        arrival = end[q] + (size * inv[u] + lat[u])
                    if arrival > ready:
                        ready = arrival
            length = durations[d]
            s_d = lane_starts[d]
            e_d = lane_ends[d]
            if not s_d or ready >= e_d[-1]:
                # Past the device's last task: the common case, the same in both modes.
                t = ready
                s_d.append(t)
                e_d.append(t + length)
                lane_tasks[d].append(i)
            elif not insertion:
                t = e_d[-1]
                s_d.append(t)
                e_d.append(t + length)
                lane_tasks[d].append(i)
            else:
                # First gap long enough (the same steps as the simulator's timeline).
                k = bisect_right(s_d, ready)
                t = ready if k == 0 or ready > e_d[k - 1] else e_d[k - 1]
                count = len(s_d)
                while k < count:
                    if t + length <= s_d[k] + GAP_SLACK:
                        break
                    if e_d[k] > t:
                        t = e_d[k]
                    k += 1
                finish = t + length
                # As the simulator: an empty interval goes before those starting with it.
                k = bisect_left(s_d, t) if finish <= t else bisect_right(s_d, t)
                s_d.insert(k, t)
                e_d.insert(k, finish)
                lane_tasks[d].insert(k, i)
            finish = t + length
            start[i] = t
            end[i] = finish
            if finish > makespan:
                makespan = finish
            running.append(makespan)
        self.start = start
        self.end = end
        self._pending = (start, end, lane_tasks, lane_starts, lane_ends, running)
        return makespan

    def _shared(self, device_of: Sequence[int]) -> float:
        """The makespan of ``device_of`` with transfers on channel and port timelines and
        holders on the units of their resources."""
        if self._priority is None:
            n = len(self.order)
            self._priority = [float(n - k) for k in self.position]
        self.transfers = self.rules.transfers(self.problem)
        _, start = list_schedule(self.problem, self._priority, device_of=device_of, insertion=self.insertion,
                                 transfers=self.transfers)
        durations = self.problem.durations
        self.start = start
        self.end = [t + durations[i][device_of[i]] for i, t in enumerate(start)]
        return max(self.end)
