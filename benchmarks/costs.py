"""Benchmark measured costs on this machine's CPU (issue 31's targets): profile, calibrate, execute.

For each light model of the onnx wheel (ResNet-50, Inception v1, DenseNet-121 by default):

1. ``schedkit profile`` (onnxruntime, 1 thread, ``--runs`` runs after 3 warm-up): its wall
   time, the table's nodes' sum, the time a run spends outside the nodes (measured in pairs
   of runs) and the median unprofiled latency.
2. ``schedkit calibrate`` of a CPU worker of ``generate platform --cpus 2 --gpus 0`` (two
   server-preset CPUs and a link) to that table: the roofline's error before and after
   (median and p90 of ``|log(predicted / measured)|`` per node), and the calibrated
   single-device latency (every operator on the calibrated worker, back to back) against
   the measured one (the table's nodes plus the time outside them; target: within 15 %).
   With several models, one roofline fitted to all of them as well.
3. ``convert onnx --costs`` with the table on both workers (one thread each), a single-device
   plan (every task on ``cpu0``: its makespan is the durations' sum) and the plans of
   ``solve -m heft`` and ``-m auto --time-limit 20``, each run by ``schedkit execute`` with
   ``--runs`` runs: measured latency / predicted makespan (target: within 25 % for a
   two-worker plan of ResNet-50 and Inception v1), and per device the busy time measured
   and predicted.

The machine is shared: its load average (``os.getloadavg``) is printed beside each model, as
a run that shares a core with another process takes longer than any plan predicts.

Usage::

    python benchmarks/costs.py                          # the three models, 20 runs
    python benchmarks/costs.py --models resnet50 --runs 10 --auto-limit 5
    python benchmarks/costs.py --json figures.json      # every figure, for the closing note
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

MODELS = ("resnet50", "inception_v1", "densenet121")
TWO_WORKERS = ("heft", "auto")


def light(model: str) -> Path:
    import onnx

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{model}.onnx"
    if not path.exists():
        raise SystemExit(f"no light model {model!r} in the onnx wheel ({path.parent})")
    return path


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def read_onnx(model: Path, platform: dict, costs: list | None = None) -> dict:
    from schedkit.importers.onnx import Onnx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the light models' unknown shapes, said by convert itself
        return Onnx().read(model, platform=platform, costs=costs)


def calibration(tables: dict, start: dict) -> dict:
    """Per model: the roofline fitted to its table, its errors, and the single-device latency."""
    from schedkit.costs.calibrate import calibrate_platform

    out = {}
    for name, (path, table) in tables.items():
        new, fit = calibrate_platform(start, table, "cpu0")
        before, after = fit.errors_before[0], fit.errors_after[0]
        cpu0 = new["devices"][0]
        single = sum(t["durations"]["cpu0"] for t in read_onnx(path, {"time_unit": "ms", "devices": [cpu0]})["tasks"])
        out[name] = {"median_before": before.median, "p90_before": before.p90,
                     "median_after": after.median, "p90_after": after.p90,
                     "predicted_before": before.predicted, "predicted_after": after.predicted,
                     "single_predicted": single, "measured": table.latency() * 1e3,
                     "end_to_end": table.total.median,
                     "roofline": {k: cpu0[k] for k in ("peak_flops", "memory_bandwidth", "launch_overhead")}}
    if len(tables) > 1:
        from schedkit.costs.calibrate import fit_roofline, Roofline

        d = start["devices"][0]
        joint = fit_roofline([t for _, t in tables.values()],
                             Roofline(d["peak_flops"], d["memory_bandwidth"], d["launch_overhead"]))
        for (name, (_, table)), errors in zip(tables.items(), joint.errors_after):
            out[name]["joint"] = {"median": errors.median, "p90": errors.p90, "predicted": errors.predicted}
    return out


def single_device(problem):
    """A one-device copy of ``problem`` (cpu0 only) and its plan (HEFT's order, back to back)."""
    import schedkit

    data = problem.spec.model_dump(exclude_none=True)
    data["devices"] = [d for d in data["devices"] if d["name"] == "cpu0"]
    data["links"] = []
    for key in ("measured", "measured_overhead"):
        data[key] = {"cpu0": data[key]["cpu0"]}
    for task in data["tasks"]:
        task["durations"] = {"cpu0": task["durations"]["cpu0"]}
    alone = schedkit.Problem.from_dict(data)
    return alone, schedkit.solve(alone, "heft")


def run_plans(path: Path, table, platform: dict, runs: int, auto_limit: float) -> dict:
    """The single-device and two-worker plans of the model, each executed."""
    import schedkit
    from schedkit.execute import execute

    problem = schedkit.Problem.from_dict(read_onnx(path, platform, [table.measured()]))
    plans = {"single": single_device(problem), "heft": (problem, schedkit.solve(problem, "heft")),
             "auto": (problem, schedkit.solve(problem, "auto", time_limit=auto_limit))}
    out = {}
    for name, (solved, schedule) in plans.items():
        began = time.perf_counter()
        run = execute(path, schedule, problem=solved, runs=runs, warmup=2, threads=1)
        out[name] = {"predicted": run.predicted_makespan, "measured": run.latency,
                     "ratio": run.latency / run.predicted_makespan, "segments": run.segments,
                     "busy": run.busy, "predicted_busy": run.predicted_busy,
                     "status": schedule.status, "seconds": time.perf_counter() - began, "load": load()}
        log(f"  {name}: predicted {run.predicted_makespan:.2f} ms, measured {run.latency:.2f} ms "
            f"(load {load()})")
    return out


def bench(model: str, runs: int, auto_limit: float, start: dict) -> tuple[dict, tuple]:
    from schedkit.costs.profile import profile_model

    path = light(model)
    log(f"{model}: profile (load {load()})")
    began = time.perf_counter()
    table, _ = profile_model(path, runs=runs, warmup=3, threads=1)
    figures = {"model": model, "profile_seconds": time.perf_counter() - began, "load": load(),
               "nodes": len(table.nodes), "ran": len(table.ran()),
               "nodes_sum": sum(n.median for n in table.nodes), "outside": table.total.overhead,
               "end_to_end": table.total.median}
    figures["plans"] = run_plans(path, table, start, runs, auto_limit)
    return figures, (path, table)


def report(figures: list[dict], cal: dict, runs: int) -> list[str]:
    lines = [f"# Measured costs on this CPU ({os.cpu_count()} cores), onnxruntime 1 thread per worker, "
             f"{runs} runs", "",
             "## Profile and calibration (times in ms)", "",
             "| model | profile s | load | nodes' sum | outside | end to end | err median before→after "
             "| err p90 before→after | 1-device predicted before→after | measured | ratio after |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in figures:
        c = cal[f["model"]]
        lines.append(f"| {f['model']} | {f['profile_seconds']:.1f} | {f['load']} | {f['nodes_sum']:.2f} | "
                     f"{f['outside']:.2f} | {f['end_to_end']:.2f} | {c['median_before']:.3f}→{c['median_after']:.3f} "
                     f"| {c['p90_before']:.3f}→{c['p90_after']:.3f} | {c['predicted_before']:.2f}→{c['single_predicted']:.2f} | "
                     f"{c['measured']:.2f} | {c['single_predicted'] / c['measured']:.3f} |")
    if any("joint" in c for c in cal.values()):
        lines += ["", "One roofline fitted to all models together: whole model predicted / measured: " +
                  ", ".join(f"{m} {c['joint']['predicted'] / c['measured']:.3f} (per-node median "
                            f"{c['joint']['median']:.3f})" for m, c in cal.items())]
    lines += ["", "## Plans executed (measured latency / predicted makespan; busy measured/predicted ms)", "",
              "| model | plan | load | segments | predicted | measured | ratio | busy per device |",
              "|---|---|---|---|---|---|---|---|"]
    for f in figures:
        for name, p in f["plans"].items():
            busy = ", ".join(f"{d} {p['busy'][d]:.1f}/{p['predicted_busy'][d]:.1f}" for d in p["busy"])
            segments = "+".join(str(n) for n in p["segments"].values())
            lines.append(f"| {f['model']} | {name} | {p['load']} | {segments} | {p['predicted']:.2f} | "
                         f"{p['measured']:.2f} | {p['ratio']:.3f} | {busy} |")
    lines += ["", "## Targets", ""]
    for f in figures:
        c = cal[f["model"]]
        off = abs(c["single_predicted"] / c["measured"] - 1)
        lines.append(f"- {f['model']}: calibrated single-device latency within 15 %: "
                     f"{'yes' if off <= 0.15 else 'NO'} ({off:.1%})")
        for name in TWO_WORKERS:
            ratio = f["plans"][name]["ratio"]
            target = " (target: within 25 %)" if f["model"] in ("resnet50", "inception_v1") else ""
            lines.append(f"- {f['model']} two workers, {name}: measured/predicted {ratio:.3f}{target}: "
                         f"{'yes' if abs(ratio - 1) <= 0.25 else 'NO'}")
    lines.append(f"\nload average at the end: {load()} (1, 5, 15 min)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated light models [{','.join(MODELS)}]")
    parser.add_argument("--runs", type=int, default=20, help="profiled and executed runs [20]")
    parser.add_argument("--auto-limit", type=float, default=20.0, help="auto's time limit, s [20]")
    parser.add_argument("--json", default=None, metavar="FILE", help="write every figure as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs: give at least 1")
    from schedkit.generators.platform import platform

    start = platform(cpus=2, gpus=0)
    figures, tables = [], {}
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        row, tables[model] = bench(model, args.runs, args.auto_limit, start)
        figures.append(row)
    cal = calibration(tables, start)
    lines = report(figures, cal, args.runs)
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "calibration": cal,
                                               "load_end": load()}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
