"""``placement``: pinned tasks stay on their devices, collocated tasks share one."""

from __future__ import annotations

from schedkit.blocks.base import Block, register_block
from schedkit.schedule.batched import is_batched, rows_by_input


@register_block("placement")
class Placement(Block):
    """Pins restrict a task's devices; tasks of one collocation group share a device."""

    holds_on_parts = True
    default = True
    interprets = "collocation groups"
    requires = frozenset({"x"})
    template = r"""
Pins are part of $D_i$ (no variable exists for a device outside a task's pin list).
For every collocation group $G$ with first member $g$:

$$x_{i,d} = x_{g,d} \qquad \forall i \in G \setminus \{g\},\ d \in D_i \cup D_g$$

(a missing $x$ is the constant 0 or 1).
"""

    builds_rows = True

    def applies_to(self, problem):
        return bool(problem.colocate_groups) or any(t.pin is not None for t in problem.spec.tasks)

    def finds_data(self, problem):
        # (pins are part of a task's devices, which 'assignment' holds in every formulation:
        # only the groups are ignored without this block)
        return bool(problem.colocate_groups)

    def build(self, ctx, blk):
        p = ctx.problem
        x = ctx.family("x")
        for group, members in p.colocate_groups.items():
            first = members[0]
            for i in members[1:]:
                for d in sorted(set(p.allowed[i]) | set(p.allowed[first])):
                    same = x.x(i, d) - x.x(first, d)
                    if not same.is_constant:   # (two fixed tasks: nothing to write)
                        blk.add("colocate", (p.tasks[i], p.devices[d]), same == 0)

    def build_cp(self, cp):
        p = cp.problem
        for group, members in p.colocate_groups.items():
            first = members[0]
            for i in members[1:]:
                for d in sorted(set(p.allowed[i]) | set(p.allowed[first])):
                    a, b = cp.on[i].get(d), cp.on[first].get(d)
                    if a is None or b is None:
                        cp.model.add((b if a is None else a) == 0)
                    else:
                        cp.model.add(a == b)

    def estimate(self, problem):
        return sum(2 * len(problem.allowed[i]) for members in problem.colocate_groups.values() for i in members)

    def violations(self, problem, schedule):
        out = []
        if is_batched(schedule):
            return _batched_violations(problem, schedule)
        where = schedule.placement()
        for task in problem.spec.tasks:
            if task.pin is not None and where.get(task.name) not in task.pin:
                out.append(f"task '{task.name}' is on {where.get(task.name)}, pinned to {', '.join(task.pin)}")
        for group, members in problem.colocate_groups.items():
            devices = {where.get(problem.tasks[i]) for i in members}
            if len(devices) > 1:
                out.append(f"collocation group '{group}' is split over {', '.join(sorted(map(str, devices)))}")
        return out


def _batched_violations(problem, schedule) -> list[str]:
    """Pins hold for every batch; a collocation group shares a device input by input."""
    out = []
    for row in schedule.tasks:
        pin = problem.spec.tasks[problem.task_index[row.task]].pin
        if pin is not None and row.device not in pin:
            out.append(f"task '{row.task}' has a batch on {row.device}, pinned to {', '.join(pin)}")
    held, _ = rows_by_input(problem.tasks, problem.inputs, schedule)
    for group, members in problem.colocate_groups.items():
        for l in range(problem.inputs):
            devices = {held[problem.tasks[i]][l].device for i in members if l in held[problem.tasks[i]]}
            if len(devices) > 1:
                out.append(f"collocation group '{group}' is split over {', '.join(sorted(devices))} "
                           f"for input {l}")
                break
    return out
