"""Communication as tasks: exact solves under port and channel congestion, and the MOIRAI tables.

(a) Random heterogeneous DAGs (``schedkit.generators.erdos_renyi``, edge probability 0.25)
    of 10-16 tasks on 3 fully linked devices of similar speed (slowness 0.8-1.25, so that
    running in parallel pays) with slow links (bandwidth 1-3 for data of size 1-10: a
    transfer takes about half a task), so that transfers matter. Each is solved exactly
    under ``congestion: {resource: port}`` (every device sends one transfer at a time and
    receives one at a time) and under ``congestion: {resource: channel}`` with every link on
    one shared channel (a bus). Printed: status, makespan, bound, seconds, the optimum
    without congestion (``free``) and, per size, the median time to a proven optimum.
(b) The five MOIRAI tables (``data/moirai``, converted by ``schedkit convert moirai``) under
    ``-f moirai``: HEFT and the MILP (time limit per table), makespan, bound, gap, seconds,
    against the best single device (every task on it, one after the other).

    python benchmarks/congestion.py [--sizes 10 12 14 16] [--seeds 5] [--time-limit 120]
                                    [--moirai-time-limit S] [--skip-random] [--skip-moirai]
                                    [--tables example-1 GoogLeNet ...] [--json FILE]

Progress goes to stderr (a line on a terminal, silent otherwise), tables to stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import schedkit
from schedkit import Problem
from schedkit.generators import erdos_renyi
from schedkit.importers import convert
from schedkit.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
TABLES = ["example-1", "GoogLeNet", "inceptionv4", "transformer", "yolov5x"]
#: The issue's targets: example-1 proven, GoogLeNet a schedule and a bound within 60 s; 300 s else.
LIMITS = {"example-1": 60.0, "GoogLeNet": 60.0}


def congestion(resource: str) -> dict:
    """The latency formulation with transfers as tasks contending for ``resource``."""
    return {"name": f"latency+{resource}", "objective": "makespan",
            "blocks": ["assignment", "placement", {"precedence": {"communication": True}},
                       {"no_overlap": {"encoding": "device"}}, "memory", "channels",
                       {"congestion": {"resource": resource}}]}


def random_problem(tasks: int, seed: int, bus: bool) -> Problem:
    data = erdos_renyi(tasks, 0.25, 3, seed=seed, spread=(0.8, 1.25), bandwidth=(1.0, 3.0),
                       name=f"er{tasks}-s{seed}" + ("-bus" if bus else ""))
    if bus:
        for link in data["links"]:
            link["channel"] = "bus"
    return Problem.from_dict(data)


def timed(problem, method, **options):
    began = time.perf_counter()
    schedule = schedkit.solve(problem, method, **options)
    return schedule, time.perf_counter() - began


def best_single_device(problem: Problem) -> tuple[str, float] | None:
    """The device that runs every task fastest one after another (``None``: no such device)."""
    totals = [(sum(table[d] for table in problem.durations), problem.devices[d])
              for d in range(len(problem.devices)) if all(d in table for table in problem.durations)]
    if not totals:
        return None
    total, name = min(totals)
    return name, total


def random_cases(args, figures: list) -> None:
    print(f"(a) random DAGs on 3 devices, edge probability 0.25, slow links; MILP time limit "
          f"{args.time_limit:g} s")
    print(f"{'instance':<14} {'congestion':<8} {'status':<9} {'makespan':>9} {'bound':>9} "
          f"{'seconds':>8} {'free':>8}")
    cases = [(n, seed, resource) for n in args.sizes for seed in range(args.seeds)
             for resource in ("port", "channel")]
    times: dict[tuple[int, str], list[float]] = {}
    with Progress(len(cases), "random") as bar:
        for n, seed, resource in cases:
            problem = random_problem(n, seed, bus=resource == "channel")
            free, _ = timed(problem, "milp", time_limit=args.time_limit)
            schedule, seconds = timed(problem, "milp", formulation=congestion(resource),
                                      time_limit=args.time_limit)
            bar.update(note=f"{problem.name} {resource}")
            print(f"{problem.name:<14} {resource:<8} {schedule.status:<9} {schedule.makespan:>9.4g} "
                  f"{schedule.bound or float('nan'):>9.4g} {seconds:>8.2f} {free.makespan:>8.4g}")
            figures.append({"case": problem.name, "resource": resource, "status": schedule.status,
                            "makespan": schedule.makespan, "bound": schedule.bound,
                            "seconds": seconds, "uncongested": free.makespan})
            # an unproven instance counts as slower than every proven one
            times.setdefault((n, resource), []).append(seconds if schedule.status == "optimal" else math.inf)
    print("median seconds to a proven optimum, an unproven instance counting as the slowest "
          "(proven / instances):")
    for n in args.sizes:
        for resource in ("port", "channel"):
            spent = times.get((n, resource), [])
            median = statistics.median_low(spent) if spent else math.nan
            shown = f"> {args.time_limit:g}" if median == math.inf else f"{median:.2f}"
            proven = sum(1 for t in spent if t < math.inf)
            print(f"  {n} tasks, {resource:<8} {shown:>8}  ({proven}/{len(spent)})")


def moirai_cases(args, figures: list) -> None:
    print("\n(b) MOIRAI tables under -f moirai (port congestion); MILP time limit "
          + (f"{args.moirai_time_limit:g} s" if args.moirai_time_limit else
             "60 s for example-1 and GoogLeNet, 300 s for the others"))
    print(f"{'table':<12} {'tasks':>6} {'method':<6} {'status':<9} {'makespan':>9} {'bound':>9} "
          f"{'gap':>7} {'seconds':>8} {'single':>8} {'speed-up':>8}")
    with Progress(2 * len(args.tables), "moirai") as bar:
        for table in args.tables:
            began = time.perf_counter()
            problem = Problem.from_dict(convert("moirai", ROOT / "data" / "moirai" / f"{table}.xls"))
            converted = time.perf_counter() - began
            single = best_single_device(problem)
            limit = args.moirai_time_limit or LIMITS.get(table, 300.0)
            for method, options in (("heft", {}), ("milp", {"time_limit": limit})):
                schedule, seconds = timed(problem, method, formulation="moirai", **options)
                bar.update(note=f"{table} {method}")
                bound = schedule.bound
                gap = (schedule.makespan - bound) / schedule.makespan if bound else float("nan")
                ratio = single[1] / schedule.makespan if single else float("nan")
                print(f"{table:<12} {len(problem.tasks):>6} {method:<6} {schedule.status:<9} "
                      f"{schedule.makespan:>9.4g} {bound or float('nan'):>9.4g} {100 * gap:>6.2f}% "
                      f"{seconds:>8.2f} {single[1] if single else float('nan'):>8.4g} {ratio:>7.2f}x")
                figures.append({"table": table, "tasks": len(problem.tasks), "method": method,
                                "status": schedule.status, "makespan": schedule.makespan,
                                "bound": bound, "seconds": seconds, "convert_seconds": converted,
                                "single_device": single})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 12, 14, 16])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--moirai-time-limit", type=float, default=None,
                        help="one MILP time limit for every table (default: 60 s for example-1 and "
                             "GoogLeNet, 300 s for the others)")
    parser.add_argument("--tables", nargs="+", default=TABLES, choices=TABLES)
    parser.add_argument("--skip-random", action="store_true")
    parser.add_argument("--skip-moirai", action="store_true")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args()
    figures: dict[str, list] = {"random": [], "moirai": []}
    if not args.skip_random:
        random_cases(args, figures["random"])
    if not args.skip_moirai:
        moirai_cases(args, figures["moirai"])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
