"""Family ``makespan``: the makespan column ``C >= end[i] + tail[i, d]`` for every task."""

from __future__ import annotations

from schedkit.blocks.expr import Expr
from schedkit.milp.families.base import Family, register_family
from schedkit.numerics import BOUND_SLACK


@register_family("makespan")
class MakespanFamily(Family):
    """The makespan C, at least every task's end plus its tail on its device."""

    # Timing is made inside create(), after the makespan column: the column order of
    # every model (and so every LP file) is that of the kernel before families existed.
    requires = ("x",)
    template = r"""$C \ge \mathit{end}_i + \sum_d q_{i,d}\,x_{i,d}$ for every task $i$, with $q_{i,d}$ the tail of
$i$ on device $d$ (the least work and transfer time after it ends there); $C$ is bounded below by the
critical path and load bounds and above by the horizon $H$, the makespan of a schedule that satisfies
every block."""

    def create(self) -> None:
        ctx = self.ctx
        p = ctx.problem
        x = ctx.family("x")
        hd, tl = ctx.device_heads, ctx.device_tails
        lower = max(ctx.lower_bound,
                    max(min(hd[i][d] + p.durations[i][d] + tl[i][d] for d in p.allowed[i])
                        for i in range(len(p.tasks))))
        self.col = ctx.lin.add_columns("makespan", [()], lower, ctx.horizon * (1 + BOUND_SLACK))[0]
        timing = ctx.family("timing")
        rows, C = ctx.lin.rows(None), Expr.term(self.col)
        for i, t in enumerate(p.tasks):
            tail = Expr()
            for d in p.allowed[i]:
                if tl[i][d]:
                    tail.add(x.x(i, d), tl[i][d])
            rows.add("makespan_def", (t,), C - timing.end(i) - tail >= 0)

    def expr(self) -> Expr:
        """The makespan."""
        return Expr.term(self.col)

    def warm(self, schedule, values: list) -> None:
        values[self.col] = schedule.makespan
