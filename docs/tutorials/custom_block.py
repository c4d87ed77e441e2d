"""Tutorial: write a constraint block, register it, and use it from Python and YAML.

Run from the repository root: ``python docs/tutorials/custom_block.py``.
"""

import tempfile
from collections import Counter
from pathlib import Path

import schedkit

problem = schedkit.Problem.load("examples/tiny.yaml")
unconstrained = schedkit.solve(problem, "milp")
print(unconstrained.summary())
print(Counter(unconstrained.placement().values()))   # five tasks on gpu0, one on the cpu

assert Counter(unconstrained.placement().values())["gpu0"] == 5

# [block]
import pyomo.environ as pyo

from schedkit import Block, register_block


@register_block("max_tasks")
class MaxTasks(Block):
    """At most ``limit`` tasks run on each device."""

    requires = frozenset({"x"})      # uses the assignment binaries x[i,d]

    limit: int = 3
    """Largest number of tasks on one device."""

    template = r"""
$$\sum_{i:\, d \in D_i} x_{i,d} \le {{ limit }} \qquad \forall d$$
"""

    def build(self, ctx, blk):
        p = ctx.problem
        rows = {}
        for d, device in enumerate(p.devices):
            # ctx.x(i, d) is a binary, or the constant 0/1 when the assignment is fixed
            terms = [ctx.x(i, d) for i in range(len(p.tasks))]
            variables = [t for t in terms if not isinstance(t, int)]
            fixed = sum(t for t in terms if isinstance(t, int))
            if variables:
                rows[device] = (sum(variables), self.limit - fixed)
        blk.count = pyo.Constraint(list(rows), rule=lambda b, dev: rows[dev][0] <= rows[dev][1])

    def violations(self, problem, schedule):
        used = Counter(run.device for run in schedule.tasks)
        return [f"device {device} runs {n} tasks, more than {self.limit}"
                for device, n in sorted(used.items()) if n > self.limit]
# [/block]

# [describe]
print(MaxTasks(limit=3).describe())
# [/describe]

assert "x_{i,d} \\le 3" in MaxTasks(limit=3).describe()

# [python]
formulation = schedkit.Formulation.from_data({
    "name": "latency_max3",
    "objective": "makespan",
    "blocks": ["assignment", "placement", {"precedence": {"communication": True}},
               "no_overlap", "memory",
               {"max_tasks": {"limit": 3}}],
})
schedule = schedkit.solve(problem, "milp", formulation=formulation)
print(schedule.summary())
print(Counter(schedule.placement().values()))
# [/python]

assert schedule.status == "optimal"
assert max(Counter(schedule.placement().values()).values()) <= 3
assert schedule.makespan > unconstrained.makespan   # the limit costs time

# [check]
block = next(b for b in formulation.blocks if b.kind == "max_tasks")
print(block.violations(problem, schedule))               # []
print(block.violations(problem, unconstrained))          # gpu0 runs 5 tasks
# the default validator checks the problem's own semantics, not user blocks:
print(unconstrained.violations(problem))                 # []
print(unconstrained.violations(problem, formulation.blocks))
# [/check]

assert block.violations(problem, schedule) == []
assert block.violations(problem, unconstrained) == ["device gpu0 runs 5 tasks, more than 3"]
assert unconstrained.violations(problem) == []
assert unconstrained.violations(problem, formulation.blocks) != []

# [yaml]
folder = Path(tempfile.mkdtemp())
(folder / "max4.yaml").write_text("""\
objective: makespan
blocks:
  - assignment
  - placement
  - precedence: {communication: true}
  - no_overlap
  - memory
  - max_tasks: {limit: 4}
""")
from_yaml = schedkit.solve(problem, "milp", formulation=str(folder / "max4.yaml"))
print(from_yaml.summary())
print(Counter(from_yaml.placement().values()))
# [/yaml]

assert from_yaml.status == "optimal"
assert from_yaml.method == "milp:max4"
assert max(Counter(from_yaml.placement().values()).values()) <= 4
assert unconstrained.makespan <= from_yaml.makespan <= schedule.makespan + 1e-9
