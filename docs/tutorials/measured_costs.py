"""Tutorial: measure a model on this machine, plan it on two CPU workers, run the plan, compare.

Needs the ``profile``, ``calibrate`` and ``viz`` extras (``pip install
'schedkit[profile,calibrate,viz]'``). Run from the repository root: ``python
docs/tutorials/measured_costs.py``. The picture goes to a temporary folder (to
``docs/tutorials/_generated`` when the documentation build runs it). Three runs of each kind
keep it short; the figures of ``benchmarks/costs.py`` take twenty.
"""

import os
import sys
import tempfile
import warnings
from pathlib import Path

import onnx

OUT = Path("docs/tutorials/_generated") if "run_tutorials" in sys.modules else Path(tempfile.mkdtemp())
OUT.mkdir(parents=True, exist_ok=True)
warnings.simplefilter("ignore")  # the light model's unknown shapes: convert says so, not news here

# [profile]
from schedkit.costs.profile import profile_model

model = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_inception_v1.onnx"
table, _ = profile_model(model, runs=3, warmup=1, threads=1)
nodes_sum = sum(n.median for n in table.nodes)
print(f"{len(table.nodes)} nodes, {len(table.ran())} run by onnxruntime; nodes' sum {nodes_sum:.2f} ms, "
      f"{table.total.overhead:.2f} ms outside them per run, {table.total.median:.2f} ms end to end "
      f"(load average {os.getloadavg()[0]:.1f})")
slowest = sorted(table.nodes, key=lambda n: -n.median)[:3]
print("slowest:", ", ".join(f"{n.name} ({n.op_type}) {n.median:.2f} ms" for n in slowest))
# [/profile]

assert len(table.nodes) == 143 and table.unit == "ms"
assert all(n.median == 0 for n in table.nodes if n.calls == 0)   # folded away: no time of its own

# [calibrate]
from schedkit.costs.calibrate import calibrate_platform
from schedkit.generators.platform import platform

start = platform(cpus=2, gpus=0)           # two server-preset CPUs and a link between them
calibrated, fit = calibrate_platform(start, table, "cpu0")
cpu0 = calibrated["devices"][0]
calibrated["devices"][1] = {**cpu0, "name": "cpu1"}   # the other worker is the same CPU
before, after = fit.errors_before[0], fit.errors_after[0]
print(f"peak {fit.before.peak_flops:.3g} -> {fit.after.peak_flops:.3g} FLOP/s, bandwidth "
      f"{fit.before.memory_bandwidth:.3g} -> {fit.after.memory_bandwidth:.3g} B/s, launch "
      f"{fit.before.launch_overhead:.3g} -> {fit.after.launch_overhead:.3g} s")
print(f"|log(predicted/measured)| per node: median {before.median:.2f} -> {after.median:.2f}; "
      f"whole model {before.predicted:.2f} -> {after.predicted:.2f} ms, measured "
      f"{table.latency() * 1e3:.2f} ms")
# [/calibrate]

assert after.median < before.median
assert abs(after.predicted / (table.latency() * 1e3) - 1) < 0.15   # the whole model's sum is kept

# [solve]
import schedkit
from schedkit.importers import convert

data = convert("onnx", model, platform=calibrated, costs=[table.measured()])
problem = schedkit.Problem.from_dict(data)
plan = schedkit.solve(problem, "heft")
alone = sum(problem.durations[i][0] for i in range(len(problem.tasks)))   # every task on cpu0
print(data["measured"], data["measured_overhead"])
print(plan.summary())
print(f"one worker: {alone:.2f} ms; two: {plan.makespan:.2f} ms predicted")
# [/solve]

assert data["measured"] == {"cpu0": 143, "cpu1": 143}
assert abs(alone / (table.latency() * 1e3) - 1) < 1e-3   # the durations add up to the measured run
assert plan.makespan < alone

# [execute]
from schedkit.execute import execute

run = execute(model, plan, problem=problem, runs=3, warmup=1, threads=1)
print("\n".join(run.lines()))
# [/execute]

assert run.checked >= 1 and run.max_difference < 1e-3        # the split run computes the model
assert set(run.busy) == {"cpu0", "cpu1"}
assert 0.5 < run.latency / run.predicted_makespan < 4         # a shared machine: honest, not tight

# [plot]
from matplotlib.figure import Figure

labels = ["makespan"] + list(run.busy)
predicted = [run.predicted_makespan] + [run.predicted_busy[d] for d in run.busy]
measured = [run.latency] + [run.busy[d] for d in run.busy]
fig = Figure(figsize=(6.4, 3.6), layout="constrained")
ax = fig.subplots()
x = range(len(labels))
bars = [ax.bar([k - 0.2 for k in x], predicted, 0.4, label="predicted (plan)", color="#4c72b0"),
        ax.bar([k + 0.2 for k in x], measured, 0.4, label="measured (execute)", color="#dd8452")]
for group in bars:
    ax.bar_label(group, fmt="%.1f", fontsize=8, padding=2)
ax.axhline(alone, color="grey", linestyle="--", linewidth=0.8, label=f"one worker, predicted ({alone:.1f})")
ax.set_xticks(list(x), ["latency / makespan"] + [f"{d} busy" for d in run.busy])
ax.set_ylabel("ms")
ax.set_ylim(0, max(predicted + measured + [alone]) * 1.3)
ax.legend(frameon=False, loc="upper right", fontsize=8)
ax.set_title(f"light Inception v1 on two CPU workers (HEFT): measured / predicted "
             f"{run.latency / run.predicted_makespan:.2f}", fontsize=10)
fig.savefig(OUT / "measured_costs.png", dpi=110)
print(sorted(p.name for p in OUT.glob("measured_costs*")))
# [/plot]

assert (OUT / "measured_costs.png").stat().st_size > 10_000
