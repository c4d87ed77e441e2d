"""Symmetry breaking of identical devices (DiviML's GPT-3 case study, Table V): four orderings.

Instances: ``schedkit generate platform nodes --nodes 6 --gpus 4`` (6 identical servers of 4
A100s, each server's GPUs one group, NVLink inside a server, 100 Gb/s between servers) with a
randomly wired network of ``--modules`` x ``--rwnn-nodes`` (``schedkit generate rwnn
--platform``), seeds 0 .. ``--seeds``-1. Each is solved by the ``milp`` method (HiGHS, one
thread, ``--time-limit`` each) under ``latency`` plus ``symmetry: {by: ...}`` for ``tasks``,
``batches`` (without batching the same rows as ``tasks``), ``busy_time``, and without the
block (``none``). Printed: status, makespan, bound and seconds per ordering, and the speed-up
of each ordering's time to its result over ``none`` when both prove the same optimum.

Target (issue 11): ``tasks`` reaches the no-symmetry result at least 2x faster, or proves
optimality where ``none`` cannot.

    python benchmarks/symmetry.py [--seeds 3] [--modules 3] [--rwnn-nodes 8] [--time-limit 60] [--solver highs]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from schedkit import Formulation, Problem, solve
from schedkit.generators import rwnn
from schedkit.generators.platform import nodes
from schedkit.importers.platform import parse_platform

ORDERINGS = ("none", "tasks", "batches", "busy_time")
BASE = ["assignment", "placement", {"precedence": {"communication": True}}, "no_overlap", "memory"]


def instance(modules: int, size: int, seed: int) -> Problem:
    platform = parse_platform(nodes(6, 4))
    return Problem.from_dict(platform.retarget(rwnn(modules=modules, nodes=size, seed=seed)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--modules", type=int, default=3)
    parser.add_argument("--rwnn-nodes", type=int, default=8)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solver", default="highs", choices=("highs", "cpsat", "auto"))
    args = parser.parse_args(argv)
    print(f"RWNN {args.modules}x{args.rwnn_nodes} on 6 servers x 4 A100 (24 devices in 6 groups); "
          f"milp, solver {args.solver}, 1 thread, {args.time_limit:g} s each")
    print(f"{'seed':>4} {'ordering':>10} {'status':>9} {'makespan':>10} {'bound':>10} {'seconds':>8} {'speed-up':>8}")
    speedups: dict[str, list[float]] = {o: [] for o in ORDERINGS[1:]}
    for seed in range(args.seeds):
        p = instance(args.modules, args.rwnn_nodes, seed)
        found = {}
        for ordering in ORDERINGS:
            blocks = BASE + ([] if ordering == "none" else [{"symmetry": {"by": ordering}}])
            f = Formulation.from_data({"name": f"latency+{ordering}", "blocks": blocks})
            began = time.perf_counter()
            s = solve(p, "milp", formulation=f, solver=args.solver, threads=1, time_limit=args.time_limit)
            found[ordering] = (s, time.perf_counter() - began)
        plain, plain_seconds = found["none"]
        for ordering, (s, seconds) in found.items():
            ratio = ""
            if ordering != "none" and s.status == "optimal" and (plain.status != "optimal" or
                                                                 abs(s.makespan - plain.makespan) <= 1e-6 * plain.makespan):
                speedups[ordering].append(plain_seconds / seconds)
                ratio = f"{plain_seconds / seconds:.2f}x"
            print(f"{seed:>4} {ordering:>10} {s.status:>9} {s.makespan:>10.5g} {s.bound or 0:>10.5g} "
                  f"{seconds:>8.2f} {ratio:>8}")
    for ordering, values in speedups.items():
        if values:
            print(f"{ordering:>10}: median speed-up over none {statistics.median(values):.2f}x "
                  f"({len(values)}/{args.seeds} proven)")
    print("target: 'tasks' at least 2x faster than none to the same result (or a proof none lacks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
