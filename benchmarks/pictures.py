"""Benchmark the renderers on a large schedule: the plot Target of the importers issue.

A layered graph after Mayer et al. (2017) (:func:`schedkit.generators.layered`; by default
40 levels x 100 tasks = 4,000 tasks on 50 devices, every pair of devices linked), scheduled
with HEFT; then the wall-clock seconds of every picture: the matplotlib Gantt chart as PNG and
SVG (target: under 10 s), the plain SVG, the Chrome trace and the HTML report, with the size of
each file. ``--out FOLDER`` keeps the files to look at.

Usage::

    python benchmarks/pictures.py
    python benchmarks/pictures.py --levels 10 --devices 200 --out /tmp/pictures
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from schedkit import Problem, solve
from schedkit.atomic import write_text_atomic
from schedkit.progress import Progress
from schedkit.generators import layered
from schedkit.report import render

KINDS = [("gantt.png", "gantt", {"format": "png"}), ("gantt.svg", "gantt", {"format": "svg"}),
         ("plain.svg", "svg", {}), ("trace.json", "trace", {}), ("report.html", "html", {})]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, default=40)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--devices", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", metavar="FOLDER", help="keep the pictures in this folder")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    problem = Problem.from_dict(layered(args.levels, args.width, edge_prob=0.05, long_range_prob=0.1,
                                        devices=args.devices, seed=args.seed))
    schedule = solve(problem, "heft")
    print(f"{problem}: HEFT makespan {schedule.makespan:.4g}, {len(schedule.transfers)} transfers "
          f"({time.perf_counter() - began:.1f} s to generate and schedule)")
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    figures = {}
    with Progress(len(KINDS), "pictures") as bar:
        for name, kind, options in KINDS:
            bar.update(bar.done, name)
            start = time.perf_counter()
            content = render(kind, problem, schedule, **options)
            seconds = time.perf_counter() - start
            figures[name] = {"seconds": seconds, "bytes": len(content)}
            if out:
                target = out / name
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text(content)
            bar.update(bar.done + 1, name)
    print(f"{'picture':12} {'seconds':>8} {'size':>10}")
    for name, f in figures.items():
        print(f"{name:12} {f['seconds']:8.2f} {f['bytes'] / 1e6:9.2f}M")
    if args.json:
        write_text_atomic(args.json, json.dumps({"tasks": len(problem.tasks), "devices": len(problem.devices),
                                                 "figures": figures}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
