"""Tutorial: load a problem, solve it exactly, check and compare the schedule.

Run from the repository root: ``python docs/tutorials/first_solve.py``.
"""

import tempfile
from pathlib import Path

# [load]
import schedkit

problem = schedkit.Problem.load("examples/tiny.yaml")
print(problem.tasks)     # task names, in file order
print(problem.devices)   # device names
# [/load]

assert problem.tasks == ["embed", "attn", "mlp", "norm", "logits", "sample"]
assert problem.devices == ["gpu0", "cpu"]

# [solve]
schedule = schedkit.solve(problem, "milp", formulation="latency", solver="highs", time_limit=30)
print(schedule.summary())
# [/solve]

# [inspect]
print(schedule.status)      # 'optimal': HiGHS proved the makespan is the best possible
print(schedule.makespan)    # latest end of any task or transfer
print(schedule.bound)       # best proven lower bound on the makespan
print(schedule.gap)         # (makespan - bound) / makespan
for run in sorted(schedule.tasks, key=lambda r: r.start):
    print(f"{run.task:8} {run.device:5} {run.start:7.3f} -> {run.end:7.3f}")
for t in schedule.transfers:
    print(f"{t.src} -> {t.dst}: {t.from_} -> {t.to} over [{t.start:.3f}, {t.end:.3f}]")
# [/inspect]

assert schedule.status == "optimal"
assert abs(schedule.makespan - 4.51625) < 1e-6
assert abs(schedule.makespan - schedule.bound) < 1e-6
assert schedule.gap is not None and schedule.gap < 1e-6
assert schedule.placement()["sample"] == "cpu"   # 'sample' only has a CPU duration

# [write]
folder = Path(tempfile.mkdtemp())
path = folder / "tiny.schedule.json"
schedule.write(path)                     # schedkit-schedule/v1 JSON
again = schedkit.Schedule.load(path)
# [/write]

assert again.makespan == schedule.makespan
assert again.placement() == schedule.placement()

# [validate]
problems = again.violations(problem)     # [] when the schedule is valid
print(problems)
again.validate(problem)                  # raises InvalidScheduleError otherwise
# [/validate]

assert problems == []

# [broken]
late = again.model_copy(deep=True)
embed = next(r for r in late.tasks if r.task == "embed")
embed.start, embed.end = 3.0, 3.4        # 'embed' now runs after its successors
try:
    late.validate(problem)
except schedkit.InvalidScheduleError as exc:
    print("rejected:", exc)
# [/broken]

found = late.violations(problem)
assert any("embed" in message for message in found), found

# [heft]
fast = schedkit.solve(problem, "heft")
print(fast.summary())
print(f"HEFT is {100 * (fast.makespan / schedule.makespan - 1):.1f}% above the optimum")
# [/heft]

assert fast.status == "heuristic"
assert fast.violations(problem) == []
assert fast.makespan >= schedule.makespan - 1e-9   # no heuristic beats a proven optimum
