"""The devices and links of generated problems: every pair linked, or a typed cluster.

Shared by the random task-graph generators (:mod:`schedkit.generators.random_dags`):
devices with a random ``speed`` and a link of random bandwidth per pair, or a cluster of
device types (durations keyed by type) in servers joined by group links, whose file grows
with the servers, not with the device pairs.

Examples
--------
>>> rows, links, factors = typed_cluster(random.Random(0), 4, 2, 2, (1.0, 4.0), (1.0, 10.0), 0.0)
>>> rows[2], [(link["src"], link["dst"]) for link in links], sorted(factors)
({'name': 'dev2', 'type': 'type1', 'group': 'g1'}, [('g0', 'g0'), ('g1', 'g1'), ('g0', 'g1')], ['type0', 'type1'])
"""

from __future__ import annotations

import math
import random
from typing import Any

from schedkit.errors import ProblemError

__all__ = ["round4", "check_count", "check_latency", "devices_and_links", "typed_cluster"]


def round4(x: float) -> float:
    """``x`` to 4 significant digits (short files, exact JSON and YAML round trips)."""
    return float(f"{x:.4g}")


def check_count(name: str, value: int, least: int = 1) -> None:
    """Refuse a count that is no integer of at least ``least`` (booleans are refused too)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ProblemError(f"{name}: needs an integer >= {least}, got {value!r}")


def check_latency(latency: float) -> float:
    """``latency`` as a float; a one-line error unless it is a finite number >= 0."""
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not 0 <= latency < math.inf:
        raise ProblemError(f"latency: needs a finite number >= 0, got {latency!r}")
    return float(latency)


def devices_and_links(rng: random.Random, devices: int, speed: tuple[float, float] | None,
                      bandwidth: tuple[float, float], latency: float) -> tuple[list, list]:
    """Devices ``dev0``, ... (with a random ``speed`` drawn from ``speed`` unless ``None``) and a
    link of random bandwidth between every two of them, drawn in that order from ``rng``."""
    latency = check_latency(latency)
    rows = []
    for d in range(devices):
        row: dict[str, Any] = {"name": f"dev{d}"}
        if speed is not None:
            row["speed"] = round4(rng.uniform(*speed))
        rows.append(row)
    links = []
    for u in range(devices):
        for v in range(u + 1, devices):
            link: dict[str, Any] = {"src": f"dev{u}", "dst": f"dev{v}",
                                    "bandwidth": round4(rng.uniform(*bandwidth))}
            if latency:
                link["latency"] = latency
            links.append(link)
    return rows, links


def typed_cluster(rng: random.Random, devices: int, types: int, group_size: int | None,
                   speed: tuple[float, float], bandwidth: tuple[float, float],
                   latency: float) -> tuple[list, list, dict[str, float]]:
    """Devices of ``types`` types, in servers of ``group_size`` when given, their links, and
    each type's factor on a task's work (one over a speed drawn from ``speed``)."""
    check_count("types", types)
    if types > devices:
        raise ProblemError(f"types: {types} types for {devices} devices (at most one type per device)")
    latency = check_latency(latency)
    factors = {f"type{j}": round4(1.0 / rng.uniform(*speed)) for j in range(types)}
    link_extra = {"latency": latency} if latency else {}
    if group_size is None:
        rows = [{"name": f"dev{d}", "type": f"type{d % types}"} for d in range(devices)]
        links = [{"src": f"dev{u}", "dst": f"dev{v}", "bandwidth": round4(rng.uniform(*bandwidth)), **link_extra}
                 for u in range(devices) for v in range(u + 1, devices)]
        return rows, links, factors
    check_count("group_size", group_size)
    if devices % group_size:
        raise ProblemError(f"group_size: {devices} devices do not make servers of {group_size}")
    servers = devices // group_size
    if group_size > 1 and servers < types:
        raise ProblemError(f"types: {types} types for {servers} servers (a server's devices share one type)")
    rows = [{"name": f"dev{d}", "type": f"type{(d // group_size) % types}", "group": f"g{d // group_size}"}
            for d in range(devices)]
    # A server's own link is the fastest (as NVLink inside a server), between servers the
    # slowest of the range (a network): the groups' members stay interchangeable.
    lo, hi = bandwidth
    links = [{"src": f"g{s}", "dst": f"g{s}", "bandwidth": hi, **link_extra} for s in range(servers)
             if group_size > 1]
    links += [{"src": f"g{a}", "dst": f"g{b}", "bandwidth": round4(rng.uniform(lo, (lo + hi) / 2)), **link_extra}
              for a in range(servers) for b in range(a + 1, servers)]
    return rows, links, factors
