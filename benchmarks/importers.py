"""Benchmark the importers on real models: the Targets of the importers issue.

(a) Every light ONNX model shipped in the ``onnx`` wheel (``onnx/backend/test/data/light``)
    on the CPU + 2 GPU platform ``examples/platform_cpu_2gpu.yaml``: convert time (target
    < 2 s each), tasks and edges, HEFT makespan, MILP (``latency`` formulation) makespan and
    bound after ``--time-limit`` seconds (60 by default), and the speed-up of both over the
    best single device (every operator on one device: the sum of its durations there).
(b) Every MSR graph under ``data/msr-dnn``: convert time, HEFT time and makespan,
    the bound, and whether the schedule validates.

Progress goes to stderr (a bar on a terminal, silent otherwise), tables to stdout; ``--json
FILE`` also writes every figure.

Usage::

    python benchmarks/importers.py                      # everything, 60 s per MILP
    python benchmarks/importers.py --time-limit 10      # quicker MILPs
    python benchmarks/importers.py --skip-milp --skip-msr
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import warnings
from pathlib import Path

import schedkit
from schedkit.atomic import write_text_atomic
from schedkit.progress import Progress
from schedkit.importers import convert

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "examples" / "platform_cpu_2gpu.yaml"
MSR = ROOT / "data" / "msr-dnn"


def light_models() -> list[Path]:
    import onnx

    return sorted(Path(onnx.__file__).parent.glob("backend/test/data/light/*.onnx"))


def best_single_device(problem: schedkit.Problem) -> tuple[str, float]:
    """The device that runs every task fastest alone, and that time (no transfers)."""
    totals = {}
    for k, device in enumerate(problem.devices):
        if all(k in table for table in problem.durations):
            totals[device] = sum(table[k] for table in problem.durations)
    device = min(totals, key=totals.get)
    return device, totals[device]


def run_onnx(args) -> list[dict]:
    models = light_models()
    rows = []
    with Progress(len(models), "onnx") as bar:
        for path in models:
            bar.update(bar.done, path.stem)
            began = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                data = convert("onnx", path, platform=str(PLATFORM))
            convert_s = time.perf_counter() - began
            problem = schedkit.Problem.from_dict(data)
            device, single = best_single_device(problem)
            began = time.perf_counter()
            heft = schedkit.solve(problem, "heft")
            row = {"model": path.stem.removeprefix("light_"), "tasks": len(problem.tasks),
                   "edges": len(problem.edges), "convert_s": convert_s, "warnings": len(caught),
                   "single_device": device, "single": single, "heft": heft.makespan,
                   "heft_s": time.perf_counter() - began, "heft_speedup": single / heft.makespan}
            if not args.skip_milp:
                exact = schedkit.solve(problem, "milp", formulation="latency", time_limit=args.time_limit)
                row.update(milp=exact.makespan, bound=exact.bound, status=exact.status,
                           milp_s=exact.solve_seconds, milp_speedup=single / exact.makespan)
            rows.append(row)
            bar.update(bar.done + 1, path.stem)
    return rows


def run_msr(args) -> list[dict]:
    files = sorted(glob.glob(str(MSR / "*" / "*.json")))
    rows = []
    with Progress(len(files), "msr") as bar:
        for path in files:
            name = Path(path).relative_to(MSR).as_posix()
            bar.update(bar.done, name)
            began = time.perf_counter()
            data = convert("msr", path)
            convert_s = time.perf_counter() - began
            problem = schedkit.Problem.from_dict(data)
            began = time.perf_counter()
            heft = schedkit.solve(problem, "heft")  # validated inside solve
            rows.append({"graph": name, "tasks": len(problem.tasks), "devices": len(problem.devices),
                         "convert_s": convert_s, "heft_s": time.perf_counter() - began,
                         "heft": heft.makespan, "bound": heft.bound,
                         "valid": heft.violations(problem) == []})
            bar.update(bar.done + 1, name)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per MILP [60]")
    parser.add_argument("--skip-milp", action="store_true", help="HEFT only on the ONNX models")
    parser.add_argument("--skip-onnx", action="store_true")
    parser.add_argument("--skip-msr", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    report: dict = {"cpus": os.cpu_count(), "platform": str(PLATFORM.relative_to(ROOT))}
    if not args.skip_onnx:
        report["onnx"] = rows = run_onnx(args)
        print(f"ONNX light models on {report['platform']} (times in ms; MILP: -f latency "
              f"--time-limit {args.time_limit:g})")
        print(f"{'model':14} {'tasks':>5} {'convert':>8} {'single':>14} {'HEFT':>8} {'x':>5} "
              f"{'MILP':>8} {'bound':>8} {'status':>9} {'x':>5}")
        for r in rows:
            milp = (f"{r['milp']:8.4f} {r['bound']:8.4f} {r['status']:>9} {r['milp_speedup']:5.2f}"
                    if "milp" in r else "")
            print(f"{r['model']:14} {r['tasks']:5} {r['convert_s']:7.2f}s {r['single']:8.4f} "
                  f"{r['single_device']:>5} {r['heft']:8.4f} {r['heft_speedup']:5.2f} {milp}")
    if not args.skip_msr:
        report["msr"] = rows = run_msr(args)
        print("\nMSR graphs (HEFT; times in the files' unit)")
        print(f"{'graph':36} {'tasks':>5} {'dev':>4} {'convert':>8} {'HEFT s':>7} {'makespan':>10} "
              f"{'bound':>9} valid")
        for r in rows:
            print(f"{r['graph']:36} {r['tasks']:5} {r['devices']:4} {r['convert_s']:7.2f}s "
                  f"{r['heft_s']:6.2f}s {r['heft']:10.2f} {r['bound']:9.2f} {r['valid']}")
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
