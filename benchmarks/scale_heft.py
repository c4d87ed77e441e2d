"""HEFT at scale: layered graphs of 10,000 and 60,000 tasks on 50 devices (issue 29).

For each size, the graph is made by ``schedkit generate layered --levels L --width 100
--devices 50`` into a temporary folder (about 30 inputs per task: 300,000 edges for
10,000 tasks). The script prints, per size:

- ``file``: the problem file's size;
- ``load``, ``heft``, ``validate``: seconds in this process, for ``Problem.load``,
  HEFT's run (priority, list schedule, schedule assembly, bound) and the validator;
- ``whole``, ``cpu``, ``peak``: wall-clock seconds, CPU seconds (user + system: the
  figure to compare on a loaded machine) and peak resident memory of
  ``schedkit solve FILE --method heft -o OUT`` in a child process (reading, solving,
  validating, writing), from ``resource.getrusage(RUSAGE_CHILDREN)``: each size runs in its
  own child of a fresh interpreter, so the peak is that command's own.

The targets: 60,000 tasks under 10 s whole and under 1 GB peak.

Usage::

    python benchmarks/scale_heft.py                   # 10k and 60k
    python benchmarks/scale_heft.py --levels 100      # 10k only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def measure_in_process(path: Path) -> dict:
    """Seconds of load, HEFT and validation in this process (a fresh child per size)."""
    code = f"""
import json, time
import schedkit
from schedkit import Problem
from schedkit.methods import METHODS
t0 = time.perf_counter(); p = Problem.load({str(path)!r}); t1 = time.perf_counter()
result = METHODS.get("heft")().run(p); t2 = time.perf_counter()
found = schedkit.validate.violations(p, result.schedule); t3 = time.perf_counter()
print(json.dumps({{"load": t1 - t0, "heft": t2 - t1, "validate": t3 - t2, "violations": len(found),
                  "makespan": result.schedule.makespan}}))
"""
    return json.loads(_run(code).strip().splitlines()[-1])


def measure_whole(path: Path, out: Path) -> dict:
    """Wall clock and peak memory of ``schedkit solve`` in a child process of a fresh child."""
    code = f"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run([sys.executable, "-m", "schedkit.cli", "solve", {str(path)!r}, "--method", "heft",
                "-o", {str(out)!r}], check=True, stdout=subprocess.DEVNULL)
wall = time.perf_counter() - t
used = resource.getrusage(resource.RUSAGE_CHILDREN)
peak = used.ru_maxrss / 1024  # kB on Linux
print(json.dumps({{"whole": wall, "cpu": used.ru_utime + used.ru_stime, "peak_mb": peak}}))
"""
    return json.loads(_run(code).strip().splitlines()[-1])


def _run(code: str) -> str:
    """The output of ``python -c code``; its error output in the exception when it fails."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[100, 600],
                        help="levels of 100 tasks each (default: 100 600, i.e. 10k and 60k tasks)")
    parser.add_argument("--devices", type=int, default=50)
    parser.add_argument("--keep", metavar="DIR", help="make the files in DIR and keep them")
    args = parser.parse_args(argv)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="scale_heft_"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'tasks':>7} {'file':>8} {'load':>6} {'heft':>6} {'validate':>8} {'whole':>6} {'cpu':>6} "
          f"{'peak':>8}  makespan")
    for levels in args.levels:
        path = folder / f"layered_{levels}x100_{args.devices}.json"
        if not path.exists():
            subprocess.run([sys.executable, "-m", "schedkit.cli", "generate", "layered", "--levels", str(levels),
                            "--width", "100", "--devices", str(args.devices), "-o", str(path)],
                           check=True, stdout=subprocess.DEVNULL)
        inside = measure_in_process(path)
        whole = measure_whole(path, folder / f"heft_{levels}.json")
        print(f"{levels * 100:>7} {os.path.getsize(path) / 1e6:>6.1f}MB {inside['load']:>6.2f} {inside['heft']:>6.2f} "
              f"{inside['validate']:>8.2f} {whole['whole']:>6.2f} {whole['cpu']:>6.2f} {whole['peak_mb']:>6.0f}MB  "
              f"{inside['makespan']:.6g}" + (f"  ({inside['violations']} violations!)" if inside["violations"] else ""),
              flush=True)
    if not args.keep:
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
