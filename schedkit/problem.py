"""The :class:`Problem`: a validated spec, indexed, with the data every method derives.

Tasks and devices are numbered in file order; every table is indexed by those
numbers so that heuristics and model builders loop over plain lists.

Examples
--------
>>> from schedkit.spec import parse_spec
>>> p = Problem(parse_spec({
...     "name": "chain",
...     "devices": [{"name": "gpu"}, {"name": "cpu"}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 1}],
...     "tasks": [{"name": "a", "durations": {"gpu": 1, "cpu": 3}},
...               {"name": "b", "durations": {"gpu": 2}}],
...     "edges": [{"src": "a", "dst": "b", "size": 4}]}))
>>> p.comm_time(4, 1, 0)   # 4 / 2 + 1
3.0
>>> p.allowed[1]           # b runs on the gpu only
(0,)
>>> p.heads, p.tails       # earliest starts and least work after each task
([0.0, 1.0], [2.0, 0.0])
"""

from __future__ import annotations

import heapq
import math
from functools import cached_property
from pathlib import Path

import networkx as nx

from .errors import ProblemError
from .spec import ProblemSpec, load_spec, parse_spec


class Problem:
    """An indexed, read-only view of a :class:`~schedkit.spec.ProblemSpec`.

    Parameters
    ----------
    spec : ProblemSpec
        The validated problem data.

    Attributes
    ----------
    tasks, devices : list of str
        Names, in file order; a task or device is referred to by its position.
    durations : list of dict
        ``durations[i][d]``: time of task ``i`` on device ``d``, for its allowed devices only.
    allowed : list of tuple
        Devices each task may run on (its durations, restricted by ``pin``).
    preds, succs : list of list of (int, float)
        Neighbours of each task with the size of the data on the edge.
    edges : list of (int, int, float)
        ``(src, dst, size)`` for every edge.
    """

    def __init__(self, spec: ProblemSpec):
        self.spec = spec
        self.name = spec.name
        self.devices = [d.name for d in spec.devices]
        self.tasks = [t.name for t in spec.tasks]
        self.device_index = {name: k for k, name in enumerate(self.devices)}
        self.task_index = {name: k for k, name in enumerate(self.tasks)}
        self.device_memory = [math.inf if d.memory is None else d.memory for d in spec.devices]
        self.task_memory = [t.memory for t in spec.tasks]
        self.durations: list[dict[int, float]] = []
        for task in spec.tasks:
            table = {}
            for k, device in enumerate(spec.devices):
                duration = task.duration_on(device)
                if duration is None or (task.pin is not None and device.name not in task.pin):
                    continue
                if task.memory > self.device_memory[k]:
                    continue
                table[k] = duration
            self.durations.append(table)
        self.allowed = [tuple(table) for table in self.durations]
        self.edges = [(self.task_index[e.src], self.task_index[e.dst], spec.edge_size(e))
                      for e in spec.edges]
        self.preds: list[list[tuple[int, float]]] = [[] for _ in self.tasks]
        self.succs: list[list[tuple[int, float]]] = [[] for _ in self.tasks]
        for i, j, size in self.edges:
            self.succs[i].append((j, size))
            self.preds[j].append((i, size))
        self._build_network()
        self._check_reachable_placements()
        self._check_fixed_memory()

    # ------------------------------------------------------------------ constructors
    @classmethod
    def load(cls, path: str | Path) -> Problem:
        """Load a problem file (JSON or YAML).

        Examples
        --------
        >>> Problem.load("examples/tiny.yaml").tasks[:2]
        ['embed', 'attn']
        """
        return cls(load_spec(path))

    @classmethod
    def from_dict(cls, data: dict) -> Problem:
        """Build a problem from Python data in the ``schedkit/v1`` layout."""
        return cls(parse_spec(data))

    def __repr__(self) -> str:
        return (f"Problem({self.name!r}: {len(self.tasks)} tasks, {len(self.edges)} edges, "
                f"{len(self.devices)} devices)")

    # ------------------------------------------------------------------ network
    def _build_network(self) -> None:
        m = len(self.devices)
        net = nx.DiGraph()
        net.add_nodes_from(range(m))
        for link in self.spec.links:
            u, v = self.device_index[link.src], self.device_index[link.dst]
            pairs = [(u, v), (v, u)] if link.bidirectional else [(u, v)]
            for a, b in pairs:
                # Parallel links between one pair: keep the widest.
                if not net.has_edge(a, b) or net[a][b]["bandwidth"] < link.bandwidth:
                    net.add_edge(a, b, bandwidth=link.bandwidth, latency=link.latency)
        self.network = net
        inv_bw = [[0.0] * m for _ in range(m)]
        lat = [[0.0] * m for _ in range(m)]
        linked = [[u == v for v in range(m)] for u in range(m)]
        for u in range(m):
            widths = _widest_from(net, u)
            for v, width in widths.items():
                if v == u:
                    continue
                linked[u][v] = True
                if net.has_edge(u, v):
                    inv_bw[u][v] = 1.0 / net[u][v]["bandwidth"]
                    lat[u][v] = net[u][v]["latency"]
                    continue
                # No direct link: the widest path, and among the widest the least latency.
                wide = nx.subgraph_view(net, filter_edge=lambda a, b, w=width: net[a][b]["bandwidth"] >= w)
                inv_bw[u][v] = 1.0 / width
                lat[u][v] = nx.dijkstra_path_length(wide, u, v, weight="latency")
        self.inv_bandwidth = inv_bw
        self.latency = lat
        self.linked = linked

    def comm_time(self, size: float, u: int, v: int) -> float:
        """Time to move ``size`` data from device ``u`` to device ``v`` (0 on one device).

        Raises :class:`ProblemError` when ``u`` cannot reach ``v``.
        """
        if u == v or size == 0:
            return 0.0
        if not self.linked[u][v]:
            raise ProblemError(f"no link path from {self.devices[u]} to {self.devices[v]}")
        return size * self.inv_bandwidth[u][v] + self.latency[u][v]

    def pair_allowed(self, size: float, u: int, v: int) -> bool:
        """Whether an edge's ends may sit on ``u`` and ``v`` (a path exists, or nothing moves)."""
        return u == v or size == 0 or self.linked[u][v]

    def _check_reachable_placements(self) -> None:
        # A task whose every placement cuts it off from a neighbour makes the problem infeasible.
        for i, j, size in self.edges:
            if size == 0:
                continue
            if not any(self.pair_allowed(size, u, v) for u in self.allowed[i] for v in self.allowed[j]):
                raise ProblemError(
                    f"edge {self.tasks[i]}->{self.tasks[j]}: no devices of the two tasks are connected")

    def _check_fixed_memory(self) -> None:
        for d, cap in enumerate(self.device_memory):
            need = sum(self.task_memory[i] for i, allowed in enumerate(self.allowed) if allowed == (d,))
            if need > cap:
                raise ProblemError(f"device {self.devices[d]}: the tasks that can run only there need "
                                   f"{need:g} of memory, capacity {cap:g}")

    # ------------------------------------------------------------------ graph data
    @cached_property
    def graph(self) -> nx.DiGraph:
        """The task graph on task indices, with ``size`` on every edge."""
        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.tasks)))
        g.add_weighted_edges_from(self.edges, weight="size")
        return g

    @cached_property
    def topological_order(self) -> list[int]:
        """Tasks in a topological order (stable: file order among ready tasks)."""
        return list(nx.lexicographical_topological_sort(self.graph))

    @cached_property
    def descendants(self) -> list[int]:
        """Transitive closure as bit sets: bit ``j`` of ``descendants[i]`` is set when j follows i."""
        desc = [0] * len(self.tasks)
        for i in reversed(self.topological_order):
            bits = 0
            for j, _ in self.succs[i]:
                bits |= desc[j] | (1 << j)
            desc[i] = bits
        return desc

    def ordered(self, i: int, j: int) -> bool:
        """Whether the task graph orders ``i`` and ``j`` (either way)."""
        return bool((self.descendants[i] >> j) & 1 or (self.descendants[j] >> i) & 1)

    @cached_property
    def min_duration(self) -> list[float]:
        """Shortest duration of each task over its allowed devices."""
        return [min(table.values()) for table in self.durations]

    @cached_property
    def heads(self) -> list[float]:
        """Earliest start of each task: longest chain of minimum durations before it."""
        head = [0.0] * len(self.tasks)
        for i in self.topological_order:
            for j, _ in self.succs[i]:
                head[j] = max(head[j], head[i] + self.min_duration[i])
        return head

    @cached_property
    def tails(self) -> list[float]:
        """Least time between a task's end and the makespan: minimum durations after it."""
        tail = [0.0] * len(self.tasks)
        for i in reversed(self.topological_order):
            for j, _ in self.succs[i]:
                tail[i] = max(tail[i], self.min_duration[j] + tail[j])
        return tail

    def device_heads_tails(self, communication: bool = True) -> tuple[list[dict], list[dict]]:
        """Heads and tails of each task *on each allowed device*, transfers included.

        ``head[j][d]``: earliest start of ``j`` when it runs on ``d``; every predecessor
        ``i`` ends on its best device ``u`` and its data travels from ``u`` to ``d``.
        ``tail[i][d]``: least time from the end of ``i`` on ``d`` to the makespan, the
        mirror. Both are at least the device-free :attr:`heads` and :attr:`tails`.

        Examples
        --------
        >>> p = Problem.load("examples/tiny.yaml")
        >>> heads, tails = p.device_heads_tails()
        >>> all(heads[i][d] >= p.heads[i] for i in range(len(p.tasks)) for d in p.allowed[i])
        True
        """
        key = bool(communication)
        cache = self.__dict__.setdefault("_device_heads_tails", {})
        if key in cache:
            return cache[key]

        def move(size, u, v):
            return self.comm_time(size, u, v) if communication else 0.0

        def reachable(size, u, v):
            return not communication or self.pair_allowed(size, u, v)

        head = [{d: self.heads[j] for d in self.allowed[j]} for j in range(len(self.tasks))]
        for j in self.topological_order:
            for i, size in self.preds[j]:
                for d in head[j]:
                    best = min((head[i][u] + self.durations[i][u] + move(size, u, d)
                                for u in self.allowed[i] if reachable(size, u, d)), default=head[j][d])
                    head[j][d] = max(head[j][d], best)
        tail = [{d: self.tails[i] for d in self.allowed[i]} for i in range(len(self.tasks))]
        for i in reversed(self.topological_order):
            for j, size in self.succs[i]:
                for d in tail[i]:
                    best = min((move(size, d, v) + self.durations[j][v] + tail[j][v]
                                for v in self.allowed[j] if reachable(size, d, v)), default=tail[i][d])
                    tail[i][d] = max(tail[i][d], best)
        cache[key] = (head, tail)
        return head, tail

    @cached_property
    def colocate_groups(self) -> dict[str, list[int]]:
        """Collocation groups: group name to its tasks."""
        groups: dict[str, list[int]] = {}
        for k, task in enumerate(self.spec.tasks):
            if task.colocate is not None:
                groups.setdefault(task.colocate, []).append(k)
        return groups


def _widest_from(net: nx.DiGraph, source: int) -> dict[int, float]:
    """Largest bottleneck bandwidth from ``source`` to every reachable device."""
    best = {source: math.inf}
    heap = [(-math.inf, source)]
    done = set()
    while heap:
        neg, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, data in net[u].items():
            width = min(-neg, data["bandwidth"])
            if width > best.get(v, 0.0):
                best[v] = width
                heapq.heappush(heap, (-width, v))
    return best


def as_problem(problem: Problem | ProblemSpec | dict | str | Path) -> Problem:
    """Accept a :class:`Problem`, a spec, Python data or a file path."""
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, ProblemSpec):
        return Problem(problem)
    if isinstance(problem, dict):
        return Problem.from_dict(problem)
    return Problem.load(problem)
