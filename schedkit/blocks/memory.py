"""``memory``: the static memory of the tasks on a device fits its capacity."""

from __future__ import annotations

import math

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.expr import Expr
from schedkit.numerics import fits, is_whole, whole_units


@register_block("memory")
class Memory(Block):
    """The tasks placed on a device fit in its memory (static capacity)."""

    holds_on_parts = True
    default = True
    interprets = "memory capacities"
    requires = frozenset({"x"})
    template = r"""
With $m_i$ the memory of task $i$ and $M_d$ the capacity of device $d$:

$$\sum_{i:\, d \in D_i} m_i\, x_{i,d} \le M_d \qquad \forall d \text{ with finite } M_d$$

Devices whose capacity holds every task that may run there get no row.
"""

    builds_rows = True

    def applies_to(self, problem):
        return any(math.isfinite(cap) for cap in problem.device_memory) and any(problem.task_memory)

    def build(self, ctx, blk):
        p = ctx.problem
        x = ctx.family("x")
        for d, cap in enumerate(p.device_memory):
            users = [i for i in range(len(p.tasks)) if d in p.allowed[i] and p.task_memory[i] > 0]
            if math.isinf(cap) or sum(p.task_memory[i] for i in users) <= cap:
                continue
            # (tasks that can only run here fold into the constant: Problem checked that they fit)
            used = Expr()
            for i in users:
                used.add(x.x(i, d), p.task_memory[i])
            blk.add("capacity", (p.devices[d],), used <= cap)

    def build_cp(self, cp):
        p = cp.problem
        for d, cap in enumerate(p.device_memory):
            users = [i for i in range(len(p.tasks)) if d in p.allowed[i] and p.task_memory[i] > 0]
            if math.isinf(cap) or sum(p.task_memory[i] for i in users) <= cap:
                continue
            # CP-SAT wants integers: memory in the units that make every amount whole
            # (rounded the safe way, task memory up and capacity down, when none does).
            amounts = [p.task_memory[i] for i in users] + [cap]
            unit = whole_units(amounts)
            if not all(is_whole(a * unit) for a in amounts):
                cp.rounded.append(f"memory of device {p.devices[d]}")
            cp.model.add(sum(math.ceil(p.task_memory[i] * unit - 1e-9) * cp.on[i][d] for i in users)
                         <= math.floor(cap * unit + 1e-9))

    def estimate(self, problem):
        return sum(len(a) for a in problem.allowed) if self.applies_to(problem) else 0

    def violations(self, problem, schedule):
        used = [0.0] * len(problem.devices)
        # (with batching a task's memory counts once on each device that runs one of its batches)
        for task, device in {(row.task, row.device) for row in schedule.tasks}:
            used[problem.device_index[device]] += problem.task_memory[problem.task_index[task]]
        return [f"device {problem.devices[d]} holds {used[d]:g} of memory, capacity {cap:g}"
                for d, cap in enumerate(problem.device_memory)
                if not fits(used[d], cap)]
