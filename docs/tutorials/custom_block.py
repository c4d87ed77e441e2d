"""Tutorial: write a constraint block (and a variable family), register them, use them from Python and YAML.

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
    holds_on_parts = True            # some tasks within the limit: as in the whole problem

    limit: int = 3
    """Largest number of tasks on one device."""

    template = r"""
$$\sum_{i:\, d \in D_i} x_{i,d} \le {{ limit }} \qquad \forall d$$
"""

    def build(self, ctx, blk):
        p = ctx.problem
        tasks = range(len(p.tasks))

        def count(b, device):
            # ctx.x(i, d) is always a Pyomo linear expression: the binary, or the
            # constant 0 or 1 when task i has one allowed device
            d = p.device_index[device]
            return sum(ctx.x(i, d) for i in tasks) <= self.limit

        blk.count = pyo.Constraint(p.devices, rule=count)

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

# [family]
from schedkit.blocks import Expr
from schedkit.milp.families import Family, register_family


@register_family("busy")
class Busy(Family):
    """Busy time of each device: b[d] = sum_i p[i,d] x[i,d]."""

    requires = ("x",)        # made after the assignment binaries, which it is defined over
    template = r"$b_d = \sum_{i} p_{i,d}\, x_{i,d}$: the busy time of device $d$."

    def create(self):
        ctx = self.ctx
        p, x = ctx.problem, ctx.family("x")
        self.cols = ctx.lin.add_columns("busy", [(d,) for d in p.devices], 0.0, sum(map(max, map(dict.values, p.durations))))
        rows = ctx.lin.rows("busy")        # rows named busy.NAME(key)
        for d, device in enumerate(p.devices):
            # x.x(i, d) is an Expr: the binary, or the constant 1 or 0 of a task with one
            # device, so a fixed task's duration lands in the constant by itself
            work = sum((p.durations[i][d] * x.x(i, d) for i in range(len(p.tasks)) if d in p.durations[i]), Expr())
            rows.add("definition", (device,), self.b(d) == work)

    def b(self, d):
        """The busy time of device ``d``, as an expression for other blocks' rows."""
        return Expr.term(self.cols[d])

    def warm(self, schedule, values):
        for d, device in enumerate(self.ctx.problem.devices):
            values[self.cols[d]] = sum(r.end - r.start for r in schedule.tasks if r.device == device)
# [/family]

# [busy_block]
@register_block("busy_limit")
class BusyLimit(Block):
    """No device is busy for more than ``limit`` time units."""

    requires = frozenset({"busy"})
    builds_rows = True               # sparse rows: no Pyomo object is made

    limit: float
    """Largest busy time of a device."""

    template = r"$$b_d \le {{ limit }} \qquad \forall d$$"

    def build(self, ctx, rows):
        busy = ctx.family("busy")    # made here, on first use
        for d, device in enumerate(ctx.problem.devices):
            rows.add("cap", (device,), busy.b(d) <= self.limit)

    def violations(self, problem, schedule):
        busy = Counter()
        for run in schedule.tasks:
            busy[run.device] += run.end - run.start
        return [f"device {device} is busy for {t:g}, more than {self.limit:g}"
                for device, t in sorted(busy.items()) if t > self.limit + 1e-9]
# [/busy_block]

# [busy_solve]
limited = schedkit.solve(problem, "milp", formulation={
    "name": "latency_busy", "blocks": ["assignment", "placement", "precedence", "no_overlap", "memory",
                                       {"busy_limit": {"limit": 3.7}}]})
print(limited.summary())
busy = Counter()
for run in limited.tasks:
    busy[run.device] += run.end - run.start
print({device: round(t, 3) for device, t in busy.items()})
# [/busy_solve]

assert limited.status == "optimal"
assert max(busy.values()) <= 3.7 + 1e-9
assert limited.makespan > unconstrained.makespan

# [busy_check]
from schedkit.testing import check_block, check_family

check_family("busy", problem)                      # warm values satisfy every row; read(warm(s)) == s
check_block({"busy_limit": {"limit": 3.7}}, problem, feasible=limited, infeasible=unconstrained)
print(schedkit.get_formulation({"blocks": ["assignment", {"busy_limit": {"limit": 3.7}}]}).describe())
# [/busy_check]

assert "b_d = \\sum" in schedkit.get_formulation({"blocks": ["assignment", {"busy_limit": {"limit": 3.7}}]}).describe()

# [timing_block]
from schedkit.blocks import Congestion


@register_block("one_dma")
class OneDma(Block):
    """A device sends one transfer at a time and receives one at a time (one DMA engine each way)."""

    requires = frozenset({"x", "timing", "transfer"})   # transfers as tasks: the channels block
    builds_rows = True
    template = r"No two transfers that leave one device, nor two that enter one, overlap."

    def build(self, ctx, rows):
        Congestion(resource="port").build(ctx, rows)     # the MILP rows of the built-in port rule

    def timing_rules(self, rules, problem):
        return rules.replace(congestion="port")          # every method's transfers wait for the port

    def violations(self, problem, schedule):
        return Congestion(resource="port").violations(problem, schedule)
# [/timing_block]

# [timing_solve]
fork = schedkit.Problem.from_dict({
    "name": "fork", "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}, {"src": "d0", "dst": "d2", "bandwidth": 1.0}],
    "tasks": [{"name": "a", "durations": {"d0": 1}}, {"name": "b", "durations": {"d1": 1}},
              {"name": "c", "durations": {"d2": 1}}],
    "edges": [{"src": "a", "dst": "b", "size": 1.0}, {"src": "a", "dst": "c", "size": 1.0}]})
free = ["assignment", "precedence", "no_overlap", "channels"]
for method in ("heft", "milp"):
    both_at_once = schedkit.solve(fork, method, formulation={"name": "free", "blocks": free})
    one_at_a_time = schedkit.solve(fork, method, formulation={"name": "one_dma", "blocks": free + ["one_dma"]})
    print(method, both_at_once.makespan, one_at_a_time.makespan)   # 3.0 4.0: one transfer waits
# [/timing_solve]

assert (both_at_once.makespan, one_at_a_time.makespan) == (3.0, 4.0)
assert schedkit.get_formulation({"blocks": free + ["one_dma"]}).timing_rules(fork).congestion == "port"

# [resource_block]
from schedkit.blocks.holding import resource_rows, resource_violations
from schedkit.timing import Resource


@register_block("one_engine")
class OneEngine(Block):
    """Every task of operator ``op`` holds the one engine of the cluster: no two of them run at once."""

    requires = frozenset({"x", "timing"})
    builds_rows = True

    op: str = "MatMul"
    """The operator whose tasks hold the engine."""

    template = r"""
For every two tasks $i, j$ of operator `{{ op }}`, on whatever devices, one runs after the other:
$\mathit{start}_j \ge \mathit{end}_i$ or $\mathit{start}_i \ge \mathit{end}_j$ (an order binary
$w_{ij}$ of the family `holding`, two big-M rows).
"""

    def engine(self, problem):
        return Resource("engine", frozenset(t.name for t in problem.spec.tasks if t.op == self.op))

    def timing_rules(self, rules, problem):
        return rules.replace(resources=rules.resources + (self.engine(problem),))   # every method waits for it

    def build(self, ctx, rows):
        resource_rows(ctx, rows, self.engine(ctx.problem))    # the kernel's rows for capacity 1

    def violations(self, problem, schedule):
        return resource_violations(schedule, self.engine(problem))
# [/resource_block]

# [resource_solve]
two_matmuls = schedkit.Problem.from_dict({
    "name": "two_matmuls", "devices": [{"name": "d0"}, {"name": "d1"}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}],
    "tasks": [{"name": "mm1", "op": "MatMul", "work": 2}, {"name": "mm2", "op": "MatMul", "work": 2},
              {"name": "add", "op": "Add", "work": 1}],
    "edges": [{"src": "mm1", "dst": "add", "size": 0}, {"src": "mm2", "dst": "add", "size": 0}]})
plain = ["assignment", "precedence", "no_overlap"]
for method in ("heft", "milp"):
    side_by_side = schedkit.solve(two_matmuls, method, formulation={"name": "plain", "blocks": plain})
    in_turn = schedkit.solve(two_matmuls, method, formulation={"name": "engine", "blocks": plain + ["one_engine"]})
    print(method, side_by_side.makespan, in_turn.makespan)   # 3.0 5.0: the MatMuls take turns
# [/resource_solve]

# By hand: without the engine mm1 and mm2 run side by side on d0 and d1 (2), then add (1): 3.
# With it they hold the engine in turn (2 + 2), whatever their devices, then add (1): 5.
assert (side_by_side.makespan, in_turn.makespan) == (3.0, 5.0)
assert in_turn.status == "optimal"
engine_block = OneEngine()

# [resource_check]
print(engine_block.violations(two_matmuls, in_turn))        # []
print(engine_block.violations(two_matmuls, side_by_side))   # mm1 and mm2 hold it at once
# [/resource_check]

assert engine_block.violations(two_matmuls, in_turn) == []
assert engine_block.violations(two_matmuls, side_by_side) == [
    "resource 'engine': 'mm1' [0, 2) and 'mm2' [0, 2) hold it at once, more than its capacity 1"]
assert side_by_side.violations(two_matmuls, [engine_block]) != []
