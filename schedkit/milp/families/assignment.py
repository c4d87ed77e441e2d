"""Family ``x``: the assignment binaries ``x[i,d]``, task ``i`` runs on device ``d``.

Only tasks with more than one allowed device get columns; a fixed task's
assignment is the constant 1 on its device (:meth:`AssignmentFamily.fixed`).
"""

from __future__ import annotations

from typing import Sequence

from schedkit.milp.families.base import Draft, Family, register_family


@register_family("x")
class AssignmentFamily(Family):
    """Assignment binaries x[i,d]: task i runs on device d."""

    defined_by = "assignment"
    template = r"$x_{i,d} \in \{0,1\}$: task $i$ runs on device $d \in D_i$ (tasks with $|D_i| > 1$)."

    def create(self) -> None:
        p = self.ctx.problem
        pairs = [(i, d) for i in range(len(p.tasks)) if len(p.allowed[i]) > 1 for d in p.allowed[i]]
        cols = self.ctx.lin.add_columns("x", [(p.tasks[i], p.devices[d]) for i, d in pairs], 0, 1,
                                        integer=True)
        self.cols = dict(zip(pairs, cols))

    def col(self, i: int, d: int) -> int | None:
        """Column of ``x[i, d]``, or ``None`` when the assignment is fixed (see :meth:`fixed`)."""
        return self.cols.get((i, d))

    def fixed(self, i: int, d: int) -> int:
        """The constant 0 or 1 of an assignment with no column."""
        return 1 if d in self.ctx.problem.allowed[i] else 0

    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        where = schedule.placement()
        for (i, d), col in self.cols.items():
            values[col] = 1.0 if p.device_index[where[p.tasks[i]]] == d else 0.0

    def read(self, values: Sequence[float], draft: Draft) -> None:
        p = self.ctx.problem
        for i, allowed in enumerate(p.allowed):
            if len(allowed) == 1:
                draft.device_of[i] = allowed[0]
            else:
                draft.device_of[i] = max(allowed, key=lambda d: values[self.cols[i, d]] or 0.0)
