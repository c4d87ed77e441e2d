"""Benchmark every registered method: small instances against the optimum, a large graph against the bound.

(a) Random ordered Erdos-Renyi DAGs of 14 tasks on 3 heterogeneous devices
    (:func:`schedkit.generators.erdos_renyi`): every method's makespan divided by the
    optimum of ``schedkit.solve(problem, "milp")``; the table gives the geometric mean and
    the worst ratio, and how often the method found an optimum.
(b) A layered graph after Mayer et al. (2017) (:func:`schedkit.generators.layered`;
    by default 40 levels x 100 tasks, about 40 000 edges, 50 devices): every method but
    ``milp``, makespan divided by :func:`schedkit.problem.bounds.lower_bound`, with wall-clock
    seconds (``solve`` including the validation of the schedule). Methods that accept a
    ``time_limit`` (the searches) get ``--search-seconds``.

(c) With ``--scale``: the list heuristics (``heft``, ``met``, ``greedy``) on large
    layered graphs (by default 20 000 and 100 000 tasks, 100 per level, edge probability
    0.03 and skip edges 0.3: about 3.4 edges per task; 50 devices). ``whole`` is the
    wall-clock time of ``python -m schedkit.cli solve FILE.json -m METHOD`` (reading the
    file, building the Problem, the method, validating, printing), with its CPU time and
    peak memory; the split is measured in this process: ``parse`` (read and validate the
    file), ``problem`` (build the Problem), ``run`` (priority, bound, list schedule,
    schedule assembly), ``validate``.

Progress goes to stderr, tables to stdout; ``--json FILE`` also writes every figure.

Usage::

    python benchmarks/heuristics.py              # 20 small instances + the 4k-task graph
    python benchmarks/heuristics.py --quick      # 5 small instances + a 1k-task graph
    python benchmarks/heuristics.py --skip-small --methods heft,critical_path+pct,hash+fifo
    python benchmarks/heuristics.py --skip-small --skip-large --scale   # 20k and 100k tasks
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import schedkit
from schedkit import Problem, SchedkitError, solve
from schedkit.problem.bounds import lower_bound
from schedkit.generators import dump, erdos_renyi, layered
from schedkit.problem.loading import load_spec
from schedkit.validate import validate
from schedkit.atomic import write_text_atomic
from schedkit.methods import METHODS
from schedkit.progress import Progress


def pick_methods(spec: str | None) -> list[str]:
    names = [name for name, _ in schedkit.list_methods()]
    if not spec:
        return names
    wanted = [w.strip() for w in spec.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise SystemExit(f"unknown methods: {', '.join(unknown)} (known: {', '.join(names)})")
    return wanted


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def run_small(args, methods: list[str]) -> dict:
    heuristics = [m for m in methods if m != "milp"]
    progress = Progress(args.instances * (1 + len(heuristics)), "small")
    ratios: dict[str, list[float]] = {m: [] for m in heuristics}
    seconds: dict[str, list[float]] = {m: [] for m in heuristics}
    errors: dict[str, int] = {m: 0 for m in heuristics}
    milp_seconds = []
    skipped = 0
    for k in range(args.instances):
        problem = Problem.from_dict(erdos_renyi(args.tasks, args.edge_prob, args.small_devices,
                                                seed=args.seed + k))
        began = time.perf_counter()
        exact = solve(problem, "milp", time_limit=args.milp_time_limit)
        milp_seconds.append(time.perf_counter() - began)
        progress.update(note=f"milp #{k}: {exact.status}")
        for name in heuristics:
            if exact.status != "optimal":
                progress.update(note=name)
                continue
            began = time.perf_counter()
            try:
                s = solve(problem, name)
            except SchedkitError:
                errors[name] += 1
            else:
                ratios[name].append(s.makespan / exact.makespan)
            seconds[name].append(time.perf_counter() - began)
            progress.update(note=name)
        if exact.status != "optimal":
            skipped += 1
    progress.close()
    rows = []
    for name in heuristics:
        r = ratios[name]
        spent = seconds[name]
        rows.append({"method": name, "geomean_ratio": geometric_mean(r),
                     "worst_ratio": max(r, default=math.nan),
                     "optimal": sum(v <= 1 + 1e-6 for v in r), "instances": len(r),
                     "errors": errors[name],
                     "mean_seconds": sum(spent) / len(spent) if spent else math.nan})
    rows.sort(key=lambda row: (row["geomean_ratio"], row["method"]))
    milp_mean = sum(milp_seconds) / len(milp_seconds) if milp_seconds else math.nan
    print(f"\n(a) {args.instances} random ER DAGs, {args.tasks} tasks x {args.small_devices} devices "
          f"(edge prob {args.edge_prob}), ratio to the MILP optimum"
          f" ({skipped} without a proven optimum skipped; MILP mean {milp_mean:.2f}s)")
    print(f"{'method':<22} {'geo-mean':>9} {'worst':>7} {'optimal':>8} {'seconds':>9}")
    for row in rows:
        print(f"{row['method']:<22} {row['geomean_ratio']:>9.3f} {row['worst_ratio']:>7.3f} "
              f"{row['optimal']:>4}/{row['instances']:<3} {row['mean_seconds']:>9.4f}"
              + (f"  ({row['errors']} errors)" if row["errors"] else ""))
    return {"rows": rows, "skipped": skipped, "milp_seconds": milp_seconds}


def run_large(args, methods: list[str]) -> dict:
    heuristics = [m for m in methods if m != "milp"]
    sys.stderr.write(f"large: generating {args.levels} x {args.width} tasks, "
                     f"{args.large_devices} devices...\n")
    began = time.perf_counter()
    data = layered(args.levels, args.width, args.large_edge_prob, args.long_range_prob,
                   args.large_devices, seed=args.seed, size=tuple(args.size))
    generate_seconds = time.perf_counter() - began
    began = time.perf_counter()
    problem = Problem.from_dict(data)
    load_seconds = time.perf_counter() - began
    began = time.perf_counter()
    bound = lower_bound(problem)
    bound_seconds = time.perf_counter() - began
    sys.stderr.write(f"large: {problem!r}: generated in {generate_seconds:.2f}s, loaded in "
                     f"{load_seconds:.2f}s, bound {bound:.6g} in {bound_seconds:.2f}s\n")
    progress = Progress(len(heuristics), "large")
    rows = []
    for name in heuristics:
        options = {}
        if "time_limit" in METHODS.get(name).Options.model_fields:
            options["time_limit"] = args.search_seconds
        began = time.perf_counter()
        try:
            s = solve(problem, name, **options)
        except SchedkitError as exc:
            rows.append({"method": name, "makespan": math.nan, "ratio": math.nan,
                         "seconds": time.perf_counter() - began, "error": str(exc)})
        else:
            rows.append({"method": name, "makespan": s.makespan, "ratio": s.makespan / bound,
                         "seconds": time.perf_counter() - began,
                         "run_seconds": s.solve_seconds})
        progress.update(note=name)
    progress.close()
    rows.sort(key=lambda row: (math.isnan(row["makespan"]), row["makespan"], row["method"]))
    print(f"\n(b) layered graph: {len(problem.tasks)} tasks, {len(problem.edges)} edges, "
          f"{len(problem.devices)} devices; lower bound {bound:.6g} "
          f"(generate {generate_seconds:.2f}s, load {load_seconds:.2f}s)")
    print(f"{'method':<22} {'makespan':>11} {'ratio':>8} {'seconds':>9}")
    for row in rows:
        if "error" in row:
            print(f"{row['method']:<22} {'error':>11} {'':>8} {row['seconds']:>9.2f}  {row['error']}")
        else:
            print(f"{row['method']:<22} {row['makespan']:>11.6g} {row['ratio']:>8.3f} "
                  f"{row['seconds']:>9.2f}")
    by_name = {row["method"]: row for row in rows}
    cp, hf = by_name.get("critical_path+pct"), by_name.get("hash+fifo")
    if cp and hf and not math.isnan(cp["makespan"]) and not math.isnan(hf["makespan"]):
        print(f"\nhash+fifo / critical_path+pct makespan: {hf['makespan'] / cp['makespan']:.2f}x "
              f"(Mayer et al.: critical-path aware strategies up to 4x faster)")
    return {"tasks": len(problem.tasks), "edges": len(problem.edges),
            "devices": len(problem.devices), "bound": bound, "generate_seconds": generate_seconds,
            "load_seconds": load_seconds, "rows": rows}


def whole_process(path: Path, method: str) -> dict:
    """Wall-clock and CPU seconds and peak memory of ``schedkit solve`` in a child process."""
    command = [sys.executable, "-m", "schedkit.cli", "solve", str(path), "-m", method]
    began = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = child.communicate()
    wall = time.perf_counter() - began
    row = {"whole_seconds": wall, "exit": child.returncode, "output": (out or err).strip()[-300:]}
    # The CPU time and peak memory of this child alone (the children's totals grow per run).
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    row["whole_cpu_total"] = usage.ru_utime + usage.ru_stime
    row["children_peak_mb"] = usage.ru_maxrss / 1024
    return row


def split(spec, method: str) -> dict:
    """Seconds of each stage of a solve in this process (the file already parsed)."""
    began = time.perf_counter()
    problem = Problem(spec)
    built = time.perf_counter()
    solver = METHODS.get(method)()
    result = solver.run(problem)
    ran = time.perf_counter()
    schedule = result.to_schedule()
    validate(problem, schedule, solver.blocks(problem))
    done = time.perf_counter()
    return {"problem_seconds": built - began, "run_seconds": ran - built,
            "validate_seconds": done - ran, "makespan": schedule.makespan}


def run_scale(args) -> dict:
    rows = []
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    with tempfile.TemporaryDirectory() as folder:
        for tasks in args.scale_tasks:
            levels = max(1, tasks // args.scale_width)
            data = layered(levels, args.scale_width, args.scale_edge_prob, args.long_range_prob,
                           args.scale_devices, seed=args.seed)
            path = Path(folder) / f"layered-{levels}x{args.scale_width}.json"
            path.write_text(dump(data, path))
            sys.stderr.write(f"scale: {path.name}: {len(data['tasks'])} tasks, "
                             f"{len(data['edges'])} edges, {args.scale_devices} devices\n")
            began = time.perf_counter()
            spec = load_spec(path)
            parse_seconds = time.perf_counter() - began
            for name in args.scale_methods:
                row = {"tasks": len(data["tasks"]), "edges": len(data["edges"]), "method": name,
                       "parse_seconds": parse_seconds}
                row.update(whole_process(path, name))
                cpu_total = row.pop("whole_cpu_total")
                row["whole_cpu_seconds"], cpu_before = cpu_total - cpu_before, cpu_total
                row.update(split(spec, name))
                rows.append(row)
                sys.stderr.write(f"scale: {name}: whole {row['whole_seconds']:.1f}s\n")
    print(f"\n(c) layered graphs, {args.scale_width} tasks per level, edge prob "
          f"{args.scale_edge_prob}, skip edges {args.long_range_prob}, {args.scale_devices} devices;"
          f" whole = python -m schedkit.cli solve FILE -m METHOD")
    print(f"{'tasks':>7} {'edges':>7} {'method':<7} {'whole':>7} {'cpu':>7} {'parse':>6} "
          f"{'problem':>7} {'run':>6} {'valid.':>6} {'makespan':>11}")
    for row in rows:
        failed = "" if row["exit"] == 0 else f"  (exit {row['exit']}: {row['output']})"
        print(f"{row['tasks']:>7} {row['edges']:>7} {row['method']:<7} {row['whole_seconds']:>7.1f} "
              f"{row['whole_cpu_seconds']:>7.1f} {row['parse_seconds']:>6.1f} "
              f"{row['problem_seconds']:>7.1f} {row['run_seconds']:>6.1f} "
              f"{row['validate_seconds']:>6.1f} {row['makespan']:>11.6g}{failed}")
    peak = max((row["children_peak_mb"] for row in rows), default=math.nan)
    print(f"peak memory of the largest child: {peak:.0f} MB")
    return {"rows": rows, "children_peak_mb": peak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 small instances and a 1k-task graph")
    parser.add_argument("--methods", default=None, help="comma-separated method names (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--skip-small", action="store_true", help="skip the comparison with the optimum")
    parser.add_argument("--skip-large", action="store_true", help="skip the large graph")
    small = parser.add_argument_group("small instances (a)")
    small.add_argument("--instances", type=int, default=None,
                       help="number of instances (default 20; quick 5)")
    small.add_argument("--tasks", type=int, default=14, help="tasks per instance (default 14)")
    small.add_argument("--edge-prob", type=float, default=0.3, help="ER edge probability (default 0.3)")
    small.add_argument("--small-devices", type=int, default=3, help="devices (default 3)")
    small.add_argument("--milp-time-limit", type=float, default=120.0,
                       help="seconds per MILP (default 120)")
    large = parser.add_argument_group("large graph (b)")
    large.add_argument("--levels", type=int, default=None, help="levels (default 40; quick 20)")
    large.add_argument("--width", type=int, default=None, help="tasks per level (default 100; quick 50)")
    large.add_argument("--large-edge-prob", type=float, default=None,
                       help="edge probability between adjacent levels (default 0.1; quick 0.2)")
    large.add_argument("--long-range-prob", type=float, default=0.3,
                       help="skip-edge probability (default 0.3)")
    large.add_argument("--large-devices", type=int, default=None, help="devices (default 50; quick 20)")
    large.add_argument("--size", type=float, nargs=2, default=(1.0, 10.0), metavar=("LOW", "HIGH"),
                       help="range of tensor sizes (default 1 10; larger is more communication-bound)")
    large.add_argument("--search-seconds", type=float, default=20.0,
                       help="time_limit for methods that take one (default 20)")
    scale = parser.add_argument_group("scale (c)")
    scale.add_argument("--scale", action="store_true",
                       help="run the list heuristics on large layered graphs (minutes)")
    scale.add_argument("--scale-tasks", type=lambda text: [int(v) for v in text.split(",")],
                       default=[20000, 100000], help="task counts (default 20000,100000)")
    scale.add_argument("--scale-width", type=int, default=100, help="tasks per level (default 100)")
    scale.add_argument("--scale-edge-prob", type=float, default=0.03,
                       help="edge probability between adjacent levels (default 0.03)")
    scale.add_argument("--scale-devices", type=int, default=50, help="devices (default 50)")
    scale.add_argument("--scale-methods", type=lambda text: text.split(","),
                       default=["heft", "met", "greedy"], help="methods (default heft,met,greedy)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    quick = args.quick
    args.instances = args.instances if args.instances is not None else (5 if quick else 20)
    args.levels = args.levels if args.levels is not None else (20 if quick else 40)
    args.width = args.width if args.width is not None else (50 if quick else 100)
    if args.large_edge_prob is None:
        args.large_edge_prob = 0.2 if quick else 0.1
    if args.large_devices is None:
        args.large_devices = 20 if quick else 50
    if quick and args.search_seconds == 20.0:
        args.search_seconds = 5.0
    methods = pick_methods(args.methods)
    results = {"schedkit": schedkit.__version__, "arguments": vars(args)}
    if not args.skip_small:
        results["small"] = run_small(args, methods)
    if not args.skip_large:
        results["large"] = run_large(args, methods)
    if args.scale:
        results["scale"] = run_scale(args)
    if args.json:
        write_text_atomic(args.json, json.dumps(results, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
