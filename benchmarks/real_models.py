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
method and never worse than HEFT; wall time at most 1.05 x limit + 2 s for every run; the
named targets (:data:`TARGETS`: BERT-12 and ResNet-50 operator graphs, DenseNet-121,
Inception v1 and ResNet-50 proven, the ResNet-50 layer graph's bound) and a proven gap of at
most 2 % where no device has a memory limit.

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


#: The decomposition methods: a formulation reaches them as their inner method's option.
DECOMPOSITIONS = ("bridge_dp", "kedge", "merge", "fusion")


def solve(path: Path, extra: list[str], method: str, limit: float) -> dict:
    """One ``schedkit solve`` run; the figures of its schedule file."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "s.json"
        if method in DECOMPOSITIONS and extra[:1] == ["-f"]:  # (their parts take the formulation)
            extra = ["--inner-options", f"formulation={extra[1]}", *extra[2:]]
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
            row["crashed"] = not lines  # (a refusal is one "schedkit: error" line; anything else is a fault)
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
    parser.add_argument("--report", nargs="+", metavar="JSON",
                        help="run nothing: print the table and the checks of figures written by --json "
                             "(several files: the rows of one instance together)")
    args = parser.parse_args()
    if args.report:
        _print(merged(args.report), args.limit)
        return 0
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
        table.append({"instance": name, "rows": rows, "memory_limited": memory_limited(path)})
    _print(table, args.limit)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


#: The issue's targets on named instances: (instance, what, check of the ``auto`` row).
TARGETS = [
    ("MSR operator/bert_l-12", "auto at most 660", lambda r: r["makespan"] <= 660),
    ("MSR operator/resnet50", "auto at most 400", lambda r: r["makespan"] <= 400),
    ("densenet121 (default)", "auto at most 5.31", lambda r: r["makespan"] <= 5.31),
    ("inception_v1 (default)", "auto proven optimal", lambda r: r["status"] == "optimal"),
    ("resnet50 (default)", "auto proven optimal", lambda r: r["status"] == "optimal"),
    ("MSR layer/resnet50", "auto's bound at least 560", lambda r: (r.get("bound") or 0) >= 560),
]
#: Largest proven gap of ``auto`` where no device has a memory limit.
UNLIMITED_GAP = 0.02


def memory_limited(path: Path) -> bool:
    """Whether memory can bind: some device cannot hold every task's memory at once."""
    data = json.loads(Path(path).read_text())
    need = sum(t.get("memory") or 0 for t in data.get("tasks", []))
    return any(d.get("memory") is not None and d["memory"] < need for d in data.get("devices", []))


def _gap(row: dict) -> float | None:
    """The proven gap of a row (never below 0: a bound a rounding above the makespan is 0)."""
    if row.get("makespan") is None or row.get("bound") is None or not row["makespan"]:
        return None
    return max(0.0, (row["makespan"] - row["bound"]) / row["makespan"])


def _target_misses(entry: dict, auto: dict | None) -> list[str]:
    """The issue's absolute targets and the gap target that ``entry``'s ``auto`` row misses."""
    misses = [f"{entry['instance']}: {what} ({'no schedule' if auto is None else format(auto['makespan'], '.6g')}, "
              f"bound {'-' if auto is None or auto.get('bound') is None else format(auto['bound'], '.6g')})"
              for name, what, check in TARGETS if name == entry["instance"] and (auto is None or not check(auto))]
    gap = None if auto is None else _gap(auto)
    if auto is not None and not entry.get("memory_limited", True) and (gap is None or gap > UNLIMITED_GAP):
        misses.append(f"{entry['instance']}: no memory limit, and auto's gap is "
                      f"{'unknown' if gap is None else f'{100 * gap:.2f}%'} (at most {100 * UNLIMITED_GAP:.0f}%)")
    return misses


def merged(paths: list[str]) -> list[dict]:
    """The tables of several ``--json`` files as one: the rows of an instance together, in order."""
    table: dict[str, dict] = {}
    for path in paths:
        for entry in json.loads(Path(path).read_text()):
            kept = table.setdefault(entry["instance"], {**entry, "rows": []})
            kept["rows"] += entry["rows"]
    return list(table.values())


def _cell(row: dict) -> str:
    if row.get("makespan") is None:
        return f"- ({row.get('error') or row.get('status')})"
    gap = "" if _gap(row) is None else f" gap {100 * _gap(row):.2f}%"
    return f"{row['makespan']:.6g} [{row['status']}]{gap}"


def _print(table: list[dict], limit: float) -> None:
    print("\n| instance | method | makespan | bound | gap | wall s | peak MB |\n|---|---|---|---|---|---|---|")
    misses = []
    for entry in table:
        rows = entry["rows"]
        found = [r for r in rows if r.get("makespan") is not None]
        best = min((r["makespan"] for r in found), default=None)
        bound = max((r["bound"] for r in found if r.get("bound") is not None), default=None)
        for r in rows:
            gap = "" if _gap(r) is None else f"{100 * _gap(r):.2f}%"
            makespan = "-" if r.get("makespan") is None else f"{r['makespan']:.6g}"
            note = f" ({r['error']})" if r.get("error") else ""
            print(f"| {entry['instance']} | {r['method']} | {makespan}{note} | "
                  f"{'' if r.get('bound') is None else format(r['bound'], '.6g')} | {gap} | "
                  f"{r['wall']:.1f} | {r['peak_mb']:.0f} |")
            if r.get("crashed"):
                misses.append(f"{entry['instance']}: {r['method']} failed without a one-line error: {r['error']}")
            if r["wall"] > 1.05 * limit + 2:
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
        if any(r["method"] == "auto" for r in rows):
            misses += _target_misses(entry, auto)
    print("\nTargets missed:" if misses else "\nEvery target of the table met.")
    for line in misses:
        print(f"- {line}")


if __name__ == "__main__":
    sys.exit(main())
