"""Family ``x``: the assignment binaries ``x[i,d]``, task ``i`` runs on device ``d``.

Only tasks with more than one allowed device get columns; a fixed task's
assignment is the constant 1 on its device, and :meth:`AssignmentFamily.x` folds it in.
"""

from __future__ import annotations

from typing import Sequence

from schedkit.blocks.expr import Expr, FrozenExpr
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
        # Every x[i, d] as an expression, made once: the rows of a large build ask for them
        # hundreds of thousands of times (frozen, so that no row changes another's).
        self._x = {pair: FrozenExpr.term(col) for pair, col in self.cols.items()}
        one = Expr(1.0).frozen()
        self._x.update(((i, a[0]), one) for i, a in enumerate(p.allowed) if len(a) == 1)
        self._zero = Expr(0.0).frozen()

    def x(self, i: int, d: int) -> Expr:
        """``x[i, d]``: the binary, or the constant 1 or 0 when task ``i`` has one device."""
        return self._x.get((i, d), self._zero)

    def col(self, i: int, d: int) -> int | None:
        """Column of ``x[i, d]``, or ``None`` when the assignment is fixed (:meth:`x` folds it in)."""
        return self.cols.get((i, d))

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
