"""Plans at the scale of large language models (issue "scale"): every figure of its benchmark.

Cases, each made by schedkit's own generators into a scratch folder:

- ``layered``: ``generate layered --width 100 --devices 50`` graphs of 10,000 and 60,000
  tasks (about 30 inputs a task), and 200,000 tasks on 1,024 devices of 3 types in servers
  of 8 (``--types 3 --group-size 8``; ``--edge-prob 0.02``, about 3 inputs a task, so that
  the file stays near the issue's 100 MB);
- ``transformer``: ``generate transformer`` GPT-3-sized layers (hidden 12288, 96 heads,
  sequence 2048), forward and backward, 4 micro-batches, at 24, 48 and 96 layers, on 64,
  256 and 1,024 GPUs (``generate platform nodes --gpus 8`` with 8, 32 and 128 servers).

For each: the file's size; in a child process, seconds to load, to run HEFT, to validate
and to compute the lower bound, the makespan and the bound; the wall time, CPU time and
peak memory of ``schedkit solve FILE --method heft -o OUT`` as a whole (its own process,
``wait4``'s ``ru_maxrss``). A case whose generation or solve fails (memory, a refusal)
prints its one-line reason: these are measurements, not tests.

``--limits`` adds, on a layered graph of 100,000 tasks, every method that takes a time
limit at ``--time-limit 30``: wall time against the 33 s target and whether a validated
schedule came back. ``--dask`` runs ``benchmarks/dask_scale.py`` (merge and kedge with parts
on a Dask ``LocalCluster`` of 1 and 2 workers).

Usage::

    python benchmarks/scale.py                          # layered and transformer cases
    python benchmarks/scale.py --only layered --sizes 10000 60000
    python benchmarks/scale.py --limits --dask          # everything (long on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = [sys.executable, "-m", "schedkit.cli"]
#: Memory a child may take (bytes): a case that needs more fails instead of swapping the machine.
MEMORY_CAP = 12 * 2**30
LAYERED = {10_000: ["--levels", "100", "--devices", "50"],
           60_000: ["--levels", "600", "--devices", "50"],
           200_000: ["--levels", "2000", "--devices", "1024", "--types", "3", "--group-size", "8",
                     "--edge-prob", "0.02"]}
TRANSFORMER = {(24, 64): 8, (48, 256): 32, (96, 1024): 128}    # (layers, GPUs): servers of 8
GPT3 = ["--hidden", "12288", "--heads", "96", "--seq", "2048", "--batch", "8", "--forward-backward",
        "--micro-batches", "4"]
LIMITED = ("auto", "milp", "heft", "greedy", "met", "annealing", "bridge_dp", "kedge", "merge", "fusion")


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def schedkit(args: list[str], timeout: float = 1800) -> tuple[int, str, float, float, float]:
    """``schedkit ARGS`` in its own process: exit code, last output line, wall, CPU s, peak MB
    (``wait4``'s figures: that process's own, whatever ran before)."""
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(EXE + args, stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                preexec_fn=_capped)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - began
        out.seek(0)
        text = out.read()
    last = next((ln for ln in reversed(text.strip().splitlines()) if ln.strip()), "")
    return proc.returncode, last, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


INSIDE = """
import json, sys, time
from schedkit import Problem
from schedkit.methods import METHODS
from schedkit.problem.bounds import lower_bound
from schedkit.validate import violations
t0 = time.perf_counter(); p = Problem.load(sys.argv[1]); t1 = time.perf_counter()
result = METHODS.get("heft")().run(p); t2 = time.perf_counter()
found = violations(p, result.schedule); t3 = time.perf_counter()
bound = lower_bound(p); t4 = time.perf_counter()
print(json.dumps({"tasks": len(p.tasks), "edges": len(p.edges), "devices": len(p.devices),
                  "load": t1 - t0, "heft": t2 - t1, "validate": t3 - t2, "bound_s": t4 - t3,
                  "violations": len(found), "makespan": result.schedule.makespan, "bound": bound}))
"""


def inside(path: Path) -> dict | str:
    """Load, HEFT, validation and bound timed in a fresh child; its reason when it fails."""
    done = subprocess.run([sys.executable, "-c", INSIDE, str(path)], capture_output=True, text=True,
                          cwd=ROOT, preexec_fn=_capped)
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return lines[-1] if lines else f"exit {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, path: Path, folder: Path) -> dict:
    """Every figure of one case (see the module documentation)."""
    row = {"case": name, "file_mb": path.stat().st_size / 1e6}
    figures = inside(path)
    if isinstance(figures, str):
        row["error"] = figures
        return row
    row.update(figures)
    code, last, wall, cpu, peak = schedkit(["solve", str(path), "--method", "heft", "-o",
                                            str(folder / f"{name}.schedule.json")])
    row.update(whole=wall, cpu=cpu, peak_mb=peak)
    if code:
        row["error"] = last
    return row


def show(row: dict) -> None:
    if "error" in row and "load" not in row:
        print(f"{row['case']:<22} {row['file_mb']:>7.1f}MB  failed: {row['error']}", flush=True)
        return
    print(f"{row['case']:<22} {row['tasks']:>7,} {row['edges']:>9,} {row['devices']:>5} {row['file_mb']:>7.1f}MB "
          f"{row['load']:>6.2f} {row['heft']:>6.2f} {row['validate']:>6.2f} {row['bound_s']:>6.2f} "
          f"{row.get('whole', float('nan')):>6.2f} {row.get('peak_mb', float('nan')):>7.0f}MB "
          f"{row['makespan']:>11.6g} {row['bound']:>11.6g}"
          + (f"  ({row['violations']} violations!)" if row["violations"] else "")
          + (f"  solve failed: {row['error']}" if "error" in row else ""), flush=True)


def make(args: list[str], path: Path) -> str | None:
    """Generate ``path`` unless it exists; the failure's last line, else ``None``."""
    if path.exists():
        return None
    code, last, *_ = schedkit(args + ["-o", str(path)])
    return last if code else None


def layered_cases(folder: Path, sizes: list[int]) -> list[dict]:
    rows = []
    for size in sizes:
        path = folder / f"layered_{size}.json"
        failed = make(["generate", "layered", "--width", "100", *LAYERED[size]], path)
        rows.append({"case": f"layered {size:,}", "file_mb": 0.0, "error": failed} if failed
                    else measure(f"layered {size:,}", path, folder))
        show(rows[-1])
    return rows


def transformer_cases(folder: Path) -> list[dict]:
    rows = []
    for (layers, gpus), servers in TRANSFORMER.items():
        platform = folder / f"nodes_{servers}x8.yaml"
        path = folder / f"gpt_{layers}_{gpus}.json"
        failed = make(["generate", "platform", "nodes", "--nodes", str(servers), "--gpus", "8"], platform) or \
            make(["generate", "transformer", "--layers", str(layers), *GPT3, "--platform", str(platform)], path)
        name = f"gpt {layers}L on {gpus}"
        rows.append({"case": name, "file_mb": 0.0, "error": failed} if failed else measure(name, path, folder))
        show(rows[-1])
    return rows


def limit_cases(folder: Path, limit: float) -> list[dict]:
    path = folder / "layered_100000.json"
    make(["generate", "layered", "--levels", "1000", "--width", "100", "--devices", "50"], path)
    rows = []
    print(f"\n--time-limit {limit:g} on {path.name} (targets: wall <= {limit * 1.1:.0f} s, issue 29; "
          f"<= {1.05 * limit + 2:.1f} s, issue 28)")
    for method in LIMITED:
        out = folder / f"limit_{method}.json"
        code, last, wall, cpu, peak = schedkit(["solve", str(path), "--method", method, "--time-limit",
                                                str(limit), "-o", str(out)], timeout=limit * 10)
        rows.append({"method": method, "exit": code, "wall": wall, "peak_mb": peak, "last": last})
        print(f"{method:<10} exit {code}  wall {wall:6.1f} s  peak {peak:6.0f} MB  {last[:110]}", flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("layered", "transformer"), help="one family of cases")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(LAYERED), choices=list(LAYERED),
                        help="layered sizes (default: all)")
    parser.add_argument("--limits", action="store_true", help="every method at --time-limit on 100,000 tasks")
    parser.add_argument("--limit", type=float, default=30.0, help="the time limit of --limits (default 30)")
    parser.add_argument("--dask", action="store_true", help="also run benchmarks/dask_scale.py")
    parser.add_argument("--keep", metavar="DIR", help="make the files in DIR and keep them (reused when there)")
    parser.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    args = parser.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="schedkit_scale_"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'case':<22} {'tasks':>7} {'edges':>9} {'devs':>5} {'file':>9} {'load':>6} {'heft':>6} {'valid':>6} "
          f"{'bound':>6} {'whole':>6} {'peak':>9} {'makespan':>11} {'lower bnd':>11}")
    figures: dict = {}
    if args.only in (None, "layered"):
        figures["layered"] = layered_cases(folder, args.sizes)
    if args.only in (None, "transformer"):
        figures["transformer"] = transformer_cases(folder)
    if args.limits:
        figures["limits"] = limit_cases(folder, args.limit)
    if args.dask:
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dask_scale.py")], cwd=ROOT, check=False)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    if not args.keep:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
