"""Exact solvers compared: HiGHS, CP-SAT and both raced (``auto``) on the ``milp`` method.

Every instance is solved by ``schedkit.solve(problem, "milp", formulation=F, solver=S,
time_limit=T)`` once per solver ``S`` asked for (``highs``: HiGHS embedded; ``cpsat``:
OR-Tools CP-SAT in a worker process; ``auto``: both raced, HiGHS in this process, CP-SAT
beside it). The sets (built in ``benchmarks/exact_sets.py``):

``random``  Random ordered Erdos-Renyi DAGs with communication
            (:func:`schedkit.generators.erdos_renyi` with its default ranges: work 1-10,
            device slowness 0.5-2, noise 0.8-1.25, data size 1-10, bandwidth 2-10, every pair
            of devices linked), edge probability 0.2 (``--edge-prob``; the value the earlier
            version of this script used, so that its instances of these sizes are the same:
            the 40-task, 4-device ``seed 3`` that :mod:`schedkit.milp.subsets` cites is
            ``er40x4-s3`` with ``--seeds 4``), of 25, 30, 35 and 40 tasks on 3 and 4 devices,
            seeds 0-2: the 24 instances ``erNxM-sK`` of the headline table. Then a smaller set of variants (``--no-variants`` skips it),
            30 tasks on 3 devices, seeds 0-2, each in three forms: ``-mem`` (tasks get a
            memory in 1-10, every device the capacity 1.25 x total memory / devices:
            ``memory_slack=1.25``), ``-pin`` (every tenth task, ``t0``, ``t10``, ``t20``, is
            pinned to one device, ``dev0``, ``dev1``, ``dev2`` in turn) and ``-mem+pin``
            (both). Formulation ``latency``.
``jobshop`` ft06, la01-la10 and ft10 (Fisher and Thompson 1963, Lawrence 1984) from
            ``examples/NAME.json``; one missing there is converted at run time from
            ``../shared/data/jssp/NAME`` (``schedkit.importers.convert("jssp", path)``) or,
            failing that, skipped with a line saying so. Formulation ``jssp``; the gap to the
            known optimum is printed (the optima are checked against that folder's README).
            ft10 has its own time limit (``--ft10-time-limit``, 120 s).
``moirai``  ``examples/moirai_example1.json`` and ``examples/googlenet_moirai.json``, formulation
            ``moirai`` (transfers wait for device ports).
``congestion`` The random instances of ``benchmarks/congestion.py`` (imported from it:
            ``random_problem(12, seed, bus=False)``, 12 tasks on 3 devices of similar speed with
            slow links, edge probability 0.25, seeds 0-2) under its ``latency+port``
            formulation (``congestion: {resource: port}``).
``timeline`` The random instances of ``benchmarks/timeline.py`` (imported from it), 12 tasks
            on 3 devices, ``deltas`` and ``lifetime``, seeds 0-2, with its capacity rule (the
            capacity, from HEFT alone, is found while the instance loads, before the clock
            starts), under its ``timeline-MODE`` formulation; and She et al.'s DualPipe
            instances PP = 2 and 4 (M = 2 PP) under ``fdjssp``.
``twenty``  (``--twenty``) 20 tasks on 4 devices, seeds 0-4, as ``random`` otherwise.

Per set, a table of instance, solver, status, makespan, bound, gap to the bound (and the
known optimum and the gap to it for job shops), wall-clock seconds of ``schedkit.solve``
(warm start, model, solve and validation; with ``--worker warm``, the default, each
``cpsat`` or ``auto`` solve starts once the process's spare CP-SAT worker has loaded
OR-Tools, as every solve after a program's first finds it; ``--worker cold`` counts that
load, about 1.1 s, as a single ``schedkit solve`` does) and, for ``auto``, which solver
proved optimality (read from the schedule's ``message``; ``HiGHS`` when it names no race: HiGHS
finished before CP-SAT answered, or before CP-SAT started, a second after HiGHS). Then
per solver: proven / instances, the median seconds (``statistics.median_low``; an
unproven instance counts as the slowest) and the median over instances of the ratio of
its seconds to those of ``cpsat`` alone (seconds as spent: an unproven instance counts at
the time it ran, about the time limit). The issue's targets are printed beside the
measured figures. Two proven optima of one instance that disagree (or one that disagrees
with a job shop's known optimum) are marked ``!`` and make the script exit with status 1
after it has printed everything.

    python benchmarks/exact.py [--solver highs|cpsat|auto ...] [--time-limit 60] [--seeds 3]
                               [--sets random jobshop moirai congestion timeline] [--twenty]
                               [--only PATTERN ...] [--worker warm|cold] [--json FILE]

Progress goes to stderr (a line on a terminal, silent otherwise), tables to stdout.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

import schedkit
from schedkit import Problem, SchedkitError
from schedkit.cpsat.worker import SPARE
from schedkit.milp.portfolio import choose_solver, cpsat_installed
from schedkit.milp.race import default_threads
from schedkit.progress import Progress

from exact_sets import (DEFAULT_SETS, JSSP_OPTIMA, LAWRENCE, SETS, SHARED_JSSP, Group, Instance,  # this folder
                        congestion_group, jobshop_group, moirai_group, random_groups, readme_optima,
                        timeline_group, twenty_group)

SOLVERS = ("highs", "cpsat", "auto")
#: Relative difference below which two proven optima agree (the solvers' optimality gap is 1e-4).
AGREE = 2e-4


# ---------------------------------------------------------------------------- solving

def proved_by(schedule) -> str:
    """Who proved an ``auto`` solve optimal, from its message."""
    if schedule.status != "optimal":
        return "-"
    message = schedule.message or ""
    match = re.search(r"proved optimal by ([A-Za-z\- ]+?)(?:;|$)", message)
    if match:
        return match.group(1).replace("HiGHS and CP-SAT", "both")
    if "their bounds meet" in message:
        return "bounds meet"
    if "CP-SAT alone" in message:
        return "CP-SAT alone"
    if "CP-SAT" not in message:
        return "HiGHS"  # no race in the message: HiGHS finished before CP-SAT answered
    return "?"


def solve_one(problem: Problem, instance: Instance, solver: str, args) -> dict:
    limit = instance.time_limit if instance.time_limit is not None else args.time_limit
    options = {"formulation": instance.formulation, "solver": solver, "time_limit": limit,
               "warm_start": args.warm_start}
    if args.threads is not None:
        options["threads"] = args.threads
    if solver != "highs" and args.worker == "cold":  # the solve starts (and loads) its own worker
        SPARE.close()
    elif solver != "highs":  # the spare worker loaded before the clock starts
        SPARE.wait(timeout=60)
    began = time.perf_counter()
    try:
        schedule = schedkit.solve(problem, "milp", **options)
    except SchedkitError as exc:
        return {"instance": instance.name, "solver": solver, "status": "error", "makespan": None,
                "bound": None, "gap": None, "optimum": instance.optimum, "gap_to_optimum": None,
                "seconds": time.perf_counter() - began, "time_limit": limit,
                "message": str(exc).splitlines()[0], "proved_by": "-"}
    seconds = time.perf_counter() - began
    makespan, bound = schedule.makespan, schedule.bound
    return {"instance": instance.name, "solver": solver, "status": schedule.status, "makespan": makespan,
            "bound": bound, "gap": (makespan - bound) / makespan if makespan and bound is not None else None,
            "optimum": instance.optimum,
            "gap_to_optimum": (makespan - instance.optimum) / instance.optimum
            if makespan is not None and instance.optimum else None,
            "seconds": seconds, "solve_seconds": schedule.solve_seconds, "time_limit": limit,
            "message": schedule.message, "proved_by": proved_by(schedule) if solver == "auto" else "-",
            "tasks": len(problem.tasks), "devices": len(problem.devices), "edges": len(problem.edges)}


def disagreements(runs: list[dict], optimum: float | None) -> list[str]:
    """Why the proven optima of one instance cannot all be right (empty: they agree)."""
    proven = [r for r in runs if r["status"] == "optimal"]
    values = [r["makespan"] for r in proven] + ([optimum] if optimum is not None and proven else [])
    if values and max(values) - min(values) > AGREE * max(abs(v) for v in values):
        return [f"{runs[0]['instance']}: proven " + ", ".join(f"{r['solver']} {r['makespan']:.6g}" for r in proven)
                + (f", known optimum {optimum:g}" if optimum is not None else "")]
    return []


def number(value, width: int, spec: str = ".6g") -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{spec}}"


def percent(value, width: int = 7) -> str:
    return f"{'-':>{width}}" if value is None else f"{100 * value:>{width - 1}.2f}%"


def run_group(group: Group, solvers: list[str], args, problems: list[str]) -> None:
    print(f"\n{group.title}")
    for line in group.skipped:
        print(f"  skipped: {line}")
    if not group.instances:
        print("  (no instance)")
        return
    jobshop = group.key == "jobshop"
    header = (f"{'instance':<22} {'solver':<6} {'status':<11} {'makespan':>10} {'bound':>10} {'gap':>7}"
              + (f" {'optimum':>8} {'to opt':>7}" if jobshop else "") + f" {'seconds':>8}  proved by")
    print(header)
    with Progress(len(group.instances) * len(solvers), group.key) as bar:
        for instance in group.instances:
            try:
                problem = instance.load()
            except SchedkitError as exc:
                bar.update(bar.done + len(solvers))
                bar.close()
                group.skipped.append(f"{instance.name}: {str(exc).splitlines()[0]}")
                print(f"{instance.name:<22} skipped: {str(exc).splitlines()[0]}")
                continue
            runs = []
            for solver in solvers:
                bar.update(bar.done, note=f"{instance.name} {solver}")
                run = solve_one(problem, instance, solver, args)
                bar.update()
                runs.append(run)
            wrong = disagreements(runs, instance.optimum)
            problems.extend(wrong)
            bar.close()
            for run in runs:
                run["disagrees"] = bool(wrong) and run["status"] == "optimal"
                print(f"{run['instance']:<22} {run['solver']:<6} {run['status']:<11} "
                      f"{number(run['makespan'], 10)} {number(run['bound'], 10)} {percent(run['gap'])}"
                      + (f" {number(run['optimum'], 8, 'g')} {percent(run['gap_to_optimum'])}"
                         if jobshop else "")
                      + f" {run['seconds']:>8.2f}  {run['proved_by']}" + (" !" if run["disagrees"] else "")
                      + (f"  ({run['message']})" if run["status"] == "error" else ""), flush=True)
            group.runs.extend(runs)


# ---------------------------------------------------------------------------- summary

def median_proven(runs: list[dict]) -> float:
    """Median seconds, an unproven instance counting as the slowest (``math.inf``)."""
    spent = [r["seconds"] if r["status"] == "optimal" else math.inf for r in runs]
    return statistics.median_low(spent) if spent else math.nan


def shown_seconds(value: float, limit: str) -> str:
    if value == math.inf:
        return f"> {limit}"
    return "-" if math.isnan(value) else f"{value:.2f}"


def summarise(group: Group, solvers: list[str], args) -> None:
    if not group.runs:
        return
    by = {(r["instance"], r["solver"]): r for r in group.runs}
    names = list(dict.fromkeys(r["instance"] for r in group.runs))
    limits = sorted({r["time_limit"] for r in group.runs})
    limit = "/".join(f"{v:g}" for v in limits) + " s"
    print(f"summary of {group.key}: proven / instances, median seconds (an unproven instance counts "
          f"as the slowest), median per-instance ratio of seconds to cpsat alone (seconds as spent)")
    print(f"  {'solver':<6} {'proven':>9} {'median s':>10} {'vs cpsat':>9}")
    for solver in solvers:
        runs = [by[(n, solver)] for n in names if (n, solver) in by]
        proven = sum(r["status"] == "optimal" for r in runs)
        median = median_proven(runs)
        ratios = [by[(n, solver)]["seconds"] / by[(n, "cpsat")]["seconds"] for n in names
                  if solver != "cpsat" and (n, solver) in by and (n, "cpsat") in by
                  and by[(n, "cpsat")]["status"] != "error" and by[(n, solver)]["status"] != "error"
                  and by[(n, "cpsat")]["seconds"] > 0]
        ratio = statistics.median(ratios) if ratios else None
        group.summary.append({"solver": solver, "proven": proven, "instances": len(runs),
                              "median_seconds": None if median == math.inf or math.isnan(median) else median,
                              "median_unproven": median == math.inf, "median_ratio_to_cpsat": ratio,
                              "ratios_to_cpsat": ratios})
        print(f"  {solver:<6} {f'{proven}/{len(runs)}':>9} {shown_seconds(median, limit):>10} "
              f"{'-' if ratio is None else f'{ratio:.2f}x':>9}")
    for target in targets(group, by, names, solvers):
        group.targets.append(target)
        print(f"  target: {target['target']}\n          measured: {target['measured']}")


def targets(group: Group, by: dict, names: list[str], solvers: list[str]) -> list[dict]:
    stats = {s["solver"]: s for s in group.summary}
    found = []
    if group.key == "random":
        if "auto" in stats and "cpsat" in stats:
            auto, cp = stats["auto"], stats["cpsat"]
            ratio = auto["median_ratio_to_cpsat"]
            measured = (f"auto proves {auto['proven']}/{auto['instances']}, cpsat {cp['proven']}/{cp['instances']}; "
                        f"median ratio auto/cpsat {'-' if ratio is None else f'{ratio:.2f}x'}")
        else:
            measured = "needs --solver auto and --solver cpsat"
        found.append({"target": "auto proves at least as many of the 24 random instances as CP-SAT alone, "
                                "median time within 1.3x of CP-SAT alone", "measured": measured})
    elif group.key == "jobshop":
        parts = []
        for solver in solvers:
            lawrence = [by[(n, solver)] for n in LAWRENCE if (n, solver) in by]
            fast = sum(r["status"] == "optimal" and r["seconds"] <= 10 for r in lawrence)
            slowest = max((r["seconds"] for r in lawrence), default=None)
            ft10 = by.get(("ft10", solver))
            parts.append(f"{solver}: la01-la10 " + (f"{fast}/{len(lawrence)} proven within 10 s (slowest "
                                                     f"{slowest:.2f} s)" if lawrence else "not run")
                         + (f", ft10 {ft10['status']} in {ft10['seconds']:.2f} s" if ft10 else ", ft10 not run"))
        found.append({"target": "la01-la10 each proven within 10 s; ft10 proven within 120 s",
                      "measured": "; ".join(parts)})
    elif group.key == "twenty":
        auto = stats.get("auto")
        if auto:
            median = auto["median_seconds"]
            measured = (f"auto median {'> time limit (unproven)' if auto['median_unproven'] else f'{median:.2f} s'}"
                        f" over {auto['instances']} instances")
        else:
            measured = "needs --solver auto"
        found.append({"target": "20x4 random median at or below 1 s with auto", "measured": measured})
    return found


# ---------------------------------------------------------------------------- main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", action="append", choices=SOLVERS,
                        help="a solver to measure; give it several times (default: highs, cpsat and auto)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    parser.add_argument("--ft10-time-limit", type=float, default=120.0,
                        help="seconds for ft10, whose target is 120 s (default 120)")
    parser.add_argument("--seeds", type=int, default=3,
                        help="seeds per random size, variant and congestion instance (default 3)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(DEFAULT_SETS),
                        help="instance sets (default: random jobshop moirai congestion timeline)")
    parser.add_argument("--twenty", action="store_true", help="also the 20 tasks x 4 devices set")
    parser.add_argument("--twenty-seeds", type=int, default=5, help="seeds of --twenty (default 5)")
    parser.add_argument("--only", nargs="+", metavar="PATTERN",
                        help="only the instances whose name matches a pattern (fnmatch: ft06, 'la0*', "
                             "'er25x3-*')")
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 30, 35, 40],
                        help="tasks of the random set (default 25 30 35 40)")
    parser.add_argument("--devices", type=int, nargs="+", default=[3, 4],
                        help="devices of the random set (default 3 4)")
    parser.add_argument("--edge-prob", type=float, default=0.2,
                        help="edge probability of the random sets (default 0.2)")
    parser.add_argument("--no-variants", action="store_true",
                        help="skip the memory and pinning variants of the random set")
    parser.add_argument("--warm-start", default="auto", help="passed to the milp method (default auto)")
    parser.add_argument("--threads", type=int, default=None,
                        help="passed to the milp method (default: its own; auto needs 2 to race)")
    parser.add_argument("--worker", choices=("warm", "cold"), default="warm",
                        help="warm (default): each cpsat/auto solve finds the process's spare CP-SAT worker "
                             "loaded, as every solve after the first of a program does; cold: each starts "
                             "its own, as one `schedkit solve` does (loading OR-Tools counts)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every figure to this file")
    args = parser.parse_args()
    solvers = list(dict.fromkeys(args.solver or SOLVERS))
    wanted = list(dict.fromkeys(args.sets + (["twenty"] if args.twenty else [])))

    threads = args.threads or default_threads()
    meaning = choose_solver("auto", threads)
    print(f"solvers {', '.join(solvers)}; time limit {args.time_limit:g} s; OR-Tools "
          f"{'installed' if cpsat_installed() else 'not installed'}; {threads} thread(s): auto "
          + ("races HiGHS and CP-SAT" if meaning == "auto" else "means HiGHS alone")
          + f"; CP-SAT worker {args.worker} ({'loaded before' if args.worker == 'warm' else 'loaded within'} "
            f"each timed solve)")
    optima_note = None
    if "jobshop" in wanted:
        readme = readme_optima()
        if readme is None:
            optima_note = f"known optima not checked: no {SHARED_JSSP / 'README.md'}"
        else:
            differ = [f"{n} {v} here, {readme[n]} there" for n, v in JSSP_OPTIMA.items()
                      if n in readme and readme[n] != v]
            missing = [n for n in JSSP_OPTIMA if n not in readme]
            optima_note = ("known optima agree with ../shared/data/jssp/README.md" if not differ else
                           "known optima DIFFER from ../shared/data/jssp/README.md: " + "; ".join(differ)) \
                + (f" (not listed there: {', '.join(missing)})" if missing else "")
        print(optima_note)

    builders = {"random": random_groups, "jobshop": lambda a: [jobshop_group(a)],
                "moirai": lambda a: [moirai_group(a)], "congestion": lambda a: [congestion_group(a)],
                "twenty": lambda a: [twenty_group(a)], "timeline": lambda a: [timeline_group(a)]}
    groups = [group for key in wanted for group in builders[key](args)]
    if args.only:
        for group in groups:
            group.instances = [i for i in group.instances
                               if any(fnmatch.fnmatchcase(i.name, p) for p in args.only)]
            group.skipped = [s for s in group.skipped
                             if any(fnmatch.fnmatchcase(s.split(":")[0], p) for p in args.only)]
        groups = [g for g in groups if g.instances or g.skipped]

    problems: list[str] = []
    for group in groups:
        run_group(group, solvers, args, problems)
        summarise(group, solvers, args)
    if problems:
        print("\nproven optima that disagree:")
        for line in problems:
            print(f"  {line}")

    if args.json:
        figures = {"settings": {"solvers": solvers, "time_limit": args.time_limit,
                                "ft10_time_limit": args.ft10_time_limit, "seeds": args.seeds,
                                "sets": wanted, "only": args.only, "sizes": args.sizes, "devices": args.devices,
                                "edge_prob": args.edge_prob, "variants": not args.no_variants,
                                "twenty_seeds": args.twenty_seeds, "warm_start": args.warm_start,
                                "threads": threads, "auto_means": meaning, "ortools": cpsat_installed()},
                   "jssp_optima": JSSP_OPTIMA, "jssp_optima_check": optima_note,
                   "sets": {g.key: {"title": g.title, "skipped": g.skipped, "runs": g.runs,
                                    "summary": g.summary, "targets": g.targets} for g in groups},
                   "disagreements": problems}
        args.json.write_text(json.dumps(figures, indent=1, default=str) + "\n")
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
