"""MSR's DNN graphs (Tarnawski et al., NeurIPS 2020, ``dnn-partitioning``) as ``schedkit/v1``.

A file holds ``nodes`` (``cpuLatency``, ``fpgaLatency``, ``supportedOnFpga``, ``size``,
``colorClass``, ``isBackwardNode``), ``edges`` (``size`` in bytes and ``cost``, the transfer
time when the two ends sit on different devices) and the platform: ``maxCPUs`` CPUs,
``maxFPGAs`` accelerators of ``maxSizePerFPGA`` bytes each. The problem has

- devices ``cpu0 ...`` (group ``cpu``, unlimited memory) and ``acc0 ...`` (group
  ``accelerator``, memory ``maxSizePerFPGA``); every pair joined by a link;
- one task per node, named after it, with its CPU latency on every CPU and its accelerator
  latency on every accelerator (CPUs only when ``supportedOnFpga`` is 0), ``memory`` its
  ``size``, and ``colocate: color{k}`` for a colour class of two or more nodes (a class must
  be placed on one device);
- one edge per edge, with its ``size``. The shipped files charge ``size / cost`` =
  2^31 / 1000 bytes per time unit on every edge (2 GiB/s with times in milliseconds): that
  is the links' bandwidth, and every transfer time is reproduced exactly. A file whose edges
  disagree on the ratio gets links of bandwidth 1 and edge sizes equal to their costs, so that
  transfer times stay exact.

Backward nodes (``isBackwardNode``) are tasks like the others; their colour classes tie them
to their forward nodes. ``forward_only=True`` drops them.

Examples
--------
>>> data = parse_msr({"maxCPUs": 1, "maxFPGAs": 2, "maxSizePerFPGA": 100,
...     "nodes": [{"id": 1, "name": "a", "cpuLatency": 4, "fpgaLatency": 1, "size": 60,
...                "supportedOnFpga": 1, "colorClass": 1},
...               {"id": 2, "name": "b", "cpuLatency": 2, "fpgaLatency": 1, "size": 50,
...                "supportedOnFpga": 0, "colorClass": 2}],
...     "edges": [{"sourceId": 1, "destId": 2, "size": 8, "cost": 2}]}, name="toy")
>>> [d["name"] for d in data["devices"]], data["links"][0]["bandwidth"]
(['cpu0', 'acc0', 'acc1'], 4.0)
>>> data["tasks"][1]["durations"]
{'cpu0': 2}
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError, quoted
from schedkit.importers.base import Importer, register_importer
from schedkit.problem.reading import parse_json, read_text

__all__ = ["Msr", "parse_msr", "load_msr"]

#: Relative spread of ``size / cost`` over the edges below which one bandwidth explains them.
_RATIO_TOLERANCE = 1e-9


@register_importer("msr")
class Msr(Importer):
    """MSR dnn-partitioning JSON graph: CPU and accelerator latencies, memory, colour classes.

    Options: ``cpus`` and ``accelerators`` (device counts; the file's ``maxCPUs`` and
    ``maxFPGAs`` by default) and ``forward_only`` (drop backward nodes).
    """

    suffixes = (".json",)

    def read(self, path: str | Path, *, cpus: int | None = None, accelerators: int | None = None,
             forward_only: bool = False, **options: Any) -> dict:
        """Read an MSR graph file; see :func:`parse_msr`."""
        if options:
            raise ProblemError(f"msr import takes no option '{next(iter(options))}'")
        return load_msr(path, cpus=cpus, accelerators=accelerators, forward_only=forward_only)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0:
        raise ProblemError(f"{where}: expected a finite number >= 0, got {quoted(value)}")
    return value


#: Devices an MSR problem may have in all (a link joins every two: half a million links).
MAX_DEVICES = 1024


def _is_key(value: Any) -> bool:
    # ids, names and colour classes are dictionary keys: integers or strings, not lists or booleans
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _count(data: dict, key: str, given: int | None, name: str) -> int:
    value = data.get(key) if given is None else given
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProblemError(f"{name}: '{key}' must be an integer >= 0, got {quoted(value)}")
    return value


def _bandwidth(edges: list[dict]) -> float | None:
    """The one ``size / cost`` ratio of every edge that moves data, or None when they disagree."""
    ratios = [e["size"] / e["cost"] for e in edges if e["size"] > 0 and e["cost"] > 0]
    if any((e["size"] > 0) != (e["cost"] > 0) for e in edges):
        return None
    if not ratios:
        return 1.0
    low, high = min(ratios), max(ratios)
    return high if high - low <= _RATIO_TOLERANCE * high else None


def parse_msr(data: Any, name: str = "msr", *, cpus: int | None = None,
              accelerators: int | None = None, forward_only: bool = False,
              source: str | None = None) -> dict:
    """Turn MSR graph data into ``schedkit/v1`` problem data (see the module documentation).

    Parameters
    ----------
    data : dict
        The parsed JSON file.
    name : str
        Problem name.
    cpus, accelerators : int, optional
        Device counts (default: the file's ``maxCPUs`` and ``maxFPGAs``).
    forward_only : bool
        Leave out the nodes marked ``isBackwardNode`` and their edges.
    source : str, optional
        The prefix of error messages (the file); ``name`` by default.

    Returns
    -------
    dict
        ``schedkit/v1`` problem data.

    Examples
    --------
    >>> parse_msr({"maxCPUs": 1, "maxFPGAs": 0, "nodes": [{"id": 0}], "edges": []}, name="bad")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: bad: node 0: missing 'cpuLatency'
    >>> parse_msr({"maxCPUs": 1, "maxFPGAs": 10**9, "nodes": [], "edges": []}, name="big")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: big: 'maxFPGAs' 1000000000: at most 1024 devices in all (every two are linked)
    """
    name, problem_name = source or name, name
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise ProblemError(f"{name}: not an MSR graph (expected an object with 'nodes' and 'edges')")
    n_cpu = _count(data, "maxCPUs", cpus, name)
    n_acc = _count(data, "maxFPGAs", accelerators, name)
    if n_cpu + n_acc == 0:
        raise ProblemError(f"{name}: no devices (maxCPUs and maxFPGAs are both 0)")
    if n_cpu + n_acc > MAX_DEVICES:  # (before a list of billions of devices is made)
        key, value = ("maxFPGAs", n_acc) if n_acc >= n_cpu else ("maxCPUs", n_cpu)
        raise ProblemError(f"{name}: '{key}' {value}: at most {MAX_DEVICES} devices in all "
                           f"(every two are linked)")
    capacity = data.get("maxSizePerFPGA")
    devices = [{"name": f"cpu{k}", "group": "cpu"} for k in range(n_cpu)]
    for k in range(n_acc):
        row: dict[str, Any] = {"name": f"acc{k}", "group": "accelerator"}
        if capacity is not None:
            row["memory"] = _number(capacity, f"{name}: maxSizePerFPGA")
        devices.append(row)
    cpu_names = [d["name"] for d in devices[:n_cpu]]
    acc_names = [d["name"] for d in devices[n_cpu:]]

    nodes, by_id = [], {}
    for k, node in enumerate(data["nodes"]):
        if not isinstance(node, dict) or "id" not in node:
            raise ProblemError(f"{name}: node #{k} has no 'id'")
        for key in ("id", "name", "colorClass"):
            if node.get(key) is not None and not _is_key(node[key]):
                raise ProblemError(f"{name}: node #{k}: '{key}' must be an integer or a string, "
                                   f"got {quoted(node[key])}")
        if node.get("supportedOnFpga", 1) not in (0, 1):
            raise ProblemError(f"{name}: node #{k}: 'supportedOnFpga' must be 0 or 1, "
                               f"got {quoted(node['supportedOnFpga'])}")
        label = f"{name}: node {node['id']}"
        for key in ("cpuLatency", "fpgaLatency"):
            if key not in node:
                raise ProblemError(f"{label}: missing '{key}'")
        if node["id"] in by_id:
            raise ProblemError(f"{label}: duplicate id")
        by_id[node["id"]] = str(node.get("name", node["id"]))
        if not (forward_only and node.get("isBackwardNode")):
            nodes.append(node)
    kept = {node["id"] for node in nodes}
    classes = Counter(node.get("colorClass") for node in nodes if node.get("colorClass") is not None)

    edges = []
    for k, edge in enumerate(data.get("edges", [])):
        ends = (edge.get("sourceId"), edge.get("destId")) if isinstance(edge, dict) else (None, None)
        for end in ends:
            if not _is_key(end) or end not in by_id:
                raise ProblemError(f"{name}: edge #{k}: unknown node id {quoted(end)}")
        where = f"{name}: edge {by_id[ends[0]]}->{by_id[ends[1]]}"
        if ends[0] in kept and ends[1] in kept:
            edges.append({"src": by_id[ends[0]], "dst": by_id[ends[1]],
                          "size": _number(edge.get("size", 0), f"{where} size"),
                          "cost": _number(edge.get("cost", 0), f"{where} cost")})
    bandwidth = _bandwidth(edges)
    tasks = []
    for node in nodes:
        label = f"{name}: node {node['id']}"
        durations = {d: _number(node["cpuLatency"], f"{label} cpuLatency") for d in cpu_names}
        if node.get("supportedOnFpga", 1):
            durations.update({d: _number(node["fpgaLatency"], f"{label} fpgaLatency")
                              for d in acc_names})
        task: dict[str, Any] = {"name": by_id[node["id"]], "durations": durations}
        memory = _number(node.get("size", 0), f"{label} size")
        if memory:
            task["memory"] = memory
        if classes.get(node.get("colorClass"), 0) > 1:
            task["colocate"] = f"color{node['colorClass']}"
        tasks.append(task)
    if not tasks:
        raise ProblemError(f"{name}: no nodes to schedule")
    rows = [{"src": e["src"], "dst": e["dst"],
             "size": e["size"] if bandwidth is not None else e["cost"]} for e in edges]
    names = [d["name"] for d in devices]
    links = [{"src": u, "dst": v, "bandwidth": bandwidth or 1.0}
             for k, u in enumerate(names) for v in names[k + 1:]]
    return {"format": "schedkit/v1", "name": problem_name, "devices": devices, "links": links,
            "tasks": tasks, "edges": rows}


def load_msr(path: str | Path, **options: Any) -> dict:
    """Read an MSR graph file; the problem is named after the file (see :func:`parse_msr`).

    Examples
    --------
    >>> data = load_msr("data/msr-dnn/layer/bert24_inference.json")
    >>> data["name"], len(data["tasks"]), len(data["devices"])
    ('bert24_inference', 32, 13)
    """
    data = parse_json(read_text(path), str(path))
    return parse_msr(data, name=Path(path).stem, source=str(path), **options)
