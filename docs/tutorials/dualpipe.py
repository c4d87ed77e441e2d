"""Tutorial: She et al. (2025), Figs. 3 and 4: DualPipe's pipeline schedule, a shorter one found by
the MILP, and the memory level of every device over time.

Needs the ``viz`` extra for the pictures. Run from the repository root:
``python docs/tutorials/dualpipe.py`` (about 15 s on two cores). With ``SCHEDKIT_TUTORIAL_FULL=1``
it also solves PP = 8 (384 tasks; about a minute, at most ``PP8_SECONDS``). The pictures go to a
temporary folder (to ``docs/tutorials/_generated`` when the documentation build runs it). Times
depend on the machine and its load.
"""

import math
import os
import sys
import tempfile
from pathlib import Path

OUT = Path("docs/tutorials/_generated") if "run_tutorials" in sys.modules else Path(tempfile.mkdtemp())
OUT.mkdir(parents=True, exist_ok=True)
FULL = os.environ.get("SCHEDKIT_TUTORIAL_FULL") == "1"
PP8_SECONDS = 300
TOL = 1e-6

# [instances]
from schedkit import Problem
from schedkit.generators.dualpipe import dualpipe_schedule
from schedkit.generators.pipeline import bubble, pipeline

SIZES = {2: 4, 4: 8, 8: 16}                # PP (stages = devices) -> M (micro-batches), M = 2 PP
problems = {pp: Problem.from_dict(pipeline(pp, m)) for pp, m in SIZES.items()}
for pp, p in problems.items():
    print(p, f"memory {p.device_memory[0]:g} per device")

data = pipeline(4, 8)                      # one micro-batch of each direction, PP = 4
for t in data["tasks"]:
    if t["name"] in ("I_s3_m0", "W_s3_m0") or t["name"][0] == "F" and t["name"].endswith(("_m0", "_m4")):
        print(f"  {t['name']:8} on {next(iter(t['durations'])):5} weights {t.get('weight_memory', 0):g}"
              f"  activation {t['activation_memory']:+g}")
# [/instances]

for pp, m in SIZES.items():
    p = problems[pp]
    assert (len(p.tasks), len(p.edges), len(p.devices)) == (3 * pp * m, m * (3 * pp - 1), pp)
    assert p.device_memory == [2 + (pp + 1)] * pp          # DualPipe's bound: 2 stages + PP+1 activations

# [dualpipe]
from schedkit import Schedule, get_formulation

fdjssp = get_formulation("fdjssp").blocks
dualpipe = {pp: Schedule.model_validate(dualpipe_schedule(pp, m)) for pp, m in SIZES.items()}
print(f"{'PP':>2} {'M':>3} {'makespan':>8} {'bubble':>6} {'2(PP/2-1)':>9} violations")
for pp, m in SIZES.items():
    s = dualpipe[pp]
    print(f"{pp:2} {m:3} {s.makespan:8g} {bubble(s.makespan, microbatches=m):6g} {2 * (pp // 2 - 1):9} "
          f"{s.violations(problems[pp], fdjssp)}")
# [/dualpipe]

for pp, m in SIZES.items():
    assert dualpipe[pp].violations(problems[pp], fdjssp) == []
    assert bubble(dualpipe[pp].makespan, microbatches=m) == 2 * (pp // 2 - 1)     # DualPipe's formula

# [retime]
from schedkit.timing import retime

early = {pp: retime(problems[pp], dualpipe[pp], "dualpipe+retime") for pp in SIZES}
for pp, m in SIZES.items():
    s = early[pp]
    print(f"PP={pp}: DualPipe's orders re-timed: makespan {s.makespan:g}, "
          f"bubble {bubble(s.makespan, microbatches=m):g} (PP/2-1 = {pp // 2 - 1})")
# [/retime]

for pp, m in SIZES.items():
    assert early[pp].violations(problems[pp], fdjssp) == []
    assert bubble(early[pp].makespan, microbatches=m) == pp // 2 - 1            # She et al.'s bubble

# [solve]
import schedkit

limits = {2: 30, 4: 40} | ({8: PP8_SECONDS} if FULL else {})    # seconds
found = {}
for pp, limit in limits.items():
    found[pp] = schedkit.solve(problems[pp], "milp", formulation="fdjssp", time_limit=limit)
    print(found[pp].summary())
# [/solve]

for pp, s in found.items():
    assert s.formulation["name"] == "fdjssp" and s.violations(problems[pp], fdjssp) == []
    assert s.bound <= s.makespan + TOL
    assert s.status != "optimal" or abs(s.bound - s.makespan) < TOL
assert found[2].status == "optimal" and bubble(found[2].makespan, microbatches=4) == 0
assert found[4].makespan <= dualpipe[4].makespan + TOL      # bubble <= DualPipe's 2
assert bubble(found[4].makespan, microbatches=8) <= 2 + TOL

# [table]
print(f"{'PP':>2} {'M':>3} | {'DualPipe':>8} {'bubble':>6} | {'re-timed':>8} {'bubble':>6} | "
      f"{'MILP':>5} {'bubble':>6} {'paper':>5} {'status':>8} {'bound':>5} {'seconds':>7}")
for pp, m in SIZES.items():
    d, e = dualpipe[pp], early[pp]
    row = (f"{pp:2} {m:3} | {d.makespan:8g} {bubble(d.makespan, microbatches=m):6g} | "
           f"{e.makespan:8g} {bubble(e.makespan, microbatches=m):6g} | ")
    if pp in found:
        s = found[pp]
        row += (f"{s.makespan:5g} {bubble(s.makespan, microbatches=m):6g} {pp // 2 - 1:5} "
                f"{s.status:>8} {s.bound:5g} {s.solve_seconds:7.1f}")
    else:
        row += f"{'-':>5} {'-':>6} {pp // 2 - 1:5} not run (set SCHEDKIT_TUTORIAL_FULL=1)"
    print(row)
halved = bubble(found[4].makespan, microbatches=8) <= 1 + TOL
print(f"PP=4: the MILP's bubble {bubble(found[4].makespan, microbatches=8):g} "
      f"{'reaches' if halved else 'does not reach'} the paper's halved bubble 1; "
      f"{'proven optimal' if found[4].status == 'optimal' else 'status ' + found[4].status}")
# [/table]

# [gantt]
from schedkit.report import render

# The Gantt renderer's memory panel counts an output until its readers end (mode lifetime),
# not the deltas of this instance: draw the charts from the same instance without memory data.
bare = Problem.from_dict(pipeline(4, 8, weights=0, activation=0))
for name, s, what in (("dualpipe", dualpipe[4], "DualPipe's schedule"), ("milp", found[4], "MILP (fdjssp)")):
    title = (f"{what}, PP = 4, M = 8: makespan {s.makespan:g}, "
             f"bubble {bubble(s.makespan, microbatches=8):g}")
    (OUT / f"dualpipe_pp4_{name}.png").write_bytes(render("gantt", bare, s, title=title, width=18))
# [/gantt]

# [memory]
from matplotlib.figure import Figure

from schedkit.report.layout import memory_series

p4 = problems[4]
shown = {"DualPipe": dualpipe[4], "MILP (fdjssp)": found[4]}
memory = {what: memory_series(p4, s, mode="deltas") for what, s in shown.items()}   # the block's levels
fig = Figure(figsize=(12, 7), layout="constrained")
axes = fig.subplots(len(p4.devices), len(shown), sharex=True, sharey=True, squeeze=False)
for column, (what, s) in enumerate(shown.items()):
    axes[0][column].set_title(f"{what}: makespan {s.makespan:g}", fontsize=10)
    for row, device in enumerate(p4.devices):
        ax, points = axes[row][column], memory[what][device]
        points = points + [(s.makespan, points[-1][1])]            # drawn to the makespan
        ax.step([t for t, _ in points], [v for _, v in points], where="post", color="C0",
                label="memory level")
        ax.axhline(p4.device_memory[row], color="black", linestyle="--", linewidth=0.8, label="capacity")
        ax.axhline(2, color="grey", linestyle=":", linewidth=0.8, label="weights (2 stages)")
        ax.set_ylim(0, p4.device_memory[row] + 1)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        if column == 0:
            ax.set_ylabel(device)
    axes[-1][column].set_xlabel("time")
axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
fig.suptitle("PP = 4, M = 8: memory level of each device (weights + activations held)", fontsize=11)
fig.supylabel("memory (one stage's weights = 1, one activation = 1)", fontsize=9)
fig.savefig(OUT / "dualpipe_pp4_memory.png", dpi=100)
for what, per_device in memory.items():
    print(f"{what}: peak per device", {d: max(v for _, v in pts) for d, pts in per_device.items()})
print(sorted(p.name for p in OUT.glob("dualpipe_*")), "in", OUT)
# [/memory]

for what, per_device in memory.items():
    for d, points in per_device.items():
        capacity = p4.device_memory[p4.device_index[d]]
        assert all(level <= capacity + TOL for _, level in points), (what, d)   # never above
        assert points[-1][1] == 2.0, (what, d)          # every activation given back: the weights
for d, points in memory["DualPipe"].items():
    assert max(v for _, v in points) == 2 + 5, d      # DualPipe holds exactly PP+1 activations
from schedkit.blocks.memory_timeline import MemoryTimeline

for pp, s in [*dualpipe.items(), *early.items(), *found.items()]:
    assert MemoryTimeline(mode="deltas").violations(problems[pp], s) == []
for name in ("dualpipe", "milp", "memory"):
    assert (OUT / f"dualpipe_pp4_{name}.png").stat().st_size > 10_000
