"""Tutorial: from an ONNX model to a Gantt chart, a Chrome trace and an HTML report.

Needs the ``onnx`` and ``viz`` extras (``pip install 'schedkit[onnx,viz]'``). Run from the
repository root: ``python docs/tutorials/onnx_report.py``. The pictures go to a temporary
folder (to ``docs/tutorials/_generated`` when the documentation build runs it).
"""

import json
import sys
import tempfile
from pathlib import Path

import onnx

OUT = Path("docs/tutorials/_generated") if "run_tutorials" in sys.modules else Path(tempfile.mkdtemp())
OUT.mkdir(parents=True, exist_ok=True)

# [model]
from schedkit.importers import convert

light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
model = light / "light_squeezenet.onnx"     # SqueezeNet 1.0, weights stripped, 1x3x224x224
data = convert("onnx", model, platform="examples/platform_cpu_2gpu.yaml")
print(len(data["tasks"]), "tasks,", len(data["edges"]), "edges on", [d["name"] for d in data["devices"]])
fire = next(t for t in data["tasks"] if t["op"] == "Conv")
print(fire["name"], fire["op"], {d: round(ms, 4) for d, ms in fire["durations"].items()},
      fire["weight_memory"], fire["activation_memory"])
# [/model]

assert len(data["tasks"]) == 66                      # 105 nodes, 39 ConstantOfShape folded
assert {t["op"] for t in data["tasks"]} >= {"Conv", "Relu", "Concat", "MaxPool"}
assert fire["durations"]["gpu0"] < fire["durations"]["gpu1"] < fire["durations"]["cpu"]

# [solve]
import schedkit

problem = schedkit.Problem.from_dict(data)
heft = schedkit.solve(problem, "heft")
exact = schedkit.solve(problem, "milp", time_limit=5)
single = {d: sum(problem.durations[i][k] for i in range(len(problem.tasks)))
          for k, d in enumerate(problem.devices)}
best = min(single, key=single.get)
print(heft.summary())
print(exact.summary())
print(f"best single device: {best}, {single[best]:.4f} ms; "
      f"speed-up of the MILP schedule: {single[best] / exact.makespan:.3f}x")
# [/solve]

assert heft.violations(problem) == [] and exact.violations(problem) == []
assert exact.makespan <= heft.makespan + 1e-9        # the MILP starts from the heuristics
assert exact.bound <= exact.makespan <= single[best] + 1e-9

# [pictures]
from schedkit.milp import get_formulation
from schedkit.report import render

(OUT / "squeezenet_gantt.png").write_bytes(render("gantt", problem, exact))
(OUT / "squeezenet_trace.json").write_text(render("trace", problem, exact))
page = render("html", problem, exact, formulation=get_formulation("latency").describe(),
              violations=exact.violations(problem))
(OUT / "squeezenet_report.html").write_text(page)
print(sorted(p.name for p in OUT.glob("squeezenet_*")))
# [/pictures]

events = json.loads((OUT / "squeezenet_trace.json").read_text())["traceEvents"]
assert sum(e["ph"] == "X" and e["cat"] != "transfer" for e in events) == 66
assert page.count('class="task"') == 66 and ">valid<" in page
