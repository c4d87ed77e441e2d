"""Data parallelism (DiviML): throughput of batches + model parallelism against single devices.

Instances: one module of a randomly wired network (``schedkit.generators.rwnn``: ``--nodes``
nodes of an ER(0.2) graph, one channel, so 2 + nodes tasks with the module's input and
output nodes) put on DiviML's platform with a workload of ``--inputs`` L = 16 inputs
(``schedkit.generators.diviml``: an A100, a T4 (1.26x) and a CPU (7.10x) on PCIe 4.0 x16,
every device running batches of L/4, L/2, 3L/4 and L, batch times as documented there).

Per seed, the makespan of the L inputs and the throughput L / makespan of

- ``one_by_one``: the best single device running the inputs one at a time (DiviML's naive
  baseline, against which the paper reports up to 2.9x);
- ``whole_batch``: the best single device running the inputs in batches of its best size;
- the batched heuristics bMET, bGreedy, bHEFT, SA and the (1+1) EA (``met``, ``greedy``,
  ``heft``, ``annealing``, ``evolution`` under ``-f throughput``: one batch per task and device);
- the MILP (``milp -f throughput``, one batch per task and device, DiviML's restriction;
  ``--solver`` auto (HiGHS and CP-SAT raced) with ``--time-limit``): status, makespan, bound.

Targets: the MILP's throughput at least 2x ``one_by_one`` and strictly above ``whole_batch``,
and better than bHEFT; a validated schedule and a bound within 60 s.

    python benchmarks/batching.py [--seeds 3] [--nodes 10] [--inputs 16] [--time-limit 60]
                                  [--solver auto|highs|cpsat] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import schedkit
from schedkit import Problem
from schedkit.generators.diviml import baselines, diviml_workload
from schedkit.generators.rwnn import rwnn

HEURISTICS = ("met", "greedy", "heft", "annealing", "evolution")


def instance(nodes: int, inputs: int, seed: int) -> Problem:
    """One ER(0.2) module of ``nodes`` nodes on DiviML's platform with ``inputs`` inputs."""
    return Problem.from_dict(diviml_workload(rwnn(modules=1, nodes=nodes, channels=1, graph="er",
                                                  edge_prob=0.2, seed=seed), inputs=inputs))


def measure(p: Problem, time_limit: float, solver: str) -> dict:
    row = {"problem": p.name, "tasks": len(p.tasks), **baselines(p)}
    for name in HEURISTICS:
        began = time.perf_counter()
        s = schedkit.solve(p, name, formulation="throughput")
        row[name] = {"makespan": s.makespan, "seconds": time.perf_counter() - began}
    began = time.perf_counter()
    s = schedkit.solve(p, "milp", formulation="throughput", time_limit=time_limit, solver=solver)
    row["milp"] = {"status": s.status, "makespan": s.makespan, "bound": s.bound,
                   "seconds": time.perf_counter() - began}
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--inputs", type=int, default=16)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solver", default="auto", choices=("auto", "highs", "cpsat"))
    parser.add_argument("--json", type=Path, metavar="FILE")
    args = parser.parse_args(argv)
    L = args.inputs
    rows = []
    print(f"RWNN module, ER(0.2), {args.nodes} nodes, L = {L} inputs on A100 + T4 + CPU; makespan "
          f"(throughput = L / makespan); milp solver {args.solver}, {args.time_limit:g} s")
    head = f"{'seed':>4} {'one_by_one':>11} {'whole_batch':>11}" + "".join(f" {h:>9}" for h in HEURISTICS)
    print(head + f" {'milp':>9} {'bound':>8} {'status':>9} {'seconds':>7}  x1by1  xbatch  vs heft")
    for seed in range(args.seeds):
        row = measure(instance(args.nodes, L, seed), args.time_limit, args.solver)
        rows.append(row)
        milp = row["milp"]
        print(f"{seed:>4} {row['one_by_one']:>11.4g} {row['whole_batch']:>11.4g}"
              + "".join(f" {row[h]['makespan']:>9.4g}" for h in HEURISTICS)
              + f" {milp['makespan']:>9.4g} {milp['bound']:>8.4g} {milp['status']:>9} {milp['seconds']:>7.1f}"
              + f"  {row['one_by_one'] / milp['makespan']:>5.2f}  {row['whole_batch'] / milp['makespan']:>6.2f}"
              + f"  {'better' if milp['makespan'] < row['heft']['makespan'] - 1e-9 else 'not better'}")
    ratio = [r["one_by_one"] / r["milp"]["makespan"] for r in rows]
    over = [r["whole_batch"] / r["milp"]["makespan"] for r in rows]
    print(f"throughput of the MILP: {statistics.median(ratio):.2f}x one_by_one (median; target >= 2), "
          f"{statistics.median(over):.2f}x whole_batch (target > 1); beats bHEFT on "
          f"{sum(r['milp']['makespan'] < r['heft']['makespan'] - 1e-9 for r in rows)}/{len(rows)}; "
          f"bound given on {sum(r['milp']['bound'] is not None for r in rows)}/{len(rows)}, "
          f"longest solve {max(r['milp']['seconds'] for r in rows):.1f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
