"""Tutorial: DiviML (Ghannane & Abdelfattah 2023): throughput of batches plus model parallelism.

Run from the repository root: ``python docs/tutorials/diviml_throughput.py`` (about 30 s on two
cores). Times depend on the machine and its load; benchmarks/batching.py prints the full table
(10-node modules, 60 s per MILP).
"""

# [instance]
from schedkit import Problem
from schedkit.generators.diviml import baselines, diviml_workload
from schedkit.generators.rwnn import rwnn

module = rwnn(modules=1, nodes=8, channels=1, graph="er", edge_prob=0.2, seed=0)
p = Problem.from_dict(diviml_workload(module, inputs=16))      # A100, T4, CPU; L = 16 inputs
print(p, "devices", p.devices, "batch sizes", p.spec.devices[0].batch_sizes)
base = baselines(p)
print(f"one device, one input at a time: {base['one_by_one']:.4g} ms; "
      f"one device, whole batches: {base['whole_batch']:.4g} ms")
# [/instance]

assert (len(p.tasks), p.inputs, p.devices) == (10, 16, ["a100", "t4", "cpu"])
assert base["whole_batch"] < base["one_by_one"]

# [heuristics]
from schedkit import solve

found = {name: solve(p, name, formulation="throughput") for name in ("met", "greedy", "heft", "annealing")}
for name, s in found.items():
    sizes = sorted((r.device, len(r.inputs)) for r in s.tasks if r.task == p.tasks[1])
    print(f"b{name:9} makespan {s.makespan:8.4g}  throughput {16 / s.makespan:.3f}/ms  "
          f"batches of {p.tasks[1]}: {sizes}")
# [/heuristics]

for s in found.values():
    covered = sorted((r.task, l) for r in s.tasks for l in r.inputs)
    assert covered == sorted((t, l) for t in p.tasks for l in range(16))   # each input once

# [milp]
exact = solve(p, "milp", formulation="throughput", time_limit=20, solver="highs")
print(exact.summary())
print(f"throughput: {base['one_by_one'] / exact.makespan:.2f}x one input at a time, "
      f"{base['whole_batch'] / exact.makespan:.2f}x whole batches on the best device")
# [/milp]

assert exact.status in ("optimal", "feasible") and exact.bound <= exact.makespan
assert exact.makespan <= found["heft"].makespan + 1e-9                 # never worse than its start
assert base["one_by_one"] / exact.makespan >= 2.0                       # DiviML: data + model parallelism
assert exact.makespan < base["whole_batch"]                             # beats the strongest baseline

# [symmetry]
import time

from schedkit import Formulation
from schedkit.generators.platform import nodes
from schedkit.importers.platform import parse_platform

servers = parse_platform(nodes(nodes=3, gpus=4))          # 3 identical servers of 4 A100s
q = Problem.from_dict(servers.retarget(rwnn(modules=2, nodes=8, seed=0)))
base = ["assignment", "placement", {"precedence": {"communication": True}}, "no_overlap", "memory"]
results = {}
for by in (None, "tasks", "batches", "busy_time"):
    f = Formulation.from_data({"name": f"latency+{by}", "blocks": base + ([{"symmetry": {"by": by}}] if by else [])})
    began = time.perf_counter()
    results[by] = solve(q, "milp", formulation=f, solver="highs", threads=1, time_limit=60)
    print(f"symmetry by {str(by):9}: {results[by].status} makespan {results[by].makespan:.5g} "
          f"in {time.perf_counter() - began:.2f} s")
# [/symmetry]

# 12 GPUs, and the switch between the servers (a device no task runs on: links only)
assert q.devices[-1] == "switch" and len(q.devices) == 13
assert all(s.status == "optimal" for s in results.values())
assert len({round(s.makespan, 6) for s in results.values()}) == 1          # the optimum never changes
