"""Exact solve times of the latency MILP on HiGHS, against proven optima.

Random heterogeneous DAGs (``schedkit.generators.erdos_renyi``, edge probability 0.2) of
10-40 tasks on 3-4 devices, and the job shops ft06, la01-la05 (formulation ``jssp``).
Prints status, makespan, bound, seconds and, per size, the median time.

    python benchmarks/exact.py [--sizes 10 20 30 40] [--seeds 5] [--time-limit 120]
                               [--warm-start auto|none|heft] [--threads N] [--skip-jssp]

``--threads 1`` measures HiGHS alone; by default a second thread proves subset bounds
beside it on a machine with two or more cores (:mod:`schedkit.milp.race`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import schedkit
from schedkit.generators import erdos_renyi

JSSP_OPTIMA = {"ft06": 55, "la01": 666, "la02": 655, "la03": 597, "la04": 590, "la05": 593}


def run(problem, time_limit, formulation="latency", warm_start="auto", threads=None):
    began = time.perf_counter()
    schedule = schedkit.solve(problem, "milp", formulation=formulation, time_limit=time_limit,
                              warm_start=warm_start, threads=threads)
    return schedule, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 40])
    parser.add_argument("--devices", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--edge-prob", type=float, default=0.2)
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--warm-start", default="auto")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--skip-jssp", action="store_true")
    parser.add_argument("--skip-random", action="store_true")
    args = parser.parse_args()
    if not args.skip_random:
        print(f"{'instance':>14} {'status':>9} {'makespan':>10} {'bound':>10} {'seconds':>8}")
        for n in args.sizes:
            for m in args.devices:
                times = []
                for seed in range(args.seeds):
                    data = erdos_renyi(tasks=n, edge_prob=args.edge_prob, devices=m, seed=seed)
                    problem = schedkit.Problem.from_dict(data)
                    s, seconds = run(problem, args.time_limit, warm_start=args.warm_start, threads=args.threads)
                    times.append(seconds)
                    print(f"{f'er{n}x{m}-s{seed}':>14} {s.status:>9} {s.makespan:>10.4f} "
                          f"{s.bound or 0:>10.4f} {seconds:>8.2f}", flush=True)
                print(f"{f'{n}x{m}':>14} median {statistics.median(times):.2f} s over {len(times)} "
                      f"(time limit {args.time_limit:g} s)", flush=True)
    if not args.skip_jssp:
        print(f"{'job shop':>14} {'status':>9} {'makespan':>10} {'optimum':>10} {'seconds':>8}")
        for name, optimum in JSSP_OPTIMA.items():
            problem = schedkit.Problem.load(f"examples/{name}.json")
            s, seconds = run(problem, args.time_limit, formulation="jssp", warm_start=args.warm_start,
                              threads=args.threads)
            print(f"{name:>14} {s.status:>9} {s.makespan:>10g} {optimum:>10} {seconds:>8.2f}", flush=True)
            if s.status == "optimal" and abs(s.makespan - optimum) > 1e-6:
                sys.exit(f"{name}: proven {s.makespan}, literature optimum {optimum}")


if __name__ == "__main__":
    main()
