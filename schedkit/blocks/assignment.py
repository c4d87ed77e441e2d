"""``assignment``: every task runs on exactly one of its allowed devices.

With a workload of several inputs (DiviML's batching), every (task, input) pair runs in
exactly one batch, of a size its device allows, for that batch's time
(:mod:`schedkit.schedule.batched`).
"""

from __future__ import annotations

from schedkit.numerics import lasts
from schedkit.blocks.base import Block, register_block
from schedkit.schedule.batched import is_batched, rows_by_input


@register_block("assignment")
class Assignment(Block):
    """Each task runs on exactly one of its allowed devices, for its duration there."""

    holds_on_parts = True
    default = True
    requires = frozenset({"x"})
    template = r"""
$D_i$ is the set of devices task $i$ may run on (its durations, restricted by its pins).
$x_{i,d} \in \{0,1\}$ exists for tasks with more than one allowed device; otherwise the task is fixed.

$$\sum_{d \in D_i} x_{i,d} = 1 \qquad \forall i \in T,\ |D_i| > 1$$

$$\mathit{end}_i = \mathit{start}_i + \sum_{d \in D_i} p_{i,d}\, x_{i,d}$$
"""

    builds_rows = True

    def build(self, ctx, blk):
        p = ctx.problem
        x = ctx.family("x")
        for i in range(len(p.tasks)):
            if len(p.allowed[i]) > 1:
                blk.add("one_device", (p.tasks[i],), sum(x.x(i, d) for d in p.allowed[i]) == 1)

    def build_cp(self, cp):
        for on in cp.on:
            if len(on) > 1:
                cp.model.add_exactly_one(on.values())

    def estimate(self, problem):
        return sum(len(a) for a in problem.allowed if len(a) > 1)

    def violations(self, problem, schedule):
        out = []
        batched = problem.inputs > 1 or is_batched(schedule)
        if batched:  # every (task, input) pair in exactly one batch
            out += rows_by_input(problem.tasks, problem.inputs, schedule)[1]
        for row in schedule.tasks:
            i, d = problem.task_index[row.task], problem.device_index[row.device]
            if d not in problem.durations[i]:
                out.append(f"task '{row.task}' may not run on {row.device}")
                continue
            need = problem.durations[i][d]
            if batched and row.inputs:
                size, sizes = len(set(row.inputs)), problem.batches.sizes[i][d]
                if size not in sizes:
                    out.append(f"task '{row.task}': a batch of {size} on {row.device}, which runs its batches "
                               f"in sizes {', '.join(map(str, sizes))}")
                    continue
                need = problem.batches.time(i, d, size)
            # Relative to the duration, not the makespan: a chain of rows each a little short
            # must not add up to a shorter schedule.
            if not lasts(row.end - row.start, need, row.end):
                out.append(f"task '{row.task}' lasts {row.end - row.start:g} on {row.device}, needs {need:g}")
        return out
