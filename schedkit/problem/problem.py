"""The :class:`Problem`: a validated spec, indexed, with the data every method derives.

Tasks and devices are numbered in file order; every table is indexed by those
numbers so that heuristics and model builders loop over plain lists.

Examples
--------
>>> from schedkit.problem.loading import parse_spec
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

import gc
import heapq
import math
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from schedkit.errors import ProblemError, expect
from schedkit.numerics import fits
from schedkit.problem import graph
from schedkit.problem.arrays import ProblemArrays
from schedkit.problem.batches import Batches
from schedkit.problem.durations import Room, TypeRow, TypeTables, WorkRow, per_input
from schedkit.problem.edge_table import EdgeLists, EdgeTable
from schedkit.problem.magnitude import check_magnitudes
from schedkit.problem.network import Network, Payload
from schedkit.problem.placement_checks import check_placements
from schedkit.problem.spec import ProblemSpec
from schedkit.problem.loading import load_spec, parse_spec

if TYPE_CHECKING:  # networkx loads on first use: the CP-SAT worker never needs it
    import networkx as nx


class Problem:
    """An indexed, read-only view of a :class:`~schedkit.problem.spec.ProblemSpec`.

    Parameters
    ----------
    spec : ProblemSpec
        The validated problem data.

    Attributes
    ----------
    tasks, devices : list of str
        Names, in file order; a task or device is referred to by its position.
    durations : list of mapping
        ``durations[i][d]``: time of task ``i`` on device ``d``, for its allowed devices only:
        a dict, or a read-only mapping of :mod:`~schedkit.problem.durations`: a ``TypeRow`` (a task
        keyed by device types: a number per type), a ``WorkRow`` (by work, on a large problem).
    allowed : list of tuple
        Devices each task may run on (its durations, restricted by ``pin``).
    task_memory, weight_memory, activation_memory : list of float
        Per task: static ``memory``, resident ``weight_memory`` and ``activation_memory``
        (0 where the file gives none; an activation may be negative, see ``memory_timeline``).
    resident_memory : list of float
        Per task, what a memory timeline holds on its device all along: weights plus
        static memory.
    preds, succs : list of list of (int, float)
        Neighbours of each task with the size of the data on the edge.
    edges : list of (int, int, float)
        ``(src, dst, size)`` for every edge; the size is a
        :class:`~schedkit.problem.network.Payload` where the edge gives ``transfer_times``.
    route : list of list of tuple of str
        ``route[u][v]``: the channels a transfer from ``u`` to ``v`` occupies
        (:class:`~schedkit.problem.network.Network`).
    channels : list of str
        Every channel of the network.
    """

    # Built on first use: from a bulk-loaded EdgeTable they are 420 MB at 1.8 million edges
    # that HEFT, the bounds and the validator never read (they read ``arrays``).
    edges, preds, succs = EdgeLists(), EdgeLists(), EdgeLists()

    def __init__(self, spec: ProblemSpec):
        self.spec = expect(spec, ProblemSpec, "a ProblemSpec (or Problem.load(path), Problem.from_dict(data))",
                           ProblemError)
        self.name = spec.name
        self.devices = [d.name for d in spec.devices]
        self.tasks = [t.name for t in spec.tasks]
        self.device_index = {name: k for k, name in enumerate(self.devices)}
        self.task_index = {name: k for k, name in enumerate(self.tasks)}
        self.device_memory = [math.inf if d.memory is None else d.memory for d in spec.devices]
        self.task_memory = [t.memory for t in spec.tasks]
        self.weight_memory = [t.weight_memory or 0.0 for t in spec.tasks]
        self.activation_memory = [t.activation_memory or 0.0 for t in spec.tasks]
        # what a memory timeline holds on the task's device all along: weights and static memory
        self.resident_memory = [w + m for w, m in zip(self.weight_memory, self.task_memory)]
        self.durations: list[dict[int, float]] = []
        # The devices each memory size fits, once per size (most tasks share a few); a task's
        # durations on them by map and zip, since this loop meets tasks x devices pairs.
        room_for: dict[float, Room] = {}
        # No table of a task keyed by device types (TypeRow), nor on a large problem of one by work (WorkRow).
        typed = TypeTables(spec.devices, self.device_index, len(spec.tasks)) if spec.workload is None else None
        for task in spec.tasks:
            room = room_for.get(task.memory)
            if room is None:
                room = room_for[task.memory] = Room(spec.devices, [k for k, cap in enumerate(self.device_memory)
                                                                   if fits(task.memory, cap)])
            row = typed.row(task, room) if typed is not None else None
            if row is not None:
                self.durations.append(row)
                continue
            if task.pin is not None:
                room = Room(spec.devices, [k for k in room.indices if self.devices[k] in task.pin])
            indices, devices = room.indices, room.devices
            table = dict(zip(indices, room.durations(task, self.device_index)))
            if None in table.values():  # devices its durations do not name
                if spec.workload is not None:  # (or whose batches all hold several inputs)
                    table.update(per_input(task, devices, indices, table))
                table = {k: duration for k, duration in table.items() if duration is not None}
            self.durations.append(table)
        self.allowed = [table.kinds.devices if table.__class__ is TypeRow else
                        table.room.indices if table.__class__ is WorkRow else tuple(table) for table in self.durations]
        if not isinstance(spec.edges, EdgeTable):
            self.edges  # noqa: B018 - a list of EdgeSpec: its sizes and transfer times checked on load
        self._build_network()
        check_placements(self)
        if spec.workload is not None:
            self.batches  # noqa: B018 - sizes that cannot add up to L are bad input, named on load

    # ------------------------------------------------------------------ constructors
    @classmethod
    def load(cls, path: str | Path) -> Problem:
        """Load a problem file (JSON or YAML).

        Examples
        --------
        >>> Problem.load("examples/tiny.yaml").tasks[:2]
        ['embed', 'attn']
        """
        # Loading makes hundreds of thousands of objects without cycles on large graphs: the
        # cycle collector would find nothing and cost about a tenth of the load.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return cls(load_spec(path))
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def from_dict(cls, data: dict) -> Problem:
        """Build a problem from Python data in the ``schedkit/v1`` layout."""
        return cls(parse_spec(data))

    def __repr__(self) -> str:
        return (f"Problem({self.name!r}: {len(self.tasks)} tasks, {len(self.spec.edges)} edges, "
                f"{len(self.devices)} devices)")

    # ------------------------------------------------------------------ network
    def _payload(self, edge) -> float:
        """An edge's size, or its :class:`~schedkit.problem.network.Payload` when it gives
        its own transfer times."""
        size = self.spec.edge_size(edge)
        if not edge.transfer_times:
            return size
        index = self.device_index
        return Payload(size, {(index[a], index[b]): t for (a, b), t in edge.pairs().items()})

    def _build_network(self) -> None:
        network = Network(self.spec)
        self._network = network
        self.inv_bandwidth = network.inv_bandwidth
        self.latency = network.latency
        self.linked = network.linked
        self.route = network.route
        self.channels = network.channels
        # Only an edge of a list of EdgeSpec may give its own transfer times (a Payload).
        for i, j, size in () if isinstance(self.spec.edges, EdgeTable) else self.edges:
            for u, v in getattr(size, "times", ()):
                if not self.linked[u][v]:
                    raise ProblemError(f"edge {self.tasks[i]}->{self.tasks[j]}: transfer time "
                                       f"'{self.devices[u]}->{self.devices[v]}': no link path "
                                       f"from {self.devices[u]} to {self.devices[v]}")
        check_magnitudes(self)

    @cached_property
    def network(self) -> nx.DiGraph:
        """The links as a graph on device indices (networkx), built on first use."""
        return self._network.graph

    def comm_time(self, size: float, u: int, v: int) -> float:
        """Time to move an edge's data, ``size``, from device ``u`` to device ``v`` (0 on one device).

        ``size`` is the edge's entry of :attr:`edges` (a
        :class:`~schedkit.problem.network.Payload` where the edge gives its own transfer
        times, which win for the pairs they list); else ``size / bandwidth + latency`` of
        the route. Raises :class:`ProblemError` when ``u`` cannot reach ``v``.
        """
        if u == v or size == 0:
            return 0.0
        if not self.linked[u][v]:
            raise ProblemError(f"no link path from {self.devices[u]} to {self.devices[v]}")
        if size.__class__ is Payload:
            own = size.times.get((u, v))
            if own is not None:
                return own
        return size * self.inv_bandwidth[u][v] + self.latency[u][v]

    def moves(self, size: float, u: int, v: int) -> bool:
        """Whether an edge's data, ``size``, makes a transfer from ``u`` to ``v``: the
        devices differ and the transfer takes time (a zero-time edge never congests).

        Examples
        --------
        >>> p = Problem.load("examples/tiny.yaml")
        >>> p.moves(4e6, 0, 1), p.moves(4e6, 1, 1), p.moves(0.0, 0, 1)
        (True, False, False)
        """
        return u != v and size != 0 and self.linked[u][v] and self.comm_time(size, u, v) > 0

    def occupies(self, u: int, v: int, resource: str) -> tuple[str, ...]:
        """The resources a transfer from device ``u`` to ``v`` holds for its whole duration.

        ``resource`` is a ``congestion`` block's: ``channel`` (every channel of the route,
        by name, once), ``port`` (the send port of ``u`` and the receive port of ``v``, named
        ``U:send`` and ``V:receive``: ports are at a transfer's two ends only) or ``both``.

        Examples
        --------
        >>> p = Problem.load("examples/tiny.yaml")
        >>> p.occupies(0, 1, "both")
        ('gpu0->cpu', 'gpu0:send', 'cpu:receive')
        """
        held: tuple[str, ...] = ()
        if resource in ("channel", "both"):
            held += tuple(dict.fromkeys(self.route[u][v]))  # a route may cross a shared channel twice
        if resource in ("port", "both"):
            held += (f"{self.devices[u]}:send", f"{self.devices[v]}:receive")
        return held

    def pair_allowed(self, size: float, u: int, v: int) -> bool:
        """Whether an edge's ends may sit on ``u`` and ``v`` (a path exists, or nothing moves)."""
        return u == v or size == 0 or self.linked[u][v]

    # ------------------------------------------------------------------ graph data
    @cached_property
    def graph(self) -> nx.DiGraph:
        """The task graph on task indices, with ``size`` on every edge."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.tasks)))
        g.add_weighted_edges_from(self.edges, weight="size")
        return g

    @cached_property
    def topological_order(self) -> list[int]:
        """Tasks in a topological order (stable: file order among ready tasks).

        The lexicographically smallest order, as ``networkx.lexicographical_topological_sort``
        of :attr:`graph` gives it, without building the graph.

        Examples
        --------
        >>> import networkx as nx
        >>> p = Problem.load("examples/topcuoglu2002.json")
        >>> p.topological_order == list(nx.lexicographical_topological_sort(p.graph))
        True
        """
        indegree = [len(inputs) for inputs in self.preds]
        ready = [i for i, count in enumerate(indegree) if count == 0]  # sorted: a heap
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for j, _ in self.succs[i]:
                indegree[j] -= 1
                if indegree[j] == 0:
                    heapq.heappush(ready, j)
        return order

    @cached_property
    def descendants(self) -> list[int]:
        """Transitive closure as bit sets: bit ``j`` of ``descendants[i]`` is set when j follows i."""
        return graph.descendants(self)

    @cached_property
    def ancestors(self) -> list[int]:
        """The reverse closure as bit sets: bit ``j`` of ``ancestors[i]`` is set when j precedes i."""
        return graph.ancestors(self)

    def ordered(self, i: int, j: int) -> bool:
        """Whether the task graph orders ``i`` and ``j`` (either way)."""
        return bool((self.descendants[i] >> j) & 1 or (self.descendants[j] >> i) & 1)

    @cached_property
    def min_duration(self) -> list[float]:
        """Shortest duration of each task over its allowed devices."""
        return [table.least() if table.__class__ in (TypeRow, WorkRow) else min(table.values())
                for table in self.durations]

    @cached_property
    def heads(self) -> list[float]:
        """Earliest start of each task: longest chain of minimum durations before it."""
        return graph.heads(self)

    @cached_property
    def tails(self) -> list[float]:
        """Least time between a task's end and the makespan: minimum durations after it."""
        return graph.tails(self)

    def device_heads_tails(self, communication: bool = True) -> tuple[list[dict], list[dict]]:
        """Heads and tails of each task *on each allowed device*, transfers included (cached).

        See :func:`schedkit.problem.graph.device_heads_tails`.

        Examples
        --------
        >>> p = Problem.load("examples/tiny.yaml")
        >>> heads, tails = p.device_heads_tails()
        >>> all(heads[i][d] >= p.heads[i] for i in range(len(p.tasks)) for d in p.allowed[i])
        True
        """
        key = bool(communication)
        cache = self.__dict__.setdefault("_device_heads_tails", {})
        if key not in cache:
            cache[key] = graph.device_heads_tails(self, key)
        return cache[key]

    @cached_property
    def arrays(self) -> ProblemArrays:
        """The graph, network and durations as numpy arrays
        (:class:`~schedkit.problem.arrays.ProblemArrays`), built on first use."""
        return ProblemArrays(self)

    @cached_property
    def batches(self) -> Batches:
        """Batch sizes and times of every task (:class:`~schedkit.problem.batches.Batches`)."""
        return Batches(self)

    @property
    def inputs(self) -> int:
        """L, the inputs the workload asks for (1 without a workload)."""
        return self.spec.workload.inputs if self.spec.workload is not None else 1

    @cached_property
    def colocate_groups(self) -> dict[str, list[int]]:
        """Collocation groups: group name to its tasks."""
        groups: dict[str, list[int]] = {}
        for k, task in enumerate(self.spec.tasks):
            if task.colocate is not None:
                groups.setdefault(task.colocate, []).append(k)
        return groups


def as_problem(problem: Problem | ProblemSpec | dict | str | Path) -> Problem:
    """Accept a :class:`Problem`, a spec, Python data or a file path."""
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, ProblemSpec):
        return Problem(problem)
    if isinstance(problem, dict):
        return Problem.from_dict(problem)
    expect(problem, (str, Path), "a Problem, a ProblemSpec, a dict or a file path", ProblemError)
    return Problem.load(problem)
