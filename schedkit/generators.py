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

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError, SchedkitError
from schedkit.atomic import write_text_atomic

__all__ = ["layered", "erdos_renyi", "dump", "add_generate_command", "run_generate"]


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def _check_range(name: str, bounds: tuple[float, float], positive: bool = False) -> tuple[float, float]:
    lo, hi = (float(v) for v in bounds)
    if lo > hi or lo < 0 or (positive and lo <= 0):
        need = "0 < low <= high" if positive else "0 <= low <= high"
        raise ProblemError(f"{name}: range ({lo:g}, {hi:g}) needs {need}")
    return lo, hi


def _check_count(name: str, value: int, least: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ProblemError(f"{name}: needs an integer >= {least}, got {value!r}")


def _check_prob(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ProblemError(f"{name}: a probability must lie in [0, 1], got {value!r}")


def _devices_and_links(rng: random.Random, devices: int, speed: tuple[float, float] | None,
                       bandwidth: tuple[float, float], latency: float) -> tuple[list, list]:
    rows = []
    for d in range(devices):
        row: dict[str, Any] = {"name": f"dev{d}"}
        if speed is not None:
            row["speed"] = _round(rng.uniform(*speed))
        rows.append(row)
    links = []
    for u in range(devices):
        for v in range(u + 1, devices):
            link: dict[str, Any] = {"src": f"dev{u}", "dst": f"dev{v}",
                                    "bandwidth": _round(rng.uniform(*bandwidth))}
            if latency:
                link["latency"] = latency
            links.append(link)
    return rows, links


def _add_memory(rng: random.Random, tasks: list[dict], devices: list[dict], slack: float | None) -> None:
    if slack is None:
        return
    if slack <= 0:
        raise ProblemError(f"memory_slack: needs a positive number, got {slack!r}")
    total = 0.0
    for task in tasks:
        task["memory"] = _round(rng.uniform(1.0, 10.0))
        total += task["memory"]
    biggest = max(t["memory"] for t in tasks)
    cap = _round(max(biggest, slack * total / len(devices)))
    for device in devices:
        device["memory"] = cap


def layered(levels: int, width: int, edge_prob: float, long_range_prob: float, devices: int,
            seed: int = 0, *, work: tuple[float, float] = (1.0, 10.0),
            size: tuple[float, float] = (1.0, 10.0), speed: tuple[float, float] = (1.0, 4.0),
            bandwidth: tuple[float, float] = (1.0, 10.0), latency: float = 0.0,
            memory_slack: float | None = None, name: str | None = None) -> dict:
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

    Returns
    -------
    dict
        A ``schedkit/v1`` problem (tasks use ``work``, devices ``speed``; edges carry
        their size explicitly).

    Examples
    --------
    >>> data = layered(levels=2, width=2, edge_prob=1.0, long_range_prob=0.0, devices=2, seed=0)
    >>> [(e["src"], e["dst"]) for e in data["edges"]]
    [('t0', 't2'), ('t1', 't2'), ('t0', 't3'), ('t1', 't3')]
    >>> data["devices"][0]
    {'name': 'dev0', 'speed': 3.533}
    """
    _check_count("levels", levels)
    _check_count("width", width)
    _check_count("devices", devices)
    _check_prob("edge_prob", edge_prob)
    _check_prob("long_range_prob", long_range_prob)
    work = _check_range("work", work)
    size = _check_range("size", size)
    speed = _check_range("speed", speed, positive=True)
    bandwidth = _check_range("bandwidth", bandwidth, positive=True)
    rng = random.Random(seed)
    device_rows, links = _devices_and_links(rng, devices, speed, bandwidth, latency)
    tasks = []
    outputs = []
    for k in range(levels * width):
        outputs.append(_round(rng.uniform(*size)))
        tasks.append({"name": f"t{k}", "work": _round(rng.uniform(*work)), "output_size": outputs[k]})
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
    _check_count("tasks", tasks)
    _check_count("devices", devices)
    _check_prob("edge_prob", edge_prob)
    work = _check_range("work", work)
    spread = _check_range("spread", spread, positive=True)
    noise = _check_range("noise", noise, positive=True)
    size = _check_range("size", size)
    bandwidth = _check_range("bandwidth", bandwidth, positive=True)
    rng = random.Random(seed)
    device_rows, links = _devices_and_links(rng, devices, None, bandwidth, latency)
    slowness = [rng.uniform(*spread) for _ in range(devices)]
    rows = []
    outputs = []
    for k in range(tasks):
        base = rng.uniform(*work)
        outputs.append(_round(rng.uniform(*size)))
        rows.append({"name": f"t{k}",
                     "durations": {f"dev{d}": _round(base * slowness[d] * rng.uniform(*noise))
                                   for d in range(devices)},
                     "output_size": outputs[k]})
    edges = [{"src": f"t{i}", "dst": f"t{j}", "size": outputs[i]}
             for j in range(tasks) for i in range(j) if rng.random() < edge_prob]
    _add_memory(rng, rows, device_rows, memory_slack)
    return {"format": "schedkit/v1", "name": name or f"er-{tasks}-{seed}", "devices": device_rows,
            "links": links, "tasks": rows, "edges": edges}


# ---------------------------------------------------------------------- command line
def add_generate_command(subparsers) -> argparse.ArgumentParser:
    """Add ``generate {layered,er}`` to an argparse sub-parser collection.

    The chosen parser's ``handler`` default is :func:`run_generate`.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "er", "--tasks", "5", "--devices", "2"])
    >>> args.kind, args.tasks, args.edge_prob, args.seed
    ('er', 5, 0.3, 0)
    """
    parser = subparsers.add_parser(
        "generate", help="write a random problem (layered or Erdos-Renyi)",
        description="Write a seeded random problem in the schedkit/v1 format.")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--devices", type=int, default=4, help="number of devices (default 4)")
        p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        p.add_argument("--latency", type=float, default=0.0, help="latency of every link (default 0)")
        p.add_argument("--memory-slack", type=float, default=None,
                       help="give tasks memory and devices SLACK * total / devices of capacity")
        p.add_argument("--name", default=None, help="problem name")
        p.add_argument("-o", "--output", default=None, metavar="FILE",
                       help="output file, .json or .yaml/.yml (default: JSON on stdout)")
        p.set_defaults(handler=run_generate)

    lay = kinds.add_parser("layered", help="levels of tasks with skip edges (Mayer et al. 2017)")
    lay.add_argument("--levels", type=int, default=10, help="number of levels (default 10)")
    lay.add_argument("--width", type=int, default=10, help="tasks per level (default 10)")
    lay.add_argument("--edge-prob", type=float, default=0.3,
                     help="edge probability between adjacent levels (default 0.3)")
    lay.add_argument("--long-range-prob", type=float, default=0.1,
                     help="probability of a skip edge into each task (default 0.1)")
    common(lay)
    er = kinds.add_parser("er", help="random ordered Erdos-Renyi DAG, per-device durations")
    er.add_argument("--tasks", type=int, default=14, help="number of tasks (default 14)")
    er.add_argument("--edge-prob", type=float, default=0.3, help="edge probability (default 0.3)")
    common(er)
    return parser


def run_generate(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate``: build the problem and write it; return an exit code.

    Examples
    --------
    >>> import argparse, json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "er.json"
    >>> args = argparse.Namespace(kind="er", tasks=4, edge_prob=0.5, devices=2, seed=3,
    ...                           latency=0.0, memory_slack=None, name=None, output=str(out))
    >>> run_generate(args)
    0
    >>> len(json.loads(out.read_text())["tasks"])
    4
    """
    try:
        common = dict(devices=args.devices, seed=args.seed, latency=args.latency,
                      memory_slack=args.memory_slack, name=args.name)
        if args.kind == "layered":
            data = layered(args.levels, args.width, args.edge_prob, args.long_range_prob, **common)
        elif args.kind == "er":
            data = erdos_renyi(args.tasks, args.edge_prob, **common)
        else:
            raise ProblemError(f"unknown generator {args.kind!r} (layered or er)")
        text = dump(data, args.output)
        if args.output is None:
            sys.stdout.write(text)
        else:
            write_text_atomic(args.output, text)
    except (SchedkitError, OSError) as exc:
        print(f"schedkit generate: error: {exc}", file=sys.stderr)
        return 1
    return 0


def dump(data: dict, path: str | Path | None = None) -> str:
    """Problem data as text: YAML for a ``.yaml``/``.yml`` path, JSON otherwise.

    Examples
    --------
    >>> print(dump({"name": "x"}, "p.yaml"), end="")
    name: x
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
