"""Benchmark ``auto`` against every single method on real models (issue "auto"'s Targets).

Instances, converted by schedkit's own importers into a scratch folder:

- the onnx wheel's light models (``backend/test/data/light/``: DenseNet-121, Inception v1
  and v2, ResNet-50, SqueezeNet, ShuffleNet, ZFNet-512, VGG-19, AlexNet) on two platforms:
  ``schedkit generate platform`` (a CPU and two A100s) and ``generate platform nodes
  --nodes 2 --gpus 4``;
- the 8 MSR graphs of ``data/msr-dnn`` (layer and operator);
- the 5 MOIRAI tables of ``data/moirai`` under ``-f moirai``.

On each: HEFT, then every single method that applies (``milp``, ``bridge_dp``, ``kedge``,
``merge``) and ``auto``, each given ``--limit`` seconds (60 by default). Every run is a
separate ``schedkit solve`` process, so that its wall time counts the loading and its peak
memory (``wait4``'s ``ru_maxrss``) is its own. For each run: makespan, bound, gap, wall time
and peak memory; per instance, the best known makespan (the shortest of these runs) and the
best bound. A method that refuses an instance prints its one-line reason.

Checks printed at the end (the issue's targets): ``auto`` within 1 % of the best single
method and never worse than HEFT; wall time at most 1.05 x limit + 2 s for every run.

Usage::

    python benchmarks/real_models.py                       # everything (several hours on 2 cores)
    python benchmarks/real_models.py --only msr --limit 60
    python benchmarks/real_models.py --only onnx --models resnet50,inception_v1 --methods heft,auto
    python benchmarks/real_models.py --json figures.json   # every figure, for the closing note
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONNX_MODELS = ("densenet121", "inception_v1", "resnet50", "inception_v2", "squeezenet", "shufflenet",
               "zfnet512", "vgg19", "bvlc_alexnet")
SINGLE = ("milp", "bridge_dp", "kedge", "merge")
PLATFORMS = {"default": [], "nodes": ["nodes", "--nodes", "2", "--gpus", "4"]}
EXE = [sys.executable, "-m", "schedkit.cli"]


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: list[str], timeout: float) -> tuple[int, str, float, float]:
    """``schedkit ARGS`` in its own process: exit code, output, wall seconds, peak MB."""
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(EXE + args, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, text=True)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except KeyboardInterrupt:
            proc.kill()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    return proc.returncode, text, time.perf_counter() - began, usage.ru_maxrss / 1024


def instances(scratch: Path, only: set[str], models: set[str] | None,
              platforms: set[str] | None = None) -> list[tuple[str, Path, list[str]]]:
    """``(name, problem file, extra solve arguments)``, converted on the way."""
    import onnx

    found = []
    if "onnx" in only:
        light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
        for platform, args in PLATFORMS.items():
            if platforms and platform not in platforms:
                continue
            devices = scratch / f"platform-{platform}.json"
            if not devices.exists():
                _convert(["generate", "platform", *args, "-o", str(devices)])
            for model in ONNX_MODELS:
                if models and model not in models:
                    continue
                path = scratch / f"{model}-{platform}.json"
                if not path.exists():
                    _convert(["convert", "onnx", str(light / f"light_{model}.onnx"), "--platform", str(devices),
                              "-o", str(path)])
                found.append((f"{model} ({platform})", path, []))
    if "msr" in only:
        for source in sorted((ROOT / "data" / "msr-dnn").glob("*/*.json")):
            name = f"{source.parent.name}/{source.stem.replace('_inference', '')}"
            if models and source.stem.replace("_inference", "") not in models:
                continue
            path = scratch / f"msr-{source.parent.name}-{source.stem}.json"
            if not path.exists():
                _convert(["convert", "msr", str(source), "-o", str(path)])
            found.append((f"MSR {name}", path, []))
    if "moirai" in only:
        for source in sorted((ROOT / "data" / "moirai").glob("*.xls")):
            if models and source.stem not in models:
                continue
            path = scratch / f"moirai-{source.stem}.json"
            if not path.exists():
                _convert(["convert", "moirai", str(source), "-o", str(path)])
            found.append((f"MOIRAI {source.stem}", path, ["-f", "moirai"]))
    return found


def _convert(args: list[str]) -> None:
    code, text, _, _ = run(args, 600)
    if code != 0:
        raise SystemExit(f"schedkit {' '.join(args)} failed: {text.strip()}")


def solve(path: Path, extra: list[str], method: str, limit: float) -> dict:
    """One ``schedkit solve`` run; the figures of its schedule file."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "s.json"
        args = ["solve", str(path), "-m", method, "-q", "-o", str(out), *extra]
        if method != "heft":
            args += ["--time-limit", str(limit)]
        code, text, wall, peak = run(args, 3 * limit + 120)
        row = {"method": method, "wall": wall, "peak_mb": peak, "code": code}
        if out.exists():
            data = json.loads(out.read_text())
            row.update({k: data.get(k) for k in ("status", "makespan", "bound")})
        else:
            lines = [ln for ln in text.strip().splitlines() if ln.startswith("schedkit: error")]
            row["error"] = (lines or text.strip().splitlines()[-1:] or ["?"])[-1][:140]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per method (default 60)")
    parser.add_argument("--only", default="onnx,msr,moirai", help="instance families (onnx, msr, moirai)")
    parser.add_argument("--models", help="comma-separated model names to keep (resnet50, bert_l-12, GoogLeNet, ...)")
    parser.add_argument("--platforms", help="ONNX platforms to keep (default, nodes)")
    parser.add_argument("--methods", default=",".join(("heft", *SINGLE, "auto")),
                        help="methods to run (default: heft, milp, bridge_dp, kedge, merge, auto)")
    parser.add_argument("--scratch", default=str(Path(tempfile.gettempdir()) / "schedkit-real-models"),
                        help="folder for the converted problems (kept between runs)")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args()
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    models = set(args.models.split(",")) if args.models else None
    methods = args.methods.split(",")
    table = []
    platforms = set(args.platforms.split(",")) if args.platforms else None
    for name, path, extra in instances(scratch, set(args.only.split(",")), models, platforms):
        rows = []
        for method in methods:
            log(f"{name}: {method} ...")
            row = solve(path, extra, method, args.limit)
            rows.append(row)
            log(f"  {_cell(row)}  ({row['wall']:.1f} s, {row['peak_mb']:.0f} MB)")
        table.append({"instance": name, "rows": rows})
    _print(table, args.limit)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


def _cell(row: dict) -> str:
    if row.get("makespan") is None:
        return f"- ({row.get('error') or row.get('status')})"
    bound = row.get("bound")
    gap = "" if not bound else f" gap {100 * (row['makespan'] - bound) / row['makespan']:.2f}%"
    return f"{row['makespan']:.6g} [{row['status']}]{gap}"


def _print(table: list[dict], limit: float) -> None:
    print(f"\n| instance | method | makespan | bound | gap | wall s | peak MB |\n|---|---|---|---|---|---|---|")
    misses = []
    for entry in table:
        rows = entry["rows"]
        found = [r for r in rows if r.get("makespan") is not None]
        best = min((r["makespan"] for r in found), default=None)
        bound = max((r["bound"] for r in found if r.get("bound") is not None), default=None)
        for r in rows:
            gap = "" if r.get("makespan") is None or r.get("bound") is None else \
                f"{100 * (r['makespan'] - r['bound']) / r['makespan']:.2f}%"
            makespan = "-" if r.get("makespan") is None else f"{r['makespan']:.6g}"
            note = f" ({r['error']})" if r.get("error") else ""
            print(f"| {entry['instance']} | {r['method']} | {makespan}{note} | "
                  f"{'' if r.get('bound') is None else format(r['bound'], '.6g')} | {gap} | "
                  f"{r['wall']:.1f} | {r['peak_mb']:.0f} |")
            if r["method"] != "heft" and r["wall"] > 1.05 * limit + 2:
                misses.append(f"{entry['instance']}: {r['method']} took {r['wall']:.1f} s")
        print(f"| {entry['instance']} | **best known** | {best if best is None else format(best, '.6g')} | "
              f"{'' if bound is None else format(bound, '.6g')} | | | |")
        auto = next((r for r in rows if r["method"] == "auto" and r.get("makespan") is not None), None)
        singles = [r["makespan"] for r in found if r["method"] in SINGLE]
        heft = next((r["makespan"] for r in found if r["method"] == "heft"), None)
        if auto is not None and singles and auto["makespan"] > 1.01 * min(singles):
            misses.append(f"{entry['instance']}: auto {auto['makespan']:.6g} is more than 1 % above "
                          f"the best single method's {min(singles):.6g}")
        if auto is not None and heft is not None and auto["makespan"] > heft * (1 + 1e-9):
            misses.append(f"{entry['instance']}: auto {auto['makespan']:.6g} is worse than HEFT's {heft:.6g}")
    print("\nTargets missed:" if misses else "\nEvery target of the table met.")
    for line in misses:
        print(f"- {line}")


if __name__ == "__main__":
    sys.exit(main())
