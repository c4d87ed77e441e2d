"""The device network: links, the route of every ordered device pair, transfer costs.

Parallel links between one pair keep the widest. A pair without a direct link uses
the widest path (largest bottleneck bandwidth), and among the widest paths the one
of least total latency; a pair with no path is not linked.

Examples
--------
>>> from schedkit.problem.spec import parse_spec
>>> spec = parse_spec({"devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
...                    "links": [{"src": "a", "dst": "b", "bandwidth": 4, "latency": 1},
...                              {"src": "b", "dst": "c", "bandwidth": 2, "latency": 0.5}],
...                    "tasks": [{"name": "t", "work": 1}]})
>>> net = Network(spec)
>>> net.linked[0][2], 1 / net.inv_bandwidth[0][2], net.latency[0][2]   # a -> b -> c
(True, 2.0, 1.5)
"""

from __future__ import annotations

import heapq
import math

import networkx as nx

from schedkit.problem.spec import ProblemSpec


class Network:
    """Routes between the devices of a problem.

    Attributes
    ----------
    graph : networkx.DiGraph
        One edge per usable direction of a link, with ``bandwidth`` and ``latency``.
    inv_bandwidth, latency : list of list of float
        ``inv_bandwidth[u][v]``: 1 / bandwidth of the route from ``u`` to ``v``;
        ``latency[u][v]``: its latency (0 on the diagonal and for unlinked pairs).
    linked : list of list of bool
        Whether data can move from ``u`` to ``v`` (always on the diagonal).
    """

    def __init__(self, spec: ProblemSpec):
        index = {d.name: k for k, d in enumerate(spec.devices)}
        m = len(spec.devices)
        net = nx.DiGraph()
        net.add_nodes_from(range(m))
        for link in spec.links:
            u, v = index[link.src], index[link.dst]
            pairs = [(u, v), (v, u)] if link.bidirectional else [(u, v)]
            for a, b in pairs:
                # Parallel links between one pair: keep the widest.
                if not net.has_edge(a, b) or net[a][b]["bandwidth"] < link.bandwidth:
                    net.add_edge(a, b, bandwidth=link.bandwidth, latency=link.latency)
        self.graph = net
        inv_bw = [[0.0] * m for _ in range(m)]
        lat = [[0.0] * m for _ in range(m)]
        linked = [[u == v for v in range(m)] for u in range(m)]
        for u in range(m):
            widths = widest_from(net, u)
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


def widest_from(net: nx.DiGraph, source: int) -> dict[int, float]:
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
