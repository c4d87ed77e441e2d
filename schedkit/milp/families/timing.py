"""Family ``timing``: the start of every task and the end of every task with a choice of device.

``end[i] = start[i] + sum_d p[i,d] x[i,d]`` is one column with a defining row
(``end_def``), so that rows refer to ``end[i]`` alone (half the nonzeros of the
disjunctive rows); a fixed task's end is ``start + p``. Bounds come from device
heads and tails and the horizon; where the device decides the earliest start,
``start_i >= sum_d head[i,d] x[i,d]`` (``start_head``).
"""

from __future__ import annotations

from typing import Sequence

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
        self._end_terms = []
        for i in tasks:
            if i not in self.ends:
                self._end_terms.append((p.durations[i][p.allowed[i][0]], [1.0], [self.starts[i]]))
                continue
            cols, coefs = [self.ends[i], self.starts[i]], [1.0, -1.0]
            for d, duration in p.durations[i].items():
                if duration:
                    cols.append(x.col(i, d))
                    coefs.append(-duration)
            ctx.lin.add_row(None, "end_def", (p.tasks[i],), cols, coefs, 0.0, 0.0)
            self._end_terms.append((0.0, [1.0], [self.ends[i]]))
            if max(hd[i].values()) > lower[i]:
                ctx.lin.add_row(None, "start_head", (p.tasks[i],),
                                [self.starts[i]] + [x.col(i, d) for d in p.allowed[i]],
                                [1.0] + [-hd[i][d] for d in p.allowed[i]], lower=0.0)

    def start_col(self, i: int) -> int:
        """Column of the start time of task ``i``."""
        return self.starts[i]

    def end_col(self, i: int) -> int | None:
        """Column of ``end[i]``, or ``None`` for a task with one device (its end is start + p)."""
        return self.ends.get(i)

    def end_terms(self, i: int) -> tuple[float, list[float], list[int]]:
        """``end[i]`` as ``(constant, coefficients, columns)``."""
        return self._end_terms[i]

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
