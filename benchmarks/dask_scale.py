"""Decompositions with their parts on a real Dask cluster: 1 worker against 2 (issue 29 item 4).

For each decomposition, a Dask ``LocalCluster`` of 1 and then 2 single-threaded worker
*processes* is started, and the method runs with ``executor="dask://HOST:PORT"`` (as
``schedkit solve ... --executor dask://HOST:PORT`` would against a remote scheduler). The
scheduler's task stream gives what ran on the cluster. Printed per run:

- ``parts``: the parts solved on the cluster (a round of one part runs in the calling
  process, so ``merge``, one coarse part, shows none);
- ``part s``: the sum of the parts' compute times on the workers;
- ``span s``: first part's start to last part's end on the cluster;
- ``wall s``: the whole solve (apply, parts, invert, validation);
- ``speed-up``: 1-worker span / k-worker span (and the same for the wall), and
  ``efficiency`` = speed-up / k.

The decompositions:

- ``merge`` on a large layered graph (default 100,000 tasks, about 2 edges each:
  ``--levels 1000 --width 100 --edge-prob 0.02``) under ``--time-limit``, with HEFT's
  makespan beside it;
- ``kedge`` on the same graph, with no overall limit and ``--part-limit`` seconds per part
  (under a time limit the parts share all of it, whatever the workers, so only the work
  done grows with them), HEFT's makespan beside it: its modules are bands of about 5,000
  tasks (a Gomory-Hu tree would take hours), each round a module part and its bound part,
  side by side on the workers;
- ``bridge_dp`` on a 10-module single-channel RWNN (``--part-limit`` per part): one part
  per module and device pair, the most parallel of the decompositions.

The machine's load moves every time: on a shared machine, read speed-ups as orders of
magnitude, and run it where nothing else runs to measure them.

Usage::

    python benchmarks/dask_scale.py                              # 100,000 tasks (minutes)
    python benchmarks/dask_scale.py --levels 100 --time-limit 20 # 10,000 tasks
    python benchmarks/dask_scale.py --only bridge_dp,kedge --workers 1,2,4
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from schedkit import Problem, SchedkitError, solve
from schedkit.generators import layered, rwnn


def _cluster(workers: int):
    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       protocol="tcp", dashboard_address=":0", silence_logs=logging.ERROR)
    return cluster, distributed.Client(cluster)


def run_on_cluster(problem: Problem, method: str, workers: int, options: dict) -> dict:
    """Solve ``problem`` with ``method`` and its parts on a fresh cluster of ``workers``."""
    import distributed

    cluster, client = _cluster(workers)
    try:
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        with distributed.get_task_stream(client=client) as stream:
            began = time.perf_counter()
            schedule = solve(problem, method, executor=address, **options)
            wall = time.perf_counter() - began
        computes = [(s["start"], s["stop"]) for task in stream.data for s in task["startstops"]
                    if s["action"] == "compute"]
    finally:
        client.close()
        cluster.close()
    span = max(e for _, e in computes) - min(s for s, _ in computes) if computes else 0.0
    return {"parts": len(computes), "part_s": sum(e - s for s, e in computes), "span_s": span,
            "wall_s": wall, "makespan": schedule.makespan, "status": schedule.status}


def report(name: str, problem: Problem, method: str, options: dict, counts: list[int]) -> None:
    print(f"\n{name}: {method} {options} on {problem.name} ({len(problem.tasks):,} tasks, "
          f"{len(problem.edges):,} edges)", flush=True)
    print(f"{'workers':>7} {'parts':>6} {'part s':>8} {'span s':>8} {'wall s':>8} {'makespan':>12} "
          f"{'speed-up':>14} {'efficiency':>14}")
    first = None
    for k in counts:
        try:
            row = run_on_cluster(problem, method, k, options)
        except SchedkitError as exc:
            print(f"{k:>7} refused: {exc}", flush=True)
            return
        first = first or row
        head = f"{k:>7} {row['parts']:>6} {row['part_s']:>8.2f} {row['span_s']:>8.2f} {row['wall_s']:>8.2f} " \
               f"{row['makespan']:>12.2f}"
        if not row["parts"]:  # (nothing ran on the cluster: no speed-up to speak of)
            print(f"{head} {'-':>14} {'-':>14}", flush=True)
            continue
        span_up, wall_up = first["span_s"] / row["span_s"], first["wall_s"] / row["wall_s"]
        print(f"{head} {span_up:>6.2f} /{wall_up:>6.2f} {span_up / k:>6.2f} /{wall_up / k:>6.2f}", flush=True)
    if first and not first["parts"]:
        print("(no part ran on the cluster: a round of one part runs in the calling process)")
    else:
        print("(speed-up and efficiency: of the parts' span / of the wall)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=1000)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--edge-prob", type=float, default=0.02)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--part-limit", type=float, default=2.0,
                        help="seconds per part of kedge and bridge_dp (no overall limit: a time limit "
                             "would let the parts use all of it whatever the workers)")
    parser.add_argument("--workers", default="1,2", help="worker counts, the first is the reference")
    parser.add_argument("--only", default="merge,kedge,bridge_dp")
    args = parser.parse_args(argv)
    counts = [int(k) for k in args.workers.split(",")]
    only = set(args.only.split(","))
    parts = {"time_limit": args.part_limit}
    big = Problem.from_dict(layered(levels=args.levels, width=args.width, edge_prob=args.edge_prob,
                                    long_range_prob=0.1, devices=4, seed=0))
    if only & {"merge", "kedge"}:
        began = time.perf_counter()
        heft = solve(big, "heft")
        print(f"heft on {big.name}: makespan {heft.makespan:.2f} in {time.perf_counter() - began:.2f} s")
    if "merge" in only:
        report("merge", big, "merge", {"inner": "milp", "time_limit": args.time_limit}, counts)
    if "kedge" in only:
        report("kedge", big, "kedge", {"inner": "milp", "inner_options": parts}, counts)
    if "bridge_dp" in only:
        chain = Problem.from_dict(rwnn(10, 20, channels=1, seed=0))
        report("bridge_dp", chain, "bridge_dp", {"inner": "milp", "inner_options": parts}, counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
