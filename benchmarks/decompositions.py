"""Benchmark the decompositions against the monolithic MILP and HEFT (the issue's Targets).

(a) DiviML Table I: 10-module single-channel RWNNs (:func:`schedkit.generators.rwnn`) on
    DiviML's platform. ``bridge_dp --inner milp`` against the monolithic MILP at equal time,
    at 50 times its time, and at ``--milp-seconds``. Target: bridge_dp equals the MILP
    optimum (or beats its incumbent at equal time) and is at least 50x faster to that value,
    that is, the MILP given 50x bridge_dp's time does not reach bridge_dp's makespan.
(b) DiviML Table III: 10-module RWNNs with 2, 3 and 4 channels, sdep and wdep. ``kedge``
    against the monolithic MILP given ``--milp-seconds``: gap to the MILP's best, time share,
    and DiviML's lower bound against the best makespan. Targets (sdep): within 1 % at 10 %
    of the time; bound within 15 %.
(c) A 1000-task layered graph (Mayer et al.): ``merge --nodes 60 --inner milp`` within 60 s
    against HEFT, on five shapes (levels x width: 250 x 4 and 100 x 10, deep and narrow
    like a DNN's operator graph; 50 x 20, 20 x 50, 10 x 100; 4 devices), with the
    generator's links (bandwidth 1-10: communication-to-computation ratio about 0.5) and with
    links ten times slower (bandwidth 0.1-1: about 5), two of the ratios Topcuoglu
    et al. sweep; the kernel's lower bound beside them. Merging a 1000-task graph both ways
    takes up to 11 s; the inner MILP gets 20 s and merge's refinement 25 s (one round of
    its local search takes about 20 s at 1000 tasks). Beside them: merge+heft, the same
    refinement from HEFT's schedule (task by task, 25 s), the lower bound of the coarse
    problem (no inner method finds a coarse schedule shorter than it), and the monolithic
    MILP given the whole 60 s.
(d) MSR's real DNN graphs (``data/msr-dnn``, read by schedkit's ``msr`` importer on one
    CPU and three accelerators: measured latencies, transfer costs, colour classes as
    collocation groups): ``merge`` at N = 20, 40, 80 against HEFT and the monolithic MILP
    given the same time. ``--quick`` takes the layer graphs only.
(e) Executors: serial, a process pool and a Dask LocalCluster give the same schedule
    (bridge_dp and kedge on the Table I/III instances), with their times.

Progress goes to stderr, tables to stdout; ``--json FILE`` writes every figure. The
machine's load moves the times: read them as orders of magnitude.

Usage::

    python benchmarks/decompositions.py                 # everything (about an hour)
    python benchmarks/decompositions.py --quick         # MILP limits / 10, fewer instances
    python benchmarks/decompositions.py --only a,e
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from schedkit import Problem, SchedkitError, solve
from schedkit.atomic import write_text_atomic
from schedkit.generators import layered, rwnn
from schedkit.importers.msr import load_msr

MSR = Path(__file__).resolve().parents[1] / "data" / "msr-dnn"
FIGURES: dict = {}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def timed(problem, method, **options):
    began = time.perf_counter()
    schedule = solve(problem, method, **options)
    return schedule, time.perf_counter() - began


def table_i(seeds, milp_seconds):
    print("\n(a) Table I: 10-module single-channel RWNN, bridge_dp --inner milp vs monolithic MILP")
    print(f"{'instance':30} {'split':>9} {'status':>8} {'s':>6} | {'MILP@=':>9} {'MILP@50x':>9} "
          f"{'MILP@T':>9} {'bound@T':>9} | {'50x reached?':>12}")
    rows = []
    for seed in seeds:
        p = Problem.from_dict(rwnn(10, 8, channels=1, seed=seed))
        log(f"(a) {p.name}")
        split, ts = timed(p, "bridge_dp", inner="milp")
        equal, _ = timed(p, "milp", time_limit=max(ts, 1.0))
        fifty, _ = timed(p, "milp", time_limit=50 * ts)
        full, tf = timed(p, "milp", time_limit=milp_seconds)
        reached = fifty.makespan <= split.makespan * (1 + 1e-9)
        row = {"instance": p.name, "split": split.makespan, "status": split.status, "split_seconds": ts,
               "milp_equal_time": equal.makespan, "milp_50x": fifty.makespan, "milp_T": full.makespan,
               "milp_T_bound": full.bound, "milp_T_seconds": tf, "milp_50x_reaches_split": reached}
        rows.append(row)
        print(f"{p.name:30} {split.makespan:9.3f} {split.status:>8} {ts:6.1f} | {equal.makespan:9.3f} "
              f"{fifty.makespan:9.3f} {full.makespan:9.3f} {full.bound or 0:9.3f} | {str(reached):>12}")
    print("DiviML (Gurobi): MILP-SPLIT matches the MILP's solution, 37-395x faster.")
    FIGURES["table_i"] = rows


def table_iii(seeds, milp_seconds):
    print("\n(b) Table III: 10-module multi-channel RWNNs, kedge --inner milp vs monolithic MILP")
    print(f"{'instance':32} {'kedge':>9} {'bound':>9} {'s':>6} | {'MILP':>9} {'s':>6} {'HEFT':>9} | "
          f"{'gap %':>6} {'time %':>6} {'bound gap %':>11}")
    rows = []
    for channels in (2, 3, 4):
        for dependency in ("sdep", "wdep"):
            for seed in seeds:
                p = Problem.from_dict(rwnn(10, 8, channels=channels, dependency=dependency, seed=seed))
                log(f"(b) {p.name}")
                split, ts = timed(p, "kedge", inner="milp", inner_options={"time_limit": 5})
                full, tf = timed(p, "milp", time_limit=milp_seconds)
                heft = solve(p, "heft")
                best = min(split.makespan, full.makespan)
                row = {"instance": p.name, "channels": channels, "dependency": dependency,
                       "kedge": split.makespan, "bound": split.bound, "kedge_seconds": ts,
                       "milp": full.makespan, "milp_seconds": tf, "heft": heft.makespan,
                       "gap": (split.makespan - full.makespan) / full.makespan,
                       "time_share": ts / tf, "bound_gap": (best - split.bound) / best}
                rows.append(row)
                print(f"{p.name:32} {split.makespan:9.3f} {split.bound:9.3f} {ts:6.1f} | {full.makespan:9.3f} "
                      f"{tf:6.1f} {heft.makespan:9.3f} | {100 * row['gap']:6.2f} {100 * row['time_share']:6.1f} "
                      f"{100 * row['bound_gap']:11.2f}")
    print("DiviML: the multi-channel split stays close to the MILP at a fraction of its time; its "
          "lower bound assesses the heuristic's quality.")
    FIGURES["table_iii"] = rows


def ccr(p: Problem) -> float:
    """Communication-to-computation ratio (Topcuoglu et al.): mean transfer time of an edge
    between two different devices over the mean duration of a task."""
    pairs = [(u, v) for u in range(len(p.devices)) for v in range(len(p.devices)) if u != v]
    comm = [sum(p.comm_time(size, u, v) for u, v in pairs) / len(pairs) for _, _, size in p.edges]
    work = [sum(p.durations[i].values()) / len(p.durations[i]) for i in range(len(p.tasks))]
    return (sum(comm) / len(comm)) / (sum(work) / len(work))


#: Link bandwidth ranges of (c): the generator's default, and ten times slower links.
BANDWIDTHS = {"default": (1.0, 10.0), "slow links": (0.1, 1.0)}
#: Seconds of (c)'s inner MILP and of merge's refinement: with up to 11 s of merging, 60 s.
INNER_SECONDS, REFINE_SECONDS = 20.0, 25.0


def layered_target(seconds):
    from schedkit.reductions.refine import refined
    from schedkit.decompositions.merge import Merge
    from schedkit.problem.bounds import lower_bound

    print("\n(c) merge --nodes 60 --inner milp on 1000-task layered graphs (4 devices) vs HEFT")
    print(f"{'shape':8} {'links':11} {'CCR':>5} {'bound':>7} {'HEFT':>7} {'merge+milp':>11} {'s':>5} "
          f"{'vs HEFT':>8} {'merge+heft':>11} {'HEFT+refine':>12} {'coarse LB':>10} {'MILP@60':>8}")
    rows = []
    for links, bandwidth in BANDWIDTHS.items():
        for levels, width in ((250, 4), (100, 10), (50, 20), (20, 50), (10, 100)):
            p = Problem.from_dict(layered(levels, width, edge_prob=0.1, long_range_prob=0.1, devices=4, seed=0,
                                          bandwidth=bandwidth))
            log(f"(c) {p.name} {links}")
            heft = solve(p, "heft")
            merged, tm = timed(p, "merge", nodes=60, inner="milp", inner_options={"time_limit": INNER_SECONDS},
                               refine=REFINE_SECONDS)
            cheap = solve(p, "merge", nodes=60, inner="heft", refine=REFINE_SECONDS)
            polished = refined(p, heft, [[i] for i in range(len(p.tasks))], REFINE_SECONDS, "heft+refine")
            coarse, _ = Merge(nodes=60).apply(p)
            whole = solve(p, "milp", time_limit=seconds)
            row = {"shape": f"{levels}x{width}", "links": links, "ccr": ccr(p), "bound": lower_bound(p),
                   "heft": heft.makespan, "merge_milp": merged.makespan, "seconds": tm,
                   "merge_heft": cheap.makespan, "heft_refined": polished.makespan,
                   "coarse_bound": lower_bound(coarse), "milp": whole.makespan}
            rows.append(row)
            print(f"{row['shape']:8} {links:11} {row['ccr']:5.2f} {row['bound']:7.1f} {heft.makespan:7.1f} "
                  f"{merged.makespan:11.1f} {tm:5.1f} {100 * (merged.makespan / heft.makespan - 1):+7.2f}% "
                  f"{cheap.makespan:11.1f} {polished.makespan:12.1f} {row['coarse_bound']:10.1f} "
                  f"{whole.makespan:8.1f}")
    print(f"Target: merge --nodes 60 --inner milp beats HEFT within 60 s (inner MILP {INNER_SECONDS:g} s, "
          f"refinement {REFINE_SECONDS:g} s, merging included). The bound is the kernel's lower bound "
          "(load and paths); coarse LB, the same bound of the coarse problem merge keeps: no coarse "
          "schedule is shorter (expanding and refining it may gain). HEFT+refine: merge's refinement "
          "from HEFT's schedule, task by task, for the same time. MILP@60: the monolithic MILP given 60 s.")
    FIGURES["layered"] = rows


def msr(files, sizes):
    print("\n(d) merge on MSR DNN graphs (1 CPU + 3 accelerators) vs HEFT and the monolithic MILP at equal time")
    print(f"{'graph':34} {'tasks':>5} {'N':>3} {'merge+milp':>11} {'s':>6} {'HEFT':>10} {'MILP@=':>10}")
    rows = []
    for path in files:
        p = Problem.from_dict({**load_msr(path, cpus=1, accelerators=3), "name": f"{path.parent.name}/{path.stem}"})
        heft = solve(p, "heft")
        for n in sizes:
            log(f"(d) {p.name} N={n}")
            try:
                merged, tm = timed(p, "merge", nodes=n, inner="milp", inner_options={"time_limit": 30})
            except SchedkitError as exc:  # a graph that cannot be merged that far
                print(f"{p.name:34} {len(p.tasks):5} {n:3} refused: {str(exc).splitlines()[0][:60]}")
                continue
            whole, _ = timed(p, "milp", time_limit=max(tm, 1.0))
            rows.append({"graph": p.name, "tasks": len(p.tasks), "nodes": n, "merge_milp": merged.makespan,
                         "seconds": tm, "heft": heft.makespan, "milp_equal_time": whole.makespan})
            print(f"{p.name:34} {len(p.tasks):5} {n:3} {merged.makespan:11.3f} {tm:6.1f} {heft.makespan:10.3f} "
                  f"{whole.makespan:10.3f}")
    FIGURES["msr"] = rows


def executors():
    print("\n(e) Executors: the same schedule on serial, a process pool and a Dask LocalCluster")
    print(f"{'instance':32} {'method':10} {'serial s':>9} {'process s':>10} {'dask s':>7} {'identical':>10}")
    rows = []
    for data, method in ((rwnn(10, 8, channels=1, seed=0), "bridge_dp"),
                         (rwnn(10, 8, channels=2, seed=0), "kedge")):
        p = Problem.from_dict(data)
        found = {}
        for executor in ("serial", "process", "dask"):
            log(f"(e) {p.name} {method} {executor}")
            s, t = timed(p, method, inner="milp", executor=executor)
            found[executor] = (s.model_dump(mode="json", exclude={"solve_seconds"}), t)
        same = found["serial"][0] == found["process"][0] == found["dask"][0]
        rows.append({"instance": p.name, "method": method, "identical": same,
                     **{f"{k}_seconds": v[1] for k, v in found.items()}})
        print(f"{p.name:32} {method:10} {found['serial'][1]:9.1f} {found['process'][1]:10.1f} "
              f"{found['dask'][1]:7.1f} {str(same):>10}")
    FIGURES["executors"] = rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="MILP limits / 10, one seed, fewer graphs")
    parser.add_argument("--only", default="a,b,c,d,e", help="sections to run (default a,b,c,d,e)")
    parser.add_argument("--milp-seconds", type=float, default=600.0, help="monolithic MILP limit (default 600)")
    parser.add_argument("--json", default=None, help="write every figure to this file")
    args = parser.parse_args()
    only = set(args.only.split(","))
    seconds = args.milp_seconds / (10 if args.quick else 1)
    seeds = [0] if args.quick else [0, 1, 2]
    if "a" in only:
        table_i(seeds, seconds)
    if "b" in only:
        table_iii([0], seconds)
    if "c" in only:
        layered_target(60.0)
    if "d" in only:
        files = sorted(MSR.glob("layer/*.json")) + ([] if args.quick else sorted(MSR.glob("operator/*.json")))
        msr(files, (20, 40, 80))
    if "e" in only:
        executors()
    if args.json:
        write_text_atomic(args.json, json.dumps(FIGURES, indent=1) + "\n")


if __name__ == "__main__":
    main()
