"""The instance sets of ``benchmarks/exact.py`` (see its docstring): each a :class:`Group` of
:class:`Instance` s, built from the command-line arguments."""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from schedkit import Problem
from schedkit.generators import erdos_renyi, pipeline
from schedkit.importers import convert

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(__file__).resolve().parent
SHARED_JSSP = ROOT.parent / "shared" / "data" / "jssp"

SETS = ("random", "jobshop", "moirai", "congestion", "timeline", "twenty")
DEFAULT_SETS = ("random", "jobshop", "moirai", "congestion", "timeline")

#: Proven optimal makespans (Fisher and Thompson 1963, Lawrence 1984); checked at run time
#: against the README of ``../shared/data/jssp`` when it is there.
JSSP_OPTIMA = {"ft06": 55, "la01": 666, "la02": 655, "la03": 597, "la04": 590, "la05": 593,
               "la06": 926, "la07": 890, "la08": 863, "la09": 951, "la10": 958, "ft10": 930}
LAWRENCE = [f"la{k:02d}" for k in range(1, 11)]

VARIANT_TASKS, VARIANT_DEVICES, MEMORY_SLACK, PIN_EVERY = 30, 3, 1.25, 10
MOIRAI = {"moirai_example1": "examples/moirai_example1.json",
          "googlenet_moirai": "examples/googlenet_moirai.json"}


@dataclass
class Instance:
    name: str
    load: Callable[[], Problem]
    formulation: object = "latency"
    time_limit: float | None = None  # None: --time-limit
    optimum: float | None = None


@dataclass
class Group:
    """One table: its instances, the runs, what was skipped and the targets to print."""

    key: str
    title: str
    instances: list[Instance] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    summary: list[dict] = field(default_factory=list)
    targets: list[dict] = field(default_factory=list)


# ---------------------------------------------------------------------------- instances

def er_name(tasks: int, devices: int, seed: int, memory: bool = False, pin: bool = False) -> str:
    """``er{tasks}x{devices}-s{seed}``, then ``-mem``, ``-pin`` or ``-mem+pin`` for a variant."""
    suffix = "+".join(part for part, on in (("mem", memory), ("pin", pin)) if on)
    return f"er{tasks}x{devices}-s{seed}" + (f"-{suffix}" if suffix else "")


def er(tasks: int, devices: int, seed: int, edge_prob: float, memory: bool = False,
       pin: bool = False) -> Problem:
    """An Erdos-Renyi instance (see the module docstring), named by :func:`er_name`."""
    name = er_name(tasks, devices, seed, memory, pin)
    data = erdos_renyi(tasks, edge_prob, devices, seed=seed, name=name,
                       memory_slack=MEMORY_SLACK if memory else None)
    if pin:
        for k, task in enumerate(data["tasks"]):
            if k % PIN_EVERY == 0:
                task["pin"] = [f"dev{(k // PIN_EVERY) % devices}"]
    return Problem.from_dict(data)


def random_groups(args) -> list[Group]:
    head = Group("random", f"random: Erdos-Renyi DAGs, edge probability {args.edge_prob:g}, "
                           f"{'/'.join(map(str, args.sizes))} tasks x {'/'.join(map(str, args.devices))} "
                           f"devices, seeds 0-{args.seeds - 1}; formulation latency")
    for n in args.sizes:
        for m in args.devices:
            for seed in range(args.seeds):
                head.instances.append(Instance(er_name(n, m, seed),
                                               lambda n=n, m=m, s=seed: er(n, m, s, args.edge_prob)))
    groups = [head]
    if not args.no_variants:
        variants = Group("random-variants",
                         f"random variants: {VARIANT_TASKS} tasks x {VARIANT_DEVICES} devices, seeds "
                         f"0-{args.seeds - 1}, with memory (slack {MEMORY_SLACK:g}), with every "
                         f"{PIN_EVERY}th task pinned, and both; formulation latency")
        for seed in range(args.seeds):
            for memory, pin in ((True, False), (False, True), (True, True)):
                variants.instances.append(Instance(
                    er_name(VARIANT_TASKS, VARIANT_DEVICES, seed, memory, pin),
                    lambda s=seed, mem=memory, p=pin: er(VARIANT_TASKS, VARIANT_DEVICES, s, args.edge_prob,
                                                         memory=mem, pin=p)))
        groups.append(variants)
    return groups


def twenty_group(args) -> Group:
    group = Group("twenty", f"twenty: Erdos-Renyi DAGs of 20 tasks x 4 devices, edge probability "
                            f"{args.edge_prob:g}, seeds 0-{args.twenty_seeds - 1}; formulation latency")
    for seed in range(args.twenty_seeds):
        group.instances.append(Instance(er_name(20, 4, seed), lambda s=seed: er(20, 4, s, args.edge_prob)))
    return group


def readme_optima() -> dict[str, int] | None:
    """The optima in the table of ``../shared/data/jssp/README.md`` (``None``: no README)."""
    readme = SHARED_JSSP / "README.md"
    if not readme.is_file():
        return None
    found = {}
    for line in readme.read_text().splitlines():
        match = re.match(r"\|\s*(\w+)\s*\|\s*\d+\s*x\s*\d+\s*\|\s*(\d+)\s*\|", line)
        if match:
            found[match.group(1)] = int(match.group(2))
    return found


def jobshop_group(args) -> Group:
    group = Group("jobshop", f"jobshop: formulation jssp; gap to the known optimum; ft10 time limit "
                             f"{args.ft10_time_limit:g} s")
    for name in ["ft06", *LAWRENCE, "ft10"]:
        shipped = ROOT / "examples" / f"{name}.json"
        shared = SHARED_JSSP / name
        if shipped.is_file():
            load = lambda path=shipped: Problem.load(path)
        elif shared.is_file():
            load = lambda path=shared: Problem.from_dict(convert("jssp", path))
        else:
            group.skipped.append(f"{name}: neither examples/{name}.json nor {shared} exists")
            continue
        group.instances.append(Instance(name, load, "jssp", args.ft10_time_limit if name == "ft10" else None,
                                        JSSP_OPTIMA[name]))
    return group


def moirai_group(args) -> Group:
    group = Group("moirai", "moirai: the MOIRAI examples; formulation moirai (transfers wait for ports)")
    for name, path in MOIRAI.items():
        if (ROOT / path).is_file():
            group.instances.append(Instance(name, lambda p=ROOT / path: Problem.load(p), "moirai"))
        else:
            group.skipped.append(f"{name}: {path} does not exist")
    return group


def _sibling(name: str):
    """Another script of benchmarks/ as a module, wherever this one was started from."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


def congestion_group(args) -> Group:
    bench = _sibling("congestion")
    congestion, random_problem = bench.congestion, bench.random_problem
    group = Group("congestion", "congestion: benchmarks/congestion.py's random DAGs, 12 tasks x 3 devices, "
                                f"seeds 0-{args.seeds - 1}; formulation latency+port")
    for seed in range(args.seeds):
        group.instances.append(Instance(f"er12-s{seed}", lambda s=seed: random_problem(12, s, bus=False),
                                        congestion("port")))
    return group


def timeline_group(args) -> Group:
    sets = _sibling("timeline_sets")
    capacity_rule, with_capacity, timeline = sets.capacity_rule, sets.with_capacity, sets.timeline
    deltas_data, lifetime_data = sets.deltas_data, sets.lifetime_data
    group = Group("timeline", f"timeline: benchmarks/timeline.py's random instances, 12 tasks x 3 devices, "
                              f"deltas and lifetime, seeds 0-{args.seeds - 1}, its capacity rule; formulation "
                              f"timeline-MODE; and its DualPipe instances PP = 2, 4 under fdjssp")

    def load(mode: str, seed: int) -> Problem:
        data = (deltas_data if mode == "deltas" else lifetime_data)(12, seed)
        return Problem.from_dict(with_capacity(data, capacity_rule(data, mode)["capacity"]))

    for mode in ("deltas", "lifetime"):
        for seed in range(args.seeds):
            group.instances.append(Instance(f"{mode}12-s{seed}", lambda m=mode, s=seed: load(m, s),
                                            timeline(mode)))
    for pp in (2, 4):
        group.instances.append(Instance(f"dualpipe-pp{pp}", lambda k=pp: Problem.from_dict(
            pipeline(stages=k, microbatches=2 * k)), "fdjssp"))
    return group
