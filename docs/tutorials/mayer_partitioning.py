"""Tutorial: Mayer et al. (2017) again: critical-path-aware partitioning and scheduling
against Hash + FIFO on their layered graphs, with the Gantt charts of both.

Needs the ``viz`` extra for the pictures. Run from the repository root:
``python docs/tutorials/mayer_partitioning.py``. The pictures go to a temporary folder (to
``docs/tutorials/_generated`` when the documentation build runs it).
"""

import statistics
import sys
import tempfile
from pathlib import Path

OUT = Path("docs/tutorials/_generated") if "run_tutorials" in sys.modules else Path(tempfile.mkdtemp())
OUT.mkdir(parents=True, exist_ok=True)

# [graphs]
import schedkit
from schedkit.generators import layered

def graph(seed, devices, size):
    """A layered graph of Mayer et al.: 10 levels of 10 operators, skip connections."""
    return schedkit.Problem.from_dict(layered(levels=10, width=10, edge_prob=0.3, long_range_prob=0.1,
                                              devices=devices, seed=seed, size=size))

example = graph(seed=1, devices=4, size=(1, 10))
print(example, "speeds:", [d.speed for d in example.spec.devices])
# [/graphs]

assert len(example.tasks) == 100 and len(example.devices) == 4

# [compare]
BASELINE = "hash+fifo"
AWARE = ["critical_path+pct", "critical_path+msr", "mite+msr", "dfs+pct"]
ratios = {}   # (data sizes, devices, method) -> [baseline makespan / method makespan per seed]
for size in [(1, 10), (20, 100)]:          # light and heavy data on the edges
    for devices in (4, 8):
        for seed in range(5):
            problem = graph(seed, devices, size)
            base = schedkit.solve(problem, BASELINE).makespan
            for method in AWARE:
                ratio = base / schedkit.solve(problem, method).makespan
                ratios.setdefault((size, devices, method), []).append(ratio)

print(f"{'data':>9} {'devices':>7} {'method':>18} {'mean':>6} {'max':>6}")
for (size, devices, method), values in ratios.items():
    print(f"{str(size):>9} {devices:>7} {method:>18} {statistics.mean(values):6.2f} {max(values):6.2f}")
best = max(ratios, key=lambda key: max(ratios[key]))
print(f"largest speed-up over {BASELINE}: {max(ratios[best]):.2f}x with {best[2]} "
      f"(data sizes {best[0]}, {best[1]} devices); the paper reports up to 4x")
# [/compare]

light_cp = ratios[((1, 10), 4, "critical_path+pct")]
assert statistics.mean(light_cp) > 1.1                # critical path + PCT wins on light data
heavy_mite = ratios[((20, 100), 4, "mite+msr")]
assert statistics.mean(heavy_mite) > 1.5              # MITE + MSR wins when data is heavy
assert max(max(v) for v in ratios.values()) < 4.0     # ... but not by the paper's 4x here

# [gantt]
from schedkit.report import render

hash_fifo = schedkit.solve(example, BASELINE)
critical = schedkit.solve(example, "critical_path+pct")
for name, schedule in (("hash_fifo", hash_fifo), ("critical_path_pct", critical)):
    picture = render("gantt", example, schedule, colour_by="device", width=10)
    (OUT / f"mayer_{name}.png").write_bytes(picture)
print(hash_fifo.summary())
print(critical.summary())
# [/gantt]

assert critical.makespan < hash_fifo.makespan
assert critical.violations(example) == [] and hash_fifo.violations(example) == []
assert (OUT / "mayer_hash_fifo.png").stat().st_size > 10_000
