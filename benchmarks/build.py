"""Model build and LP-write time of the latency formulation on random DAGs (x 4 devices).

Prints, per size: rows, columns, build seconds (the sparse model: no Pyomo object is made),
its CPU seconds (``time.process_time``, the least of ``--repeat`` builds after the first:
on a shared machine the wall time counts the other processes), LP-write seconds, and the
whole-process time of ``schedkit export`` (Python start-up and imports included) for the
100-task case. The first build of a process also imports the formulations' plug-ins.
``--problem FILE`` times the build of given problem files too (the largest build in
``benchmarks/`` is DenseNet-121's, from ``real_models.py``'s conversion).

    python benchmarks/build.py [--sizes 50 100 200] [--edge-prob 0.05] [--repeat 5] [--problem FILE ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedkit import Problem
from schedkit.milp.export import write_model
from schedkit.generators import erdos_renyi
from schedkit.milp import Milp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--edge-prob", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=5, help="builds timed in CPU after the first")
    parser.add_argument("--problem", nargs="+", default=[], metavar="FILE",
                        help="also time the build of these problem files (e.g. a converted DenseNet-121)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    print(f"{'tasks':>6} {'edges':>6} {'rows':>8} {'cols':>7} {'build s':>8} {'cpu s':>8} {'write s':>8}")
    for n in args.sizes:
        data = erdos_renyi(tasks=n, edge_prob=args.edge_prob, devices=args.devices, seed=1)
        problem = Problem.from_dict(data)
        began = time.perf_counter()
        built = Milp().build(problem)
        build = time.perf_counter() - began
        cpu = min(_cpu(problem) for _ in range(args.repeat)) if args.repeat > 0 else float("nan")
        began = time.perf_counter()
        names = write_model(built, folder / f"r{n}.lp")
        write = time.perf_counter() - began
        print(f"{n:>6} {len(problem.edges):>6} {built.linear.num_rows:>8} {len(names):>7} "
              f"{build:>8.2f} {cpu:>8.4f} {write:>8.2f}", flush=True)
        if n == 100:
            path = folder / "r100.json"
            path.write_text(json.dumps(data))
            began = time.perf_counter()
            subprocess.run([sys.executable, "-m", "schedkit.cli", "export", str(path), "-o",
                            str(folder / "r100-cli.lp")], check=True, capture_output=True)
            print(f"  whole process 'schedkit export' of 100 tasks: {time.perf_counter() - began:.2f} s")
    for path in args.problem:
        problem = Problem.load(path)
        began = time.perf_counter()
        built = Milp().build(problem)
        build = time.perf_counter() - began
        cpu = min(_cpu(problem) for _ in range(args.repeat)) if args.repeat > 0 else float("nan")
        print(f"{Path(path).name}: {len(problem.tasks)} tasks, {built.linear.num_rows} rows, build {build:.2f} s, "
              f"cpu {cpu:.4f} s", flush=True)


def _cpu(problem) -> float:
    """CPU seconds of one build of ``problem`` (after a full collection: the previous build's
    garbage is not charged to this one)."""
    gc.collect()
    began = time.process_time()
    Milp().build(problem)
    return time.process_time() - began


if __name__ == "__main__":
    main()
