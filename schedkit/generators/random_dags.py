"""Seeded random problem generators, returning ``schedkit/v1`` data.

``layered``
    The synthetic graphs of Mayer et al. (2017): ``levels`` levels of ``width`` tasks;
    every task of a level draws an input from each task of the level before with
    probability ``edge_prob`` (at least one, so that the graph is connected like a
    network's layers); with probability ``long_range_prob`` a task also draws one input
    from a random task two or more levels back (a skip connection). Tasks give ``work``
    (uniform in ``work``) and ``output_size`` (uniform in ``size``); devices get a random
    ``speed`` and every pair of devices a link with a random bandwidth.
``erdos_renyi``
    A random ordered Erdos-Renyi DAG: tasks ``0..n-1``, an edge ``i -> j`` (``i < j``)
    with probability ``edge_prob``; a few heterogeneous devices (unrelated machines:
    a task's duration on a device is its base work times a random factor of the device
    times a random per-task noise).

The same arguments give the same problem on every platform (:class:`random.Random`
seeded with ``seed``). Numbers are rounded to 4 significant digits so that files stay
short and JSON and YAML round trips are exact.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict(layered(levels=3, width=4, edge_prob=0.5, long_range_prob=0.2,
...                                devices=3, seed=1))
>>> len(p.tasks), len(p.devices)
(12, 3)
>>> Problem.from_dict(erdos_renyi(tasks=14, edge_prob=0.3, devices=3, seed=0))
Problem('er-14-0': 14 tasks, 26 edges, 3 devices)
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from schedkit.errors import ProblemError
from schedkit.generators.random_devices import check_count, devices_and_links, round4, typed_cluster
from schedkit.machine import ensure_fits

__all__ = ["layered", "erdos_renyi", "dump"]


def _check_range(name: str, bounds: tuple[float, float], positive: bool = False) -> tuple[float, float]:
    lo, hi = (float(v) for v in bounds)
    # Written so that NaN fails every comparison and is refused too.
    if not (0 <= lo <= hi < math.inf) or (positive and not lo > 0):
        need = "0 < low <= high" if positive else "0 <= low <= high"
        raise ProblemError(f"{name}: range ({lo:g}, {hi:g}) needs {need}")
    return lo, hi


#: Bytes of a generated task per device (its duration) and of a generated edge, in the data
#: and in the problem loaded from it; pairs of tasks drawn per second (edges are drawn per pair).
TASK_BYTES, DURATION_BYTES, EDGE_BYTES, PAIRS_PER_SECOND = 500, 150, 400, 5e6
#: Generations longer than this are refused (seconds).
LONGEST_SECONDS = 600


def _check_size(what: str, tasks: int, devices: int, pairs: int, edges: float) -> None:
    """Refuse a graph whose data cannot fit the memory free, or whose edges take too long to draw."""
    if pairs / PAIRS_PER_SECOND > LONGEST_SECONDS:
        raise ProblemError(f"{what}: {pairs:,} pairs of tasks to draw edges for, about "
                           f"{pairs / PAIRS_PER_SECOND / 60:,.0f} minutes (at most {LONGEST_SECONDS // 60})")
    ensure_fits(what, tasks * (TASK_BYTES + DURATION_BYTES * devices) + edges * EDGE_BYTES)


def _check_prob(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ProblemError(f"{name}: a probability must lie in [0, 1], got {value!r}")


def _add_memory(rng: random.Random, tasks: list[dict], devices: list[dict], slack: float | None) -> None:
    if slack is None:
        return
    if not 0 < slack < math.inf:
        raise ProblemError(f"memory_slack: needs a finite number > 0, got {slack!r}")
    total = 0.0
    for task in tasks:
        task["memory"] = round4(rng.uniform(1.0, 10.0))
        total += task["memory"]
    biggest = max(t["memory"] for t in tasks)
    cap = round4(max(biggest, slack * total / len(devices)))
    for device in devices:
        device["memory"] = cap


def layered(levels: int, width: int, edge_prob: float, long_range_prob: float, devices: int,
            seed: int = 0, *, work: tuple[float, float] = (1.0, 10.0),
            size: tuple[float, float] = (1.0, 10.0), speed: tuple[float, float] = (1.0, 4.0),
            bandwidth: tuple[float, float] = (1.0, 10.0), latency: float = 0.0,
            memory_slack: float | None = None, name: str | None = None,
            types: int | None = None, group_size: int | None = None) -> dict:
    """A layered random task graph after Mayer et al. (2017), as ``schedkit/v1`` data.

    Parameters
    ----------
    levels, width : int
        Number of levels and of tasks per level (``levels * width`` tasks).
    edge_prob : float
        Probability of an edge from each task of a level to each task of the next;
        a task without any gets one from a random task of the level before.
    long_range_prob : float
        Probability that a task (from the third level on) also receives an edge from a
        uniformly drawn task at least two levels earlier.
    devices : int
        Number of devices; every pair is linked.
    seed : int
        Seed of the random generator.
    work, size, speed, bandwidth : (float, float)
        Uniform ranges of task work, task output size (the size of its edges), device
        speed and link bandwidth.
    latency : float
        Latency of every link.
    memory_slack : float, optional
        When given, tasks get a memory in [1, 10] and every device the capacity
        ``memory_slack * total task memory / devices`` (at least the largest task).
    name : str, optional
        Problem name; by default built from the parameters.
    types : int, optional
        A cluster of ``types`` device types (``type0``, ...): every task gives its
        ``durations`` by type (unrelated machines: its work times a random factor of the
        type times a per-task noise), so that the file grows with tasks x types, not tasks
        x devices.
    group_size : int, optional
        With ``types``: devices in servers of ``group_size`` (device groups ``g0``, ...,
        each of one type, cycled over the types), one group link inside each server and
        one per pair of servers, instead of a link per device pair.

    Returns
    -------
    dict
        A ``schedkit/v1`` problem (tasks use ``work``, devices ``speed``; edges carry
        their size explicitly; with ``types``, durations keyed by type instead).

    Examples
    --------
    >>> data = layered(levels=2, width=2, edge_prob=1.0, long_range_prob=0.0, devices=2, seed=0)
    >>> [(e["src"], e["dst"]) for e in data["edges"]]
    [('t0', 't2'), ('t1', 't2'), ('t0', 't3'), ('t1', 't3')]
    >>> data["devices"][0]
    {'name': 'dev0', 'speed': 3.533}
    >>> cluster = layered(levels=2, width=2, edge_prob=1.0, long_range_prob=0.0, devices=8, seed=0,
    ...                   types=2, group_size=4)
    >>> cluster["devices"][4], cluster["tasks"][0]["durations"]
    ({'name': 'dev4', 'type': 'type1', 'group': 'g1'}, {'type0': 1.557, 'type1': 1.972})
    >>> [(link["src"], link["dst"]) for link in cluster["links"]]
    [('g0', 'g0'), ('g1', 'g1'), ('g0', 'g1')]
    """
    check_count("levels", levels)
    check_count("width", width)
    check_count("devices", devices)
    _check_prob("edge_prob", edge_prob)
    _check_prob("long_range_prob", long_range_prob)
    _check_size(f"levels x width: {levels * width:,} tasks on {devices:,} devices", levels * width,
                devices if types is None else types,
                pairs=(levels - 1) * width * width,
                edges=(levels - 1) * width * width * edge_prob + levels * width * long_range_prob)
    work = _check_range("work", work)
    size = _check_range("size", size)
    speed = _check_range("speed", speed, positive=True)
    bandwidth = _check_range("bandwidth", bandwidth, positive=True)
    rng = random.Random(seed)
    if types is None:
        if group_size is not None:
            raise ProblemError("group_size: needs types (the devices of a server share one type)")
        device_rows, links = devices_and_links(rng, devices, speed, bandwidth, latency)
        factors = None
    else:
        device_rows, links, factors = typed_cluster(rng, devices, types, group_size, speed, bandwidth, latency)
    tasks = []
    outputs = []
    for k in range(levels * width):
        outputs.append(round4(rng.uniform(*size)))
        base = round4(rng.uniform(*work))
        if factors is None:
            tasks.append({"name": f"t{k}", "work": base, "output_size": outputs[k]})
        else:  # (unrelated machines: a type's factor and a task's own noise)
            durations = {kind: round4(base * factor * rng.uniform(0.8, 1.25)) for kind, factor in factors.items()}
            tasks.append({"name": f"t{k}", "durations": durations, "output_size": outputs[k]})
    edges = []
    for level in range(1, levels):
        first, prev = level * width, (level - 1) * width
        for j in range(first, first + width):
            sources = [i for i in range(prev, prev + width) if rng.random() < edge_prob]
            if not sources:
                sources = [prev + rng.randrange(width)]
            far = None
            if level >= 2 and rng.random() < long_range_prob:
                far = rng.randrange(prev)  # tasks before `prev` sit two or more levels back
            for i in sources:
                edges.append({"src": f"t{i}", "dst": f"t{j}", "size": outputs[i]})
            if far is not None:
                edges.append({"src": f"t{far}", "dst": f"t{j}", "size": outputs[far]})
    _add_memory(rng, tasks, device_rows, memory_slack)
    if name is None:
        name = f"layered-{levels}x{width}-{seed}"
    return {"format": "schedkit/v1", "name": name, "devices": device_rows, "links": links,
            "tasks": tasks, "edges": edges}


def erdos_renyi(tasks: int, edge_prob: float, devices: int, seed: int = 0, *,
                work: tuple[float, float] = (1.0, 10.0), spread: tuple[float, float] = (0.5, 2.0),
                noise: tuple[float, float] = (0.8, 1.25), size: tuple[float, float] = (1.0, 10.0),
                bandwidth: tuple[float, float] = (2.0, 10.0), latency: float = 0.0,
                memory_slack: float | None = None, name: str | None = None) -> dict:
    """A random ordered Erdos-Renyi DAG on heterogeneous devices, as ``schedkit/v1`` data.

    Parameters
    ----------
    tasks : int
        Number of tasks.
    edge_prob : float
        Probability of each edge ``i -> j`` with ``i < j``.
    devices : int
        Number of devices; every pair is linked.
    seed : int
        Seed of the random generator.
    work : (float, float)
        Range of a task's base work.
    spread : (float, float)
        Range of a device's slowness factor.
    noise : (float, float)
        Range of the per-(task, device) factor: duration = work * slowness * noise.
    size, bandwidth : (float, float)
        Ranges of task output size and link bandwidth.
    latency : float
        Latency of every link.
    memory_slack : float, optional
        As in :func:`layered`.
    name : str, optional
        Problem name; by default ``er-TASKS-SEED``.

    Returns
    -------
    dict
        A ``schedkit/v1`` problem whose tasks give per-device ``durations``.

    Examples
    --------
    >>> data = erdos_renyi(tasks=3, edge_prob=1.0, devices=2, seed=0)
    >>> len(data["edges"]), sorted(data["tasks"][0]["durations"])
    (3, ['dev0', 'dev1'])
    """
    check_count("tasks", tasks)
    check_count("devices", devices)
    _check_prob("edge_prob", edge_prob)
    _check_size(f"tasks: {tasks:,} tasks on {devices:,} devices", tasks, devices,
                pairs=tasks * (tasks - 1) // 2, edges=edge_prob * tasks * (tasks - 1) / 2)
    work = _check_range("work", work)
    spread = _check_range("spread", spread, positive=True)
    noise = _check_range("noise", noise, positive=True)
    size = _check_range("size", size)
    bandwidth = _check_range("bandwidth", bandwidth, positive=True)
    rng = random.Random(seed)
    device_rows, links = devices_and_links(rng, devices, None, bandwidth, latency)
    slowness = [rng.uniform(*spread) for _ in range(devices)]
    rows = []
    outputs = []
    for k in range(tasks):
        base = rng.uniform(*work)
        outputs.append(round4(rng.uniform(*size)))
        rows.append({"name": f"t{k}",
                     "durations": {f"dev{d}": round4(base * slowness[d] * rng.uniform(*noise))
                                   for d in range(devices)},
                     "output_size": outputs[k]})
    edges = [{"src": f"t{i}", "dst": f"t{j}", "size": outputs[i]}
             for j in range(tasks) for i in range(j) if rng.random() < edge_prob]
    _add_memory(rng, rows, device_rows, memory_slack)
    return {"format": "schedkit/v1", "name": name or f"er-{tasks}-{seed}", "devices": device_rows,
            "links": links, "tasks": rows, "edges": edges}


def dump(data: dict, path: str | Path | None = None) -> str:
    """Problem data as text: YAML for a ``.yaml``/``.yml`` path, JSON otherwise.

    The YAML puts one device, link, task or edge per line (flow style), so that
    generated files stay short and readable.

    Parameters
    ----------
    data : dict
        ``schedkit/v1`` problem data.
    path : str or Path, optional
        Only its suffix counts: ``.yaml``/``.yml``, ``.json`` or none (JSON).

    Returns
    -------
    str
        The text, ending with a newline; nothing is written.

    Raises
    ------
    ProblemError
        For any other suffix.

    Examples
    --------
    >>> print(dump({"name": "x"}, "p.yaml"), end="")
    name: x
    >>> print(dump({"name": "x", "tasks": [{"name": "a", "work": 1.5}]}, "p.yml"), end="")
    name: x
    tasks:
      - {name: a, work: 1.5}
    >>> dump({"name": "x"}, "p.txt")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: p.txt: unknown output format (use .json, .yaml or .yml)
    """
    suffix = Path(path).suffix.lower() if path is not None else ".json"
    if suffix in (".yaml", ".yml"):
        import yaml

        # Block style at the top, one flow-style line per device, link, task and edge.
        lines = []
        for key, value in data.items():
            if isinstance(value, list):
                lines.append(f"{key}:" + ("" if value else " []"))
                for item in value:
                    flow = yaml.safe_dump(item, sort_keys=False, default_flow_style=True,
                                          width=float("inf")).strip()
                    lines.append(f"  - {flow}")
            else:
                lines.append(yaml.safe_dump({key: value}, sort_keys=False,
                                            default_flow_style=False).strip())
        return "\n".join(lines) + "\n"
    if suffix == ".json":
        return json.dumps(data, indent=1) + "\n"
    raise ProblemError(f"{path}: unknown output format (use .json, .yaml or .yml)")
