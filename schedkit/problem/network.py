"""The device network: links, channels, the route of every ordered device pair, transfer costs.

The route of an ordered device pair is fixed: the direct link when there is one (of
several direct links: the widest, then the least latency, then the first in the file),
else the widest path (largest bottleneck bandwidth; among the widest, the least total
latency); its bandwidth is the bottleneck, its latency the sum. A pair with no path is
not linked. Each direction of a link is its own *channel*, named ``SRC->DST``, unless
the link gives ``channel: NAME``: links (and both directions of a bidirectional link)
that give one name share one channel. A transfer occupies every channel of its route.

Examples
--------
>>> from schedkit.problem.loading import parse_spec
>>> spec = parse_spec({"devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
...                    "links": [{"src": "a", "dst": "b", "bandwidth": 4, "latency": 1},
...                              {"src": "b", "dst": "c", "bandwidth": 2, "latency": 0.5}],
...                    "tasks": [{"name": "t", "work": 1}]})
>>> net = Network(spec)
>>> net.linked[0][2], 1 / net.inv_bandwidth[0][2], net.latency[0][2]   # a -> b -> c
(True, 2.0, 1.5)
>>> net.route[0][2], net.route[2][1]
(('a->b', 'b->c'), ('c->b',))
"""

from __future__ import annotations

import heapq
import math
from functools import cached_property
from itertools import count
from typing import TYPE_CHECKING, Iterable

from schedkit.errors import ProblemError
from schedkit.machine import ensure_fits
from schedkit.problem.cluster import name_sets, resolved_links
from schedkit.problem.spec import ProblemSpec

#: Bytes per ordered device pair of the route tables (four tables of pointers, and their share
#: of the floats and tuples they point to), for the memory check before they are allocated.
PAIR_BYTES = 48

if TYPE_CHECKING:  # networkx loads on first use: the CP-SAT worker never needs it
    import networkx as nx


class Network:
    """Routes between the devices of a problem.

    Group links (:mod:`schedkit.problem.cluster`) are resolved per ordered device pair into
    the tables; no link object per pair is made, and the graph of links (networkx) is built
    only where some pair lacks a direct link, or when :attr:`graph` is first read.

    Attributes
    ----------
    graph : networkx.DiGraph
        One edge per usable direction of a link, with ``bandwidth``, ``latency`` and ``channel``.
    inv_bandwidth, latency : list of list of float
        ``inv_bandwidth[u][v]``: 1 / bandwidth of the route from ``u`` to ``v``;
        ``latency[u][v]``: its latency (0 on the diagonal and for unlinked pairs).
    linked : list of list of bool
        Whether data can move from ``u`` to ``v`` (always on the diagonal).
    route : list of list of tuple of str
        ``route[u][v]``: the channels a transfer from ``u`` to ``v`` occupies, in order
        (empty on the diagonal and for unlinked pairs).
    channels : list of str
        Every channel, in the order links name them.
    """

    def __init__(self, spec: ProblemSpec):
        self._spec = spec
        names = [d.name for d in spec.devices]
        m = len(names)
        if m * m * PAIR_BYTES > 2**26:  # (smaller tables need no look at the memory free)
            ensure_fits(f"devices: {m:,} devices are {m * m:,} ordered pairs to route", m * m * PAIR_BYTES)
        self._index = {name: k for k, name in enumerate(names)}
        _, self._groups = name_sets(spec.devices)
        channels: dict[str, None] = {}
        # Direct links first: per ordered pair the widest, then the least latency, then the first.
        bw = [[0.0] * m for _ in range(m)]  # 0: no direct link (a bandwidth is positive)
        lat = [[0.0] * m for _ in range(m)]
        route: list[list[tuple[str, ...]]] = [[()] * m for _ in range(m)]
        hop: dict[str, tuple[str]] = {}  # one route tuple per channel, shared by its pairs
        for link, pairs in resolved_links(spec.links, self._index, self._groups):
            width, delay, named = link.bandwidth, link.latency, link.channel
            for a, b in pairs:
                channel = named or f"{names[a]}->{names[b]}"
                channels.setdefault(channel)
                row = bw[a]
                if row[b] == 0.0 or width > row[b] or (width == row[b] and delay < lat[a][b]):
                    row[b] = width
                    lat[a][b] = delay
                    route[a][b] = hop.get(channel) or hop.setdefault(channel, (channel,))
        self.channels = list(channels)
        inverse: dict[float, float] = {}
        inv_bw = [[inverse.get(w) or inverse.setdefault(w, 1.0 / w) if w else 0.0 for w in row] for row in bw]
        linked = [[w > 0.0 or u == v for v, w in enumerate(row)] for u, row in enumerate(bw)]
        self.inv_bandwidth = inv_bw
        self.latency = lat
        self.linked = linked
        self.route = route
        self._routes: dict[tuple[str, ...], tuple[str, ...]] = {}
        for u in range(m):
            if linked[u].count(True) < m:
                self._paths_from(u)
        self._routes.clear()

    def _paths_from(self, u: int) -> None:
        """Fill the row of ``u`` for the devices it reaches without a direct link."""
        adjacency = self._adjacency
        linked, inv_bw, lat, route = self.linked[u], self.inv_bandwidth[u], self.latency[u], self.route[u]
        # No direct link: the widest path, and among the widest the least latency. One search
        # per width serves every device of that width (a switch joins thousands so).
        missing = [v for v, known in enumerate(linked) if not known]
        best = widest_from(adjacency, u, missing)
        widths = [best.get(v, 0.0) for v in missing]  # 0: unreachable
        for width in sorted(set(widths) - {0.0}, reverse=True):
            targets = [v for v, w in zip(missing, widths) if w == width]
            dist, pred = least_latency(adjacency, u, width, targets)
            inverse = 1.0 / width
            routes = {u: ()}  # the channels to each device on the way, one tuple per route
            shared = self._routes
            for v in targets:
                before, channel = pred[v]
                if before not in routes:
                    chain = [before]
                    while pred[chain[-1]][0] not in routes:
                        chain.append(pred[chain[-1]][0])
                    for k in reversed(chain):
                        key = routes[pred[k][0]] + (pred[k][1],)
                        routes[k] = shared.setdefault(key, key)
                key = routes[before] + (channel,)
                route[v] = shared.setdefault(key, key)  # pairs of one route share its tuple
                linked[v] = True
                inv_bw[v] = inverse
                lat[v] = dist[v]

    @cached_property
    def _adjacency(self) -> list[list[tuple[int, float, float, str]]]:
        # The graph's edges as tuples, per device in the graph's order: searched once per device.
        net = self.graph
        return [[(v, d["bandwidth"], d["latency"], d["channel"]) for v, d in net.adj[u].items()] for u in net]

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The direct links as a graph on device indices, edges in the order links first name
        them (which decides among paths of equal latency)."""
        import networkx as nx

        net = nx.DiGraph()
        net.add_nodes_from(range(len(self._index)))
        names = list(self._index)
        for link, pairs in resolved_links(self._spec.links, self._index, self._groups):
            for a, b in pairs:
                # Parallel links between one pair: the widest, then the least latency, then the first.
                if not net.has_edge(a, b) or (link.bandwidth, -link.latency) > \
                        (net[a][b]["bandwidth"], -net[a][b]["latency"]):
                    net.add_edge(a, b, bandwidth=link.bandwidth, latency=link.latency,
                                 channel=link.channel or f"{names[a]}->{names[b]}")
        return net


def widest_from(adjacency: list, source: int, targets: Iterable[int] | None = None) -> dict[int, float]:
    """Largest bottleneck bandwidth from ``source`` to every reachable device, or to the
    devices of ``targets`` (the search stops as soon as theirs are final; others' may not be).

    ``adjacency[u]``: the links out of ``u`` as ``(v, bandwidth, latency, channel)``.

    Examples
    --------
    >>> widest_from([[(1, 4.0, 0.0, "a")], [(2, 2.0, 0.0, "b")], []], 0)
    {0: inf, 1: 4.0, 2: 2.0}
    """
    best = {source: math.inf}
    heap = [(-math.inf, source)]
    done = set()
    wanted = set() if targets is None else set(targets)
    unseen = -1 if targets is None else len(wanted)
    if not unseen:
        return best
    lowest = 0.0  # the least of the targets' widths, once each has one (it only grows)
    while heap:
        neg, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        found = []
        for v, bandwidth, _, _ in adjacency[u]:
            width = bandwidth if bandwidth < -neg else -neg
            if width > best.get(v, 0.0):
                if v in wanted:
                    unseen -= v not in best
                best[v] = width
                found.append((-width, v))
        if not unseen:
            if -neg > lowest:
                lowest = min(map(best.__getitem__, wanted))
            if -neg <= lowest:
                # A path widens only through a device not yet taken, no wider than this
                # one: the targets' widths are final.
                break
        for item in found:
            heapq.heappush(heap, item)
    return best


def least_latency(adjacency: list, source: int, width: float,
                  targets: list[int]) -> tuple[dict[int, float], dict[int, tuple[int, str]]]:
    """Least-latency paths from ``source`` over the links of at least ``width`` to the
    devices of ``targets``: the latencies (final for the targets), and each device's
    ``(previous device, channel)``.

    Dijkstra's search as networkx's ``dijkstra_path`` makes it, so that paths of equal
    latency are chosen alike: devices leave the queue by latency, then in the order they
    entered it, and a device keeps the first path that reached it at its least latency
    (links in the order the file first names them). It stops once no target can get a
    shorter path: a device taken later is no nearer, and latencies are not negative.

    Examples
    --------
    >>> adjacency = [[(1, 4.0, 1.0, "a"), (2, 1.0, 0.0, "x")], [(2, 2.0, 1.0, "b")], []]
    >>> least_latency(adjacency, 0, 2.0, [2])
    ({0: 0, 1: 1.0, 2: 2.0}, {1: (0, 'a'), 2: (1, 'b')})
    """
    seen: dict[int, float] = {source: 0}
    pred: dict[int, tuple[int, str]] = {}
    done = set()
    wanted = set(targets)
    unseen = len(wanted)
    if not unseen:
        return seen, pred
    farthest = math.inf  # the largest of the targets' latencies, once each has one (it only shrinks)
    order = count()
    fringe = [(0, next(order), source)]
    while fringe:
        d, _, v = heapq.heappop(fringe)
        if v in done:
            continue
        done.add(v)
        found = []
        for u, bandwidth, latency, channel in adjacency[v]:
            if bandwidth < width or u in done:
                continue
            far = d + latency
            if u not in seen or far < seen[u]:
                if u in wanted:
                    unseen -= u not in seen
                seen[u] = far
                found.append(u)
                pred[u] = (v, channel)
        if not unseen:
            if d < farthest:
                farthest = max(map(seen.__getitem__, wanted))
            if d >= farthest:
                break  # every device taken later is at least as far as this one
        for u in found:
            heapq.heappush(fringe, (seen[u], next(order), u))
    return seen, pred


class Payload(float):
    """The data an edge carries: its size (the float value) and its own transfer times.

    An edge that gives ``transfer_times`` gets a payload in place of a plain size in
    :attr:`Problem.edges <schedkit.problem.Problem.edges>`, ``preds`` and ``succs``, so
    that the one transfer rule, :meth:`Problem.comm_time
    <schedkit.problem.Problem.comm_time>`, finds the edge's time for a device pair
    wherever a size is passed; arithmetic and comparisons see the size.

    Parameters
    ----------
    size : float
        The edge's size (positive: an edge that moves no data has no transfer times).
    times : dict
        ``{(u, v): time}`` by device index.

    Examples
    --------
    >>> data = Payload(4.0, {(0, 1): 7.5})
    >>> data.times[0, 1], data * 2, data == 4.0
    (7.5, 8.0, True)
    """

    __slots__ = ("times",)

    def __new__(cls, size: float, times: dict[tuple[int, int], float]):
        payload = float.__new__(cls, size)
        payload.times = times
        return payload

    def __reduce__(self):
        return Payload, (float(self), self.times)


def check_finite_transfers(problem) -> None:
    """Raise a :class:`~schedkit.errors.ProblemError` naming the edge when the largest edge over
    the slowest route takes longer than any number (1e300 bytes over a bandwidth of 1e-300):
    no method can time that.

    Examples
    --------
    >>> from schedkit import Problem
    >>> check_finite_transfers(Problem.load("examples/tiny.yaml"))
    """
    if not problem.edges:
        return
    i, j, size = max(problem.edges, key=lambda edge: float(edge[2]))
    worst = max(map(max, problem.inv_bandwidth)), max(map(max, problem.latency))
    if math.isfinite(float(size) * worst[0] + worst[1]):
        return  # (every pair is no slower: no need to look at them one by one)
    n = len(problem.devices)
    for u in range(n):
        for v in range(n):
            if u != v and problem.linked[u][v] and \
                    not math.isfinite(float(size) * problem.inv_bandwidth[u][v] + problem.latency[u][v]):
                raise ProblemError(f"edge {problem.tasks[i]}->{problem.tasks[j]}: its size {float(size):g} from "
                                   f"{problem.devices[u]} to {problem.devices[v]} takes longer than any number "
                                   f"(the transfer time overflows to infinity)")
