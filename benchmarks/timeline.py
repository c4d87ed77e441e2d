"""Memory over time: exact solves under binding ``memory_timeline`` rows, and She et al.'s pipelines.

(a) Random instances on 3 devices of similar speed (``schedkit.generators.erdos_renyi``, edge
    probability 0.25, slowness 0.8-1.25, its default data sizes and bandwidths), solved by the
    ``milp`` method under ``timeline-MODE``: assignment, placement, precedence (with
    communication), no_overlap (device) and ``memory_timeline: {mode: MODE}``, i.e. the
    ``latency`` preset with the memory timeline in place of static memory (placement is
    needed for the collocations below). Memory amounts are whole numbers.

    ``deltas`` (training): N/2 forward tasks ``F<k>`` are an ER DAG of N/2 tasks; each has
    a backward ``B<k>`` that takes twice its time, collocated with it (``colocate``), after
    ``F<k>`` and after the backward of every successor of ``F<k>`` (the gradients flow
    back; each backward edge carries the forward edge's size). ``F<k>`` holds weights
    0-2 and takes an activation ``a`` in 2-6 when it starts; ``B<k>`` releases ``-a`` when it
    ends, so every device's level rises and falls back to its weights. N must be even.
    ``lifetime`` (inference): an ER DAG of N tasks; a task's output lives as the block says,
    its size the task's output size (1-10) rounded up; weights 0-2.

    Capacity (every device the same), a fixed rule that never looks at the MILP: P0 is the
    peak memory level (over devices and time, in the instance's mode) of HEFT's schedule
    without the timeline (``heft``, ``-f latency``). The capacity is lowered one unit at a
    time from P0 - 1 while HEFT under the timeline (``-f timeline-MODE``) still finds a
    schedule; L is the last capacity at which it did (that schedule shows every capacity
    >= L is feasible). The capacity is the midpoint ``(L + P0 - 1) // 2`` of [L, P0 - 1]:
    feasible, and HEFT's timeline-free schedule exceeds it. (When HEFT finds nothing at
    P0 - 1, the capacity is P0 - 1, with no witness that it is feasible.) Whether the
    timeline then binds the optimum is measured, not assumed: the MILP without it (``-f
    latency``, same problem, same solver and time limit) gives ``free``; ``binds`` is
    ``yes`` when the timeline's bound exceeds ``free`` (proven longer), ``no`` when the
    timeline's schedule is no longer than ``free``, ``?`` otherwise.

    Per instance: mode, tasks, seed, capacity, status, makespan, bound, gap, seconds (of
    ``schedkit.solve``), free, binds; per (mode, size): proven and binding / instances, the
    median seconds to a proof (``median_low``, an unproven instance the slowest) over all and
    over the binding ones; the target: 12 tasks, binding ``deltas``, median proof < 10 s.

(b) She et al.'s DualPipe instances (``schedkit.generators.pipeline``, PP = 2, 4, 8 stages,
    M = 2 PP micro-batches, Tf = Ti = Tw = 1, DualPipe's memory bound) under ``-f fdjssp``:
    DualPipe's own schedule (``dualpipe_schedule``), HEFT and the MILP, with status,
    makespan, bound, bubble (``makespan - 3M``, every device's idle time) and seconds. The
    MILP's time limit is ``--pipeline-time-limit`` (60 s) up to PP = 4 and
    ``--long-time-limit`` (600 s) above PP = 4; when PP = 4 ends within its limit without
    the halved bubble and without a bound that excludes it, it is solved again for the rest
    of the long limit, both solves taking at most 600 s together (``--no-follow-up`` skips
    that). Targets: PP = 2 proven optimal; PP = 4 a bubble no larger than DualPipe's within
    60 s, and the halved bubble PP/2 - 1 within 10 minutes (or a bound that proves it
    impossible). HEFT may find no memory-feasible schedule: the line says so.

Every schedule printed is validated against the blocks of its formulation
(``schedule.violations(problem, formulation.blocks)``); an invalid one, or one that
``schedkit.solve`` itself refused as invalid (``InvalidScheduleError``, status ``INVALID`` in
the table), is reported on a line starting ``!!! INVALID`` and makes the script exit with
status 1 after printing everything.

    python benchmarks/timeline.py [--sizes 10 12 14 16] [--seeds 5] [--modes deltas lifetime]
                                  [--solver auto|highs|cpsat] [--time-limit 60]
                                  [--pp 2 4 8] [--pipeline-time-limit 60] [--long-time-limit 600]
                                  [--no-follow-up] [--skip-random] [--skip-pipeline] [--json FILE]

Progress goes to stderr (a line on a terminal, silent otherwise), tables to stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import schedkit
from schedkit import InvalidScheduleError, Problem, Schedule, SchedkitError, get_formulation
from schedkit.generators import dualpipe_schedule, pipeline
from schedkit.generators.pipeline import bubble
from schedkit.progress import Progress
from timeline_sets import (INVALID, MODES, capacity_rule, deltas_data, lifetime_data, loud, timeline,
                           with_capacity)

TOL = 2e-4  # relative: the solvers prove optimality within a gap of 1e-4


def checked(schedule: Schedule, problem: Problem, formulation, what: str) -> bool:
    """Validate ``schedule`` against ``formulation``'s blocks; a loud line when it breaks them."""
    if not schedule.tasks:
        return True
    wrong = schedule.violations(problem, get_formulation(formulation).blocks)
    if wrong:
        loud(what, wrong)
    return not wrong


def attempt(problem: Problem, method: str, what: str, **options) -> tuple[Schedule | None, float, str]:
    """``schedkit.solve``: the schedule (``None`` on an error, loudly when refused as invalid),
    the seconds and the error's first line."""
    began = time.perf_counter()
    try:
        return schedkit.solve(problem, method, **options), time.perf_counter() - began, ""
    except InvalidScheduleError as exc:
        loud(what, exc.violations)
        return None, time.perf_counter() - began, "INVALID: " + str(exc).splitlines()[0]
    except SchedkitError as exc:
        return None, time.perf_counter() - began, str(exc).splitlines()[0]


def num(value, width: int, spec: str = ".5g") -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{spec}}"


def binds(schedule: Schedule, free: Schedule) -> str:
    if schedule.makespan is None or free.makespan is None:
        return "?"
    if schedule.bound is not None and schedule.bound > free.makespan * (1 + TOL):
        return "yes"
    return "no" if schedule.makespan <= free.makespan * (1 + TOL) else "?"


def random_row(mode: str, n: int, seed: int, args) -> dict:
    """One instance: the capacity rule, the solve without the timeline and the one with it."""
    data = (deltas_data if mode == "deltas" else lifetime_data)(n, seed)
    rule = capacity_rule(data, mode)
    problem = Problem.from_dict(with_capacity(data, rule["capacity"]))
    row = {"mode": mode, "tasks": n, "seed": seed, "instance": problem.name, **rule}
    options = {"solver": args.solver, "time_limit": args.time_limit}
    free, row["free_seconds"], message = attempt(problem, "milp", f"{problem.name} milp -f latency",
                                                 formulation="latency", **options)
    if free is not None:
        checked(free, problem, "latency", f"{problem.name} without the timeline")
    row.update(free=free and free.makespan, free_status=free.status if free else message)
    schedule, seconds, message = attempt(problem, "milp", f"{problem.name} milp -f timeline-{mode}",
                                         formulation=timeline(mode), **options)
    if schedule is None:
        return {**row, "status": "INVALID" if message.startswith("INVALID") else "error",
                "message": message, "seconds": seconds}
    gap = ((schedule.makespan - schedule.bound) / schedule.makespan
           if schedule.makespan and schedule.bound is not None else None)
    return {**row, "status": schedule.status, "makespan": schedule.makespan, "bound": schedule.bound,
            "gap": gap, "seconds": seconds, "binds": binds(schedule, free) if free else "?",
            "valid": checked(schedule, problem, timeline(mode), f"{problem.name} {mode}")}


def median_proof(runs: list[dict]) -> float | None:
    """Median seconds to a proof, an unproven instance counting as the slowest (``inf``)."""
    spent = [r["seconds"] if r["status"] == "optimal" else math.inf for r in runs]
    return statistics.median_low(spent) if spent else None


def shown(median: float | None, args) -> str:
    return "-" if median is None else f"> {args.time_limit:g}" if median == math.inf else f"{median:.2f}"


def random_cases(args, runs: list, summary: list) -> None:
    print(f"(a) random instances on 3 devices with a binding memory timeline; solver {args.solver}, "
          f"time limit {args.time_limit:g} s; free = makespan without the timeline (-f latency)")
    print(f"{'mode':<8} {'tasks':>5} {'seed':>4} {'capacity':>8} {'status':<10} {'makespan':>9} "
          f"{'bound':>9} {'gap':>7} {'seconds':>8} {'free':>9}  {'binds':>5}")
    cases = [(mode, n, seed) for mode in args.modes for n in args.sizes for seed in args.seeds]
    with Progress(len(cases), "random") as bar:
        for mode, n, seed in cases:
            bar.update(bar.done, note=f"{mode} {n} tasks seed {seed}")
            head = f"{mode:<8} {n:>5} {seed:>4}"
            row = None if mode == "deltas" and n % 2 else random_row(mode, n, seed, args)
            bar.update()
            bar.close()
            if row is None:
                print(f"{head} skipped: deltas instances need an even number of tasks")
                continue
            runs.append(row)
            if row["status"] in ("error", "INVALID"):
                print(f"{head} {row['capacity']:>8g} {row['status']}: "
                      f"{row['message'].removeprefix('INVALID: ')}", flush=True)
                continue
            gap = f"{'-':>7}" if row["gap"] is None else f"{100 * row['gap']:>6.2f}%"
            star = " " if row["free_status"] == "optimal" else "*"
            print(f"{head} {row['capacity']:>8g} {row['status']:<10} {num(row['makespan'], 9)} "
                  f"{num(row['bound'], 9)} {gap} {row['seconds']:>8.2f} {num(row['free'], 9)}{star} "
                  f"{row['binds']:>5}", flush=True)
    print("  (free*: the solve without the timeline was not proven optimal)")
    print("summary: proven / instances, binding / instances, median seconds to a proof "
          "(an unproven instance counts as the slowest)")
    for mode in args.modes:
        for n in args.sizes:
            mine = [r for r in runs if r["mode"] == mode and r["tasks"] == n]
            if not mine:
                continue
            median, tight = median_proof(mine), median_proof([r for r in mine if r.get("binds") == "yes"])
            entry = {"mode": mode, "tasks": n, "instances": len(mine),
                     "proven": sum(r["status"] == "optimal" for r in mine),
                     "binding": sum(r.get("binds") == "yes" for r in mine),
                     "median_seconds": median, "median_seconds_binding": tight}  # inf: unproven
            summary.append(entry)
            print(f"  {mode:<8} {n:>3} tasks: proven {entry['proven']}/{len(mine)}, binding "
                  f"{entry['binding']}/{len(mine)}, median {shown(median, args)} s, over the binding "
                  f"ones {shown(tight, args)} s")
    twelve = next((s for s in summary if s["mode"] == "deltas" and s["tasks"] == 12), None)
    if twelve is None:
        measured = "not run (needs --modes deltas and --sizes 12)"
    else:
        measured = (f"{shown(twelve['median_seconds_binding'], args)} s over the binding instances, "
                    f"{shown(twelve['median_seconds'], args)} s over all (proven {twelve['proven']}/"
                    f"{twelve['instances']}, binding {twelve['binding']}/{twelve['instances']})")
    print(f"target: random 12 tasks x 3 devices, deltas: median time to proof (target < 10 s): {measured}")


def bubbled(makespan: float | None, microbatches: int) -> str:
    return "-" if makespan is None else format(bubble(makespan, microbatches), "g")


def pipeline_row(pp: int, method: str, schedule: Schedule | None, seconds: float, problem: Problem,
                 limit: float | None = None, message: str | None = None) -> dict:
    m = 2 * pp
    if schedule is None:
        print(f"{pp:>3} {m:>3} {method:<8} {num(limit, 6, '.4g')} no schedule: {message}", flush=True)
        return {"pp": pp, "microbatches": m, "method": method, "status": "none", "message": message,
                "seconds": seconds}
    valid = checked(schedule, problem, "fdjssp", f"{problem.name} {method}")
    shown = bubble(schedule.makespan, m) if schedule.makespan is not None else None
    print(f"{pp:>3} {m:>3} {method:<8} {num(limit, 6, '.4g')} {schedule.status:<10} "
          f"{num(schedule.makespan, 9)} {num(schedule.bound, 9)} {num(shown, 7)} {seconds:>8.2f}",
          flush=True)
    return {"pp": pp, "microbatches": m, "method": method, "time_limit": limit, "status": schedule.status,
            "makespan": schedule.makespan, "bound": schedule.bound, "bubble": shown, "seconds": seconds,
            "valid": valid}


def pipeline_cases(args, runs: list, targets: list) -> None:
    print(f"\n(b) She et al.'s DualPipe instances (M = 2 PP, Tf = Ti = Tw = 1) under -f fdjssp; "
          f"solver {args.solver}; bubble = makespan - 3M; DualPipe's bubble PP - 2, halved PP/2 - 1")
    print(f"{'PP':>3} {'M':>3} {'method':<8} {'limit':>6} {'status':<10} {'makespan':>9} {'bound':>9} "
          f"{'bubble':>7} {'seconds':>8}")
    for pp in args.pp:
        problem = Problem.from_dict(pipeline(stages=pp, microbatches=2 * pp))
        began = time.perf_counter()
        dual = Schedule.model_validate(dualpipe_schedule(stages=pp, microbatches=2 * pp))
        runs.append(pipeline_row(pp, "dualpipe", dual, time.perf_counter() - began, problem))
        heft, seconds, message = attempt(problem, "heft", f"{problem.name} heft", formulation="fdjssp")
        runs.append(pipeline_row(pp, "heft", heft, seconds, problem, message=message))
        limit = args.pipeline_time_limit if pp <= 4 else args.long_time_limit
        halved = 3 * 2 * pp + pp / 2 - 1  # makespan of the halved bubble
        found = []  # (schedule, seconds) of each MILP solve
        for limit_now in (limit, args.long_time_limit):
            if found:  # the follow-up: PP = 4 without the halved bubble and without a proof
                last, spent = found[-1]
                limit_now -= spent  # both solves together within the long limit
                if (pp != 4 or not args.follow_up or limit_now <= 1 or last.makespan is None
                        or last.makespan <= halved + 1e-6 or (last.bound or 0.0) > halved + 1e-6):
                    break
            milp, seconds, message = attempt(problem, "milp", f"{problem.name} milp", formulation="fdjssp",
                                             solver=args.solver, time_limit=limit_now)
            runs.append(pipeline_row(pp, "milp", milp, seconds, problem, limit_now, message))
            if milp is None:
                break
            found.append((milp, seconds))
        if not found:
            continue
        first, seconds = found[0]
        if pp == 2:
            targets.append(("PP=2 proven optimal", f"MILP {first.status} in {seconds:.2f} s, bubble "
                            f"{bubbled(first.makespan, 4)} (DualPipe {bubbled(dual.makespan, 4)})"))
        if pp == 4:
            targets.append(("PP=4 bubble <= DualPipe's (2) within 60 s",
                            f"bubble {bubbled(first.makespan, 8)} ({first.status}) after {seconds:.2f} s "
                            f"(time limit {limit:g} s)"))
            best = min((s.makespan for s, _ in found if s.makespan is not None), default=None)
            proof = max(s.bound or 0.0 for s, _ in found)
            targets.append((f"PP=4 halved bubble (1) within 600 s, or a bound > {halved:g} proving it "
                            f"impossible", f"best bubble {bubbled(best, 8)}, best bound {proof:.5g}, "
                            f"{sum(t for _, t in found):.2f} s in {len(found)} solve(s)"))
    for target, measured in targets:
        print(f"target: {target}\n        measured: {measured}")


def plain(value):
    """``value`` for JSON: an infinite median (unproven) as the string ``"unproven"``."""
    if isinstance(value, (dict, list)):
        return {k: plain(v) for k, v in value.items()} if isinstance(value, dict) else list(map(plain, value))
    return "unproven" if value == math.inf else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 12, 14, 16],
                        help="tasks (default 10 12 14 16)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per size and mode (default 5)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--solver", default="auto", choices=("auto", "highs", "cpsat"))
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds per random solve (default 60)")
    parser.add_argument("--pp", type=int, nargs="+", default=[2, 4, 8],
                        help="pipeline stages (default 2 4 8)")
    parser.add_argument("--pipeline-time-limit", type=float, default=60.0,
                        help="MILP seconds for PP <= 4 (default 60)")
    parser.add_argument("--long-time-limit", type=float, default=600.0,
                        help="MILP seconds for PP >= 8 and the PP = 4 follow-up (default 600)")
    parser.add_argument("--no-follow-up", dest="follow_up", action="store_false",
                        help="do not solve PP = 4 again with --long-time-limit")
    parser.add_argument("--skip-random", action="store_true")
    parser.add_argument("--skip-pipeline", action="store_true")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every figure to this file")
    args = parser.parse_args()
    args.seeds = list(range(args.seeds))
    for pp in args.pp:
        if pp < 2 or pp % 2:
            parser.error(f"--pp: needs even stage counts >= 2, got {pp}")
    figures = {"settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
               "random": [], "random_summary": [], "pipeline": [], "pipeline_targets": []}
    if not args.skip_random:
        random_cases(args, figures["random"], figures["random_summary"])
    if not args.skip_pipeline:
        targets: list = []
        pipeline_cases(args, figures["pipeline"], targets)
        figures["pipeline_targets"] = [{"target": t, "measured": m} for t, m in targets]
    figures["invalid"] = INVALID
    if INVALID:
        print(f"\n!!! {len(INVALID)} INVALID schedule(s):")
        for line in INVALID:
            print(f"!!!   {line}")
    if args.json:
        args.json.write_text(json.dumps(plain(figures), indent=1, default=str) + "\n")
    if INVALID:
        sys.exit(1)


if __name__ == "__main__":
    main()
