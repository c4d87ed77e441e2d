"""Family ``timing``: the start of every task and the end of every task with a choice of device.

``end[i] = start[i] + sum_d p[i,d] x[i,d]`` is one column with a defining row
(``end_def``), so that rows refer to ``end[i]`` alone (half the nonzeros of the
disjunctive rows); a fixed task's end is ``start + p``. Bounds come from device
heads and tails and the horizon; where the device decides the earliest start,
``start_i >= sum_d head[i,d] x[i,d]`` (``start_head``).
"""

from __future__ import annotations

from typing import Sequence

from schedkit.blocks.expr import Expr, FrozenExpr
from schedkit.milp.families.base import Draft, Family, register_family
from schedkit.numerics import bound_slack


@register_family("timing")
class TimingFamily(Family):
    """Start and end of every task: start[i], and end[i] = start[i] + sum_d p[i,d] x[i,d]."""

    requires = ("x",)
    template = r"""$\mathit{start}_i \ge 0$ and $\mathit{end}_i = \mathit{start}_i + \sum_{d \in D_i} p_{i,d}\, x_{i,d}$
for every task; with precedence, $\mathit{start}_i \ge \sum_d r_{i,d}\,x_{i,d}$, where $r_{i,d}$ is the head of
$i$ on device $d$ (the least work and transfer time before it starts there)."""

    def create(self) -> None:
        ctx = self.ctx
        p = ctx.problem
        x = ctx.family("x")
        tasks = range(len(p.tasks))
        hd, tl = ctx.device_heads, ctx.device_tails
        slack = bound_slack(ctx.horizon)
        lower = [min(hd[i].values()) for i in tasks]
        upper = [max(lower[i], ctx.horizon - min(tl[i][d] + p.durations[i][d] for d in p.allowed[i]) + slack)
                 for i in tasks]
        self.starts = ctx.lin.add_columns("start", [(t,) for t in p.tasks], lower, upper)
        flexible = [i for i in tasks if len(p.allowed[i]) > 1]
        ends = ctx.lin.add_columns(
            "end", [(p.tasks[i],) for i in flexible],
            [min(hd[i][d] + p.durations[i][d] for d in p.allowed[i]) for i in flexible],
            [ctx.horizon - min(tl[i].values()) + slack for i in flexible])
        self.ends = dict(zip(flexible, ends))
        rows = ctx.lin.rows(None)
        # start and end of every task, made once and frozen (see AssignmentFamily)
        self._start = [FrozenExpr.term(c) for c in self.starts]
        self._end: list[Expr] = []
        for i in tasks:
            start = self._start[i]
            if i not in self.ends:
                self._end.append(Expr(p.durations[i][p.allowed[i][0]], [self.starts[i]], [1.0]).frozen())
                continue
            end = FrozenExpr.term(self.ends[i])
            work = Expr()
            for d, duration in p.durations[i].items():
                if duration:
                    work.add(x.x(i, d), duration)
            rows.add("end_def", (p.tasks[i],), end - start - work == 0)
            self._end.append(end)
            if max(hd[i].values()) > lower[i]:
                head = sum((hd[i][d] * x.x(i, d) for d in p.allowed[i]), Expr())
                rows.add("start_head", (p.tasks[i],), start - head >= 0)

    def start(self, i: int) -> Expr:
        """The start of task ``i``."""
        return self._start[i]

    def end(self, i: int) -> Expr:
        """The end of task ``i``: its ``end`` column, or start plus its one duration."""
        return self._end[i]

    def start_col(self, i: int) -> int:
        """Column of the start time of task ``i``."""
        return self.starts[i]

    def end_col(self, i: int) -> int | None:
        """Column of ``end[i]``, or ``None`` for a task with one device (its end is start + p)."""
        return self.ends.get(i)

    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        for row in schedule.tasks:
            i = p.task_index[row.task]
            values[self.starts[i]] = row.start
            if i in self.ends:
                values[self.ends[i]] = row.end

    def read(self, values: Sequence[float], draft: Draft) -> None:
        for i, col in enumerate(self.starts):
            draft.starts[i] = values[col] or 0.0
