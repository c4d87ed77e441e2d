"""Randomly wired neural networks (RWNNs) on DiviML's kind of platform, as ``schedkit/v1`` data.

DiviML (Ghannane & Abdelfattah, 2023) evaluates its splitting heuristics on randomly wired
networks after Xie et al. (2019): a chain of **modules**, each a random graph drawn by
one of three generators, joined by 1 to 4 **channels**. This generator rebuilds that
family; where the paper leaves a choice open, the choice made here is stated.

Modules
    Each module is an undirected random graph of ``nodes`` nodes drawn by
    Erdos-Renyi (each pair with probability ``edge_prob``), Watts-Strogatz (a ring where
    each node meets its ``neighbours`` nearest nodes, each edge rewired with probability
    ``rewire``) or Barabasi-Albert (each new node attaches to ``attach`` existing nodes,
    chosen in proportion to their degree). ``graph="mixed"`` cycles ER, WS, BA over the
    modules. Edges point from the lower to the higher node index (Xie et al.), so each
    module is acyclic.
Channels
    Module ``t`` has ``channels`` input nodes and ``channels`` output nodes (aggregation
    nodes, cheap to run); channel ``c`` is the edge from output node ``c`` of module ``t``
    to input node ``c`` of module ``t + 1``. With one channel, modules are joined by a
    bridge: DiviML's MILP-SPLIT case.
Dependency (``sdep`` / ``wdep``)
    How the channels depend on each other inside a module. ``sdep`` (strong): every input
    node feeds every source of the module's graph and every sink feeds every output node,
    so each output channel depends on every input channel. ``wdep`` (weak): the module's
    nodes are dealt round-robin into one lane per channel, an edge is kept only from a
    lane to the same or a later lane, input ``c`` feeds the sources of lane ``c`` and output
    ``c`` reads the sinks of lane ``c``: output ``c`` depends on inputs ``1..c`` only.
Platform (``platform="diviml"``)
    A CPU and two different GPUs, as in DiviML: ``gpu0`` (the fast one), ``gpu1`` (1.3-1.7x
    slower per operation), ``cpu`` (6-12x slower than ``gpu0``), every pair linked over
    PCIe (12 GB/s, 10 us). A node's time on ``gpu0`` is uniform in 0.5-2 ms, its output
    1-5 MB (0.08-0.4 ms over PCIe); aggregation nodes take a fifth of that. Times are in
    milliseconds, sizes in bytes, bandwidths in bytes per millisecond.

The same arguments give the same data on every platform (:class:`random.Random`; no
library generator whose algorithm may change between versions); numbers are rounded to
4 significant digits.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict(rwnn(modules=3, nodes=6, channels=2, dependency="wdep", seed=1))
>>> p
Problem('rwnn-3x6-c2-wdep-mixed-1': 30 tasks, 41 edges, 3 devices)
>>> p.devices
['gpu0', 'gpu1', 'cpu']
"""

from __future__ import annotations

import random
from typing import Any

from schedkit.errors import ProblemError

__all__ = ["rwnn", "GRAPHS", "DEPENDENCIES"]

GRAPHS = ("er", "ws", "ba", "mixed")
DEPENDENCIES = ("sdep", "wdep")

#: DiviML's kind of platform: (device, slowness range relative to gpu0).
PLATFORM = (("gpu0", (1.0, 1.0)), ("gpu1", (1.3, 1.7)), ("cpu", (6.0, 12.0)))
PCIE_BANDWIDTH = 1.2e7  # bytes per ms (12 GB/s)
PCIE_LATENCY = 0.01  # ms


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def _er(rng: random.Random, n: int, p: float) -> set[tuple[int, int]]:
    return {(i, j) for j in range(n) for i in range(j) if rng.random() < p}


def _ws(rng: random.Random, n: int, k: int, p: float) -> set[tuple[int, int]]:
    half = max(1, min(k // 2, (n - 1) // 2))
    edges = {tuple(sorted((i, (i + s) % n))) for i in range(n) for s in range(1, half + 1)}
    for edge in sorted(edges):
        if rng.random() < p:
            i = edge[0]
            options = [j for j in range(n) if j != i and tuple(sorted((i, j))) not in edges]
            if options:
                edges.discard(edge)
                edges.add(tuple(sorted((i, rng.choice(options)))))
    return edges


def _ba(rng: random.Random, n: int, m: int) -> set[tuple[int, int]]:
    m = max(1, min(m, n - 1))
    edges = {(i, j) for j in range(m + 1) for i in range(j)}  # a small complete seed graph
    ends = [v for edge in sorted(edges) for v in edge]
    for new in range(m + 1, n):
        chosen: set[int] = set()
        while len(chosen) < m:
            chosen.add(rng.choice(ends))
        for old in sorted(chosen):
            edges.add((old, new))
            ends += [old, new]
    return edges


def _check(name: str, value: Any, least: int, most: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least or \
            (most is not None and value > most):
        bounds = f">= {least}" if most is None else f"in {least}..{most}"
        raise ProblemError(f"{name}: needs an integer {bounds}, got {value!r}")


def rwnn(modules: int = 10, nodes: int = 8, channels: int = 1, dependency: str = "sdep",
         graph: str = "mixed", seed: int = 0, *, edge_prob: float = 0.4, neighbours: int = 4,
         rewire: float = 0.3, attach: int = 2, name: str | None = None) -> dict:
    """A randomly wired network of ``modules`` modules on DiviML's platform (see the module text).

    Parameters
    ----------
    modules : int
        Number of modules (>= 1).
    nodes : int
        Nodes of each module's random graph (>= 2), besides its input and output nodes.
    channels : int
        Edges between consecutive modules, 1 to 4.
    dependency : {"sdep", "wdep"}
        How output channels depend on input channels (matters with 2 channels or more).
    graph : {"er", "ws", "ba", "mixed"}
        Generator of the modules' graphs (``mixed``: ER, WS, BA in turn).
    seed : int
        Seed of the random generator.
    edge_prob, neighbours, rewire, attach
        ER edge probability; WS ring neighbours and rewiring probability; BA attachments.
    name : str, optional
        Problem name; by default ``rwnn-MODULESxNODES-cCHANNELS-DEPENDENCY-GRAPH-SEED``.

    Returns
    -------
    dict
        A ``schedkit/v1`` problem: tasks ``m{t}_in{c}``, ``m{t}_n{i}``, ``m{t}_out{c}`` with
        per-device durations, edges with explicit sizes.

    Examples
    --------
    >>> data = rwnn(modules=2, nodes=3, channels=1, graph="er", edge_prob=1.0, seed=0)
    >>> [e["src"] + "->" + e["dst"] for e in data["edges"]][:4]
    ['m1_in1->m1_n0', 'm1_n0->m1_n1', 'm1_n0->m1_n2', 'm1_n1->m1_n2']
    >>> rwnn(channels=5)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: channels: needs an integer in 1..4, got 5
    """
    _check("modules", modules, 1)
    _check("nodes", nodes, 2)
    _check("channels", channels, 1, 4)
    _check("neighbours", neighbours, 2)
    _check("attach", attach, 1)
    if dependency == "wdep" and nodes < channels:
        raise ProblemError(f"nodes: wdep needs a node per channel, {channels}, got {nodes}")
    if dependency not in DEPENDENCIES:
        raise ProblemError(f"dependency: {dependency!r} is not one of {', '.join(DEPENDENCIES)}")
    if graph not in GRAPHS:
        raise ProblemError(f"graph: {graph!r} is not one of {', '.join(GRAPHS)}")
    for label, p in (("edge_prob", edge_prob), ("rewire", rewire)):
        if not 0.0 <= p <= 1.0:
            raise ProblemError(f"{label}: a probability must lie in [0, 1], got {p!r}")
    rng = random.Random(seed)
    slowness = {device: rng.uniform(*spread) for device, spread in PLATFORM}
    devices = [{"name": device} for device, _ in PLATFORM]
    names = [device for device, _ in PLATFORM]
    links = [{"src": a, "dst": b, "bandwidth": PCIE_BANDWIDTH, "latency": PCIE_LATENCY}
             for k, a in enumerate(names) for b in names[k + 1:]]
    tasks: list[dict] = []
    edges: list[dict] = []
    size_of: dict[str, float] = {}

    def task(label: str, cheap: bool = False) -> str:
        base = rng.uniform(0.5, 2.0) * (0.2 if cheap else 1.0)
        durations = {d: _round(base * slowness[d] * rng.uniform(0.9, 1.1)) for d in names}
        size_of[label] = _round(rng.uniform(1e6, 5e6))
        tasks.append({"name": label, "durations": durations, "output_size": size_of[label]})
        return label

    def edge(src: str, dst: str) -> None:
        edges.append({"src": src, "dst": dst, "size": size_of[src]})

    previous: list[str] = []
    for t in range(1, modules + 1):
        kind = graph if graph != "mixed" else ("er", "ws", "ba")[(t - 1) % 3]
        if kind == "er":
            wiring = _er(rng, nodes, edge_prob)
        elif kind == "ws":
            wiring = _ws(rng, nodes, neighbours, rewire)
        else:
            wiring = _ba(rng, nodes, attach)
        inputs = [task(f"m{t}_in{c + 1}", cheap=True) for c in range(channels)]
        inner = [task(f"m{t}_n{i}") for i in range(nodes)]
        outputs = [task(f"m{t}_out{c + 1}", cheap=True) for c in range(channels)]
        for src, dst in zip(previous, inputs):
            edge(src, dst)
        weak = dependency == "wdep"
        lane = [i % channels if weak else 0 for i in range(nodes)]
        wiring = {(i, j) for i, j in wiring if lane[i] <= lane[j]}
        sources = [i for i in range(nodes) if not any(b == i for _, b in wiring)]
        sinks = [i for i in range(nodes) if not any(a == i for a, _ in wiring)]
        for c, node in enumerate(inputs):
            mine = [i for i in range(nodes) if lane[i] == (c if weak else 0)]
            for i in [i for i in sources if i in mine] or mine[:1]:
                edge(node, inner[i])
        for i, j in sorted(wiring):
            edge(inner[i], inner[j])
        for c, node in enumerate(outputs):
            mine = [i for i in range(nodes) if lane[i] == (c if weak else 0)]
            for i in [i for i in sinks if i in mine] or mine[-1:]:
                edge(inner[i], node)
        previous = outputs
    label = name or f"rwnn-{modules}x{nodes}-c{channels}-{dependency}-{graph}-{seed}"
    return {"format": "schedkit/v1", "name": label, "devices": devices, "links": links,
            "tasks": tasks, "edges": edges}
