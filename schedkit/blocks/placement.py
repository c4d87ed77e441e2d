"""``placement``: pinned tasks stay on their devices, collocated tasks share one."""

from __future__ import annotations

from ..errors import ProblemError
from .base import Block, register_block


@register_block("placement")
class Placement(Block):
    """Pins restrict a task's devices; tasks of one collocation group share a device."""

    requires = frozenset({"x"})
    template = r"""
Pins are part of $D_i$ (no variable exists for a device outside a task's pin list).
For every collocation group $G$ with first member $g$:

$$x_{i,d} = x_{g,d} \qquad \forall i \in G \setminus \{g\},\ d \in D_i \cup D_g$$

(a missing $x$ is the constant 0 or 1).
"""

    def build(self, ctx, blk):
        import pyomo.environ as pyo

        p = ctx.problem
        rows = []
        for group, members in p.colocate_groups.items():
            first = members[0]
            for i in members[1:]:
                common = set(p.allowed[i]) & set(p.allowed[first])
                if not common:
                    raise ProblemError(f"collocation group '{group}': tasks '{p.tasks[first]}' and "
                                       f"'{p.tasks[i]}' share no device")
                for d in sorted(set(p.allowed[i]) | set(p.allowed[first])):
                    a, b = ctx.x(i, d), ctx.x(first, d)
                    if isinstance(a, int) and isinstance(b, int):
                        continue
                    rows.append((p.tasks[i], p.devices[d], a, b))
        pairs = {(t, d): (a, c) for t, d, a, c in rows}
        blk.colocate = pyo.Constraint(list(pairs), rule=lambda b, t, d: pairs[t, d][0] == pairs[t, d][1])

    def violations(self, problem, schedule):
        out = []
        where = schedule.placement()
        for task in problem.spec.tasks:
            if task.pin is not None and where.get(task.name) not in task.pin:
                out.append(f"task '{task.name}' is on {where.get(task.name)}, pinned to {', '.join(task.pin)}")
        for group, members in problem.colocate_groups.items():
            devices = {where.get(problem.tasks[i]) for i in members}
            if len(devices) > 1:
                out.append(f"collocation group '{group}' is split over {', '.join(sorted(map(str, devices)))}")
        return out
