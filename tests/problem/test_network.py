"""The network's routes with group links are those of the per-device file they stand for, as the
network computed them before group links existed (hypothesis; issue 29)."""

import heapq
import math

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit.problem.cluster import expanded
from schedkit.problem.network import Network
from schedkit.problem.loading import parse_spec


def widest(net, source):
    """Largest bottleneck bandwidth from ``source`` (the search as it was before group links)."""
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


def reference(spec):
    """The network as it was computed from per-device links only (the rule before groups)."""
    index = {d.name: k for k, d in enumerate(spec.devices)}
    names = [d.name for d in spec.devices]
    m = len(names)
    net = nx.DiGraph()
    net.add_nodes_from(range(m))
    channels = {}
    for link in spec.links:
        u, v = index[link.src], index[link.dst]
        for a, b in [(u, v), (v, u)] if link.bidirectional else [(u, v)]:
            channel = link.channel or f"{names[a]}->{names[b]}"
            channels.setdefault(channel)
            if not net.has_edge(a, b) or (link.bandwidth, -link.latency) > \
                    (net[a][b]["bandwidth"], -net[a][b]["latency"]):
                net.add_edge(a, b, bandwidth=link.bandwidth, latency=link.latency, channel=channel)
    route = [[() for _ in range(m)] for _ in range(m)]
    inv_bw = [[0.0] * m for _ in range(m)]
    lat = [[0.0] * m for _ in range(m)]
    linked = [[u == v for v in range(m)] for u in range(m)]
    for u in range(m):
        for v, width in widest(net, u).items():
            if v == u:
                continue
            linked[u][v] = True
            if net.has_edge(u, v):
                inv_bw[u][v], lat[u][v], route[u][v] = 1.0 / net[u][v]["bandwidth"], net[u][v]["latency"], \
                    (net[u][v]["channel"],)
                continue
            wide = nx.subgraph_view(net, filter_edge=lambda a, b, w=width: net[a][b]["bandwidth"] >= w)
            inv_bw[u][v] = 1.0 / width
            path = nx.dijkstra_path(wide, u, v, weight="latency")
            lat[u][v] = sum(net[a][b]["latency"] for a, b in zip(path, path[1:]))
            route[u][v] = tuple(net[a][b]["channel"] for a, b in zip(path, path[1:]))
    return {"inv_bandwidth": inv_bw, "latency": lat, "linked": linked, "route": route, "channels": list(channels)}


@st.composite
def clusters(draw):
    m = draw(st.integers(2, 7))
    groups = [draw(st.sampled_from([None, "s0", "s1", "s2"])) for _ in range(m)]
    devices = [{"name": f"d{k}", **({"group": g} if g else {})} for k, g in enumerate(groups)]
    ends = [d["name"] for d in devices] + sorted({g for g in groups if g})
    links = []
    for _ in range(draw(st.integers(0, 8))):
        src, dst = draw(st.sampled_from(ends)), draw(st.sampled_from(ends))
        if src == dst and src.startswith("d"):
            continue
        link = {"src": src, "dst": dst, "bandwidth": draw(st.sampled_from([1.0, 2.0, 5.0])),
                "latency": draw(st.sampled_from([0.0, 0.5, 1.0]))}
        if draw(st.booleans()):
            link["bidirectional"] = False
        channel = draw(st.sampled_from([None, None, "x", "y"]))
        if channel:
            link["channel"] = channel
        links.append(link)
    return {"devices": devices, "links": links, "tasks": [{"name": "t", "work": 1}]}


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_group_links_route_as_their_expansion_did_before_groups(data):
    mine = Network(parse_spec(data))
    theirs = reference(parse_spec(expanded(data)))
    for table, value in theirs.items():
        assert getattr(mine, table) == value, table


def test_a_path_is_found_through_a_group_link():
    data = {"devices": [{"name": "a"}, {"name": "b", "group": "s"}, {"name": "c", "group": "s"}],
            "links": [{"src": "a", "dst": "b", "bandwidth": 4, "latency": 1},
                      {"src": "s", "dst": "s", "bandwidth": 2, "latency": 0.5}],
            "tasks": [{"name": "t", "work": 1}]}
    net = Network(parse_spec(data))
    assert net.route[0][2] == ("a->b", "b->c") and net.latency[0][2] == 1.5
    assert math.isclose(1 / net.inv_bandwidth[0][2], 2.0)


@st.composite
def typed(draw):
    m = draw(st.integers(1, 6))
    devices = [{"name": f"d{k}", **({"type": t} if (t := draw(st.sampled_from([None, "ta", "tb"]))) else {})}
               for k in range(m)]
    keys = [d["name"] for d in devices] + sorted({d["type"] for d in devices if "type" in d})
    tasks = []
    for k in range(draw(st.integers(1, 4))):
        chosen = draw(st.lists(st.sampled_from(keys), min_size=1, unique=True))
        tasks.append({"name": f"t{k}", "durations": {key: draw(st.sampled_from([1.0, 2.0, 3.0])) for key in chosen}})
    return {"devices": devices, "tasks": tasks}


@settings(max_examples=200, deadline=None)
@given(typed())
def test_durations_by_type_are_those_of_their_expansion(data):
    from schedkit import Problem

    mine = Problem.from_dict(data)
    theirs = Problem.from_dict(expanded(data))
    assert mine.durations == theirs.durations and mine.allowed == theirs.allowed
    for i, task in enumerate(data["tasks"]):
        for d, device in enumerate(data["devices"]):
            own, kind = task["durations"].get(device["name"]), task["durations"].get(device.get("type"))
            assert mine.durations[i].get(d) == (own if own is not None else kind)
