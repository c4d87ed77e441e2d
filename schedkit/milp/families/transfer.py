"""Family ``transfer``: a start and an end for every edge that may move data, so that a transfer can wait.

An edge ``(i, j)`` gets columns when some pair of its allowed devices ``u in D_i``,
``v in D_j`` makes a transfer (:meth:`Problem.moves <schedkit.problem.Problem.moves>`):
``tstart[i,j] >= end[i]`` (``transfer_leave``) and ``tend[i,j] >= tstart[i,j] + sum_uv
c_uv w[i,j,u,v]`` (``transfer_def``), where the presence ``w[i,j,u,v] >= x[i,u] + x[j,v] - 1``
(``presence_def``) is continuous: nothing rewards a larger value, and with binary ``x`` its
least value is the product. A task with one device folds its ``x`` into a constant, so
presence needs a column only when both ends have a choice. The ``channels`` block makes the
consumer wait for ``tend``; ``congestion`` orders the transfers that may share a channel or
a port with the binaries of :meth:`TransferFamily.add_orders`, owned here so that a warm
start sets them too.

:meth:`TransferFamily.usage` writes "transfer ``k`` holds a resource" as a linear expression
of ``x`` that is 1 when it does and at most 0 when it does not (exact on binary ``x``): a
rectangle of device pairs ``U x V`` needs no presence column at all.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.milp import Formulation
>>> p = Problem.load("examples/tiny.yaml")
>>> built = Formulation.from_data({"blocks": ["assignment", "precedence", "channels"]}).build(p)
>>> tr = built.context.family("transfer")
>>> [(p.tasks[i], p.tasks[j]) for i, j, _ in tr.edges][:2]
[('embed', 'attn'), ('embed', 'mlp')]
>>> built.linear.column_name(tr.start(0).cols[0]), built.linear.column_name(tr.end(0).cols[0])
('tstart(embed_attn)', 'tend(embed_attn)')
"""

from __future__ import annotations

from typing import Sequence

from schedkit.blocks.expr import Expr
from schedkit.milp.families.base import Draft, Family, register_family
from schedkit.numerics import bound_slack


@register_family("transfer")
class TransferFamily(Family):
    """Start and end of each edge's transfer, with the presence of each device pair that moves data."""

    requires = ("x", "timing")
    defined_by = "channels"
    template = r"""For every edge $(i,j)$ that may move data ($c_{uv} > 0$ for some $u \in D_i$,
$v \in D_j$, $u \ne v$): $s^{tr}_{ij} \ge \mathit{end}_i$ and
$e^{tr}_{ij} \ge s^{tr}_{ij} + \sum_{u,v} c_{uv}\, w_{ij,uv}$, with the presence
$w_{ij,uv} \ge x_{i,u} + x_{j,v} - 1$, $w_{ij,uv} \in [0,1]$ (the constant $x$ of a task with one
device folded in; $w$ needs a column only when both ends have a choice). Bounds from device heads
and tails: $s^{tr}_{ij} \ge \min_u (r_{i,u} + p_{i,u})$ and
$e^{tr}_{ij} \le H - \min_v (q_{j,v} + p_{j,v})$."""

    def create(self) -> None:
        ctx = self.ctx
        p = ctx.problem
        x, timing = ctx.family("x"), ctx.family("timing")
        hd, tl = ctx.device_heads, ctx.device_tails
        slack = bound_slack(ctx.horizon)
        #: ``(i, j, size)`` of every edge with columns, and each one's moving device pairs.
        self.edges: list[tuple[int, int, float]] = []
        self.pairs: list[list[tuple[int, int, float]]] = []
        for i, j, size in p.edges:
            if size == 0:
                continue
            moving = [(u, v, p.comm_time(size, u, v)) for u in p.allowed[i] for v in p.allowed[j]
                      if p.moves(size, u, v)]
            if moving:
                self.edges.append((i, j, size))
                self.pairs.append(moving)
        self.index = {(i, j): k for k, (i, j, _) in enumerate(self.edges)}
        keys = [(p.tasks[i], p.tasks[j]) for i, j, _ in self.edges]
        lower = [min(hd[i][u] + p.durations[i][u] for u in p.allowed[i]) for i, _, _ in self.edges]
        upper = [max(low, ctx.horizon - min(tl[j][v] + p.durations[j][v] for v in p.allowed[j]) + slack)
                 for low, (_, j, _) in zip(lower, self.edges)]
        self.starts = ctx.lin.add_columns("tstart", keys, lower, upper)
        self.ends = ctx.lin.add_columns("tend", keys, lower, upper)
        # Presence columns of the pairs whose two ends both have a choice.
        wanted = [(k, u, v) for k, (i, j, _) in enumerate(self.edges) for u, v, _ in self.pairs[k]
                  if x.col(i, u) is not None and x.col(j, v) is not None]
        cols = ctx.lin.add_columns("presence", [(*keys[k], p.devices[u], p.devices[v]) for k, u, v in wanted],
                                   0, 1)
        self.w = dict(zip(wanted, cols))
        rows = ctx.lin.rows(None)
        for (k, u, v), col in self.w.items():
            i, j, _ = self.edges[k]
            rows.add("presence_def", (*keys[k], p.devices[u], p.devices[v]),
                     Expr.term(col) >= x.x(i, u) + x.x(j, v) - 1)
        for k, (i, j, _) in enumerate(self.edges):
            begin, end = self.start(k), self.end(k)
            rows.add("transfer_leave", keys[k], begin - timing.end(i) >= 0)
            moving = Expr()
            for u, v, time in self.pairs[k]:
                moving.add(self.presence(k, u, v), time)
            rows.add("transfer_def", keys[k], end - begin - moving >= 0)
        #: Order binaries of transfer pairs (see :meth:`add_orders`), ``(k, l) -> column``.
        self.orders: dict[tuple[int, int], int] = {}

    # ------------------------------------------------------------------ expressions
    def start(self, k: int) -> Expr:
        """The start of transfer ``k`` (the edge ``self.edges[k]``)."""
        return Expr.term(self.starts[k])

    def end(self, k: int) -> Expr:
        """The end of transfer ``k``."""
        return Expr.term(self.ends[k])

    def start_col(self, k: int) -> int:
        """Column of the start of transfer ``k``."""
        return self.starts[k]

    def end_col(self, k: int) -> int:
        """Column of the end of transfer ``k``."""
        return self.ends[k]

    def presence(self, k: int, u: int, v: int) -> Expr:
        """Whether transfer ``k`` goes from ``u`` to ``v``: exact on binary ``x`` (a presence
        column, or the one ``x`` left when the other end is fixed, or a constant)."""
        col = self.w.get((k, u, v))
        if col is not None:
            return Expr.term(col)
        i, j, _ = self.edges[k]
        x = self.ctx.family("x")
        a, b = x.x(i, u), x.x(j, v)
        # One end is fixed: x_iu * x_jv is the other end's x (or 0).
        return Expr(a.const * b.const, a.cols + b.cols, a.coefs + b.coefs)

    def usage(self, k: int, held: set[tuple[int, int]]) -> Expr:
        """Whether transfer ``k`` holds a resource that the device pairs ``held`` (among its
        moving pairs) hold: 1 when it does, at most 0 when it does not, on binary ``x``.

        A rectangle ``held = U x V`` is ``sum_U x_iu + sum_V x_jv - 1``, or with
        ``sum_d x_jd = 1`` ``sum_U x_iu - sum_{D_j - V} x_jv`` (a send port with every pair
        moving: ``x_iu - x_ju``), or its mirror, whichever has fewest terms; other sets sum
        the pairs' presence.
        """
        i, j, _ = self.edges[k]
        p = self.ctx.problem
        x = self.ctx.family("x")
        us = {u for u, _ in held}
        vs = {v for _, v in held}
        if len(held) == len(us) * len(vs):  # held is the rectangle us x vs
            choices = [(-1.0, [(i, u, 1.0) for u in us] + [(j, v, 1.0) for v in vs]),
                       (0.0, [(i, u, 1.0) for u in us] + [(j, v, -1.0) for v in p.allowed[j] if v not in vs]),
                       (0.0, [(j, v, 1.0) for v in vs] + [(i, u, -1.0) for u in p.allowed[i] if u not in us])]
            best = None
            for const, terms in choices:
                expr = Expr(const)
                for t, d, a in terms:
                    expr.add(x.x(t, d), a)
                expr = expr.merged(drop_zeros=True)
                if best is None or len(expr.cols) < len(best.cols):
                    best = expr
            return best
        total = Expr()
        for u, v in sorted(held):
            total.add(self.presence(k, u, v))
        return total.merged(drop_zeros=True)

    def add_orders(self, pairs: Sequence[tuple[int, int]]) -> list[Expr]:
        """Order binaries for transfer pairs ``(k, l)``, ``k < l``: 1 when ``k`` goes first."""
        p = self.ctx.problem
        keys = []
        for k, l in pairs:
            (i, j, _), (a, b, _) = self.edges[k], self.edges[l]
            keys.append((p.tasks[i], p.tasks[j], p.tasks[a], p.tasks[b]))
        cols = self.ctx.lin.add_columns("transfer_order", keys, 0, 1, integer=True)
        self.orders.update(zip(pairs, cols))
        return [Expr.term(c) for c in cols]

    # ------------------------------------------------------------------ warm start and read-back
    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        rows = {r.task: r for r in schedule.tasks}
        moved = {(t.src, t.dst): t for t in schedule.transfers}
        starts = []
        for k, (i, j, size) in enumerate(self.edges):
            a, b = rows[p.tasks[i]], rows[p.tasks[j]]
            u, v = p.device_index[a.device], p.device_index[b.device]
            row = moved.get((a.task, b.task))
            if row is not None:
                begin, end = row.start, row.end
            else:  # no row: the transfer leaves when its source ends (and lasts 0 on one device)
                begin = a.end
                end = begin + (p.comm_time(size, u, v) if p.pair_allowed(size, u, v) else 0.0)
            values[self.starts[k]], values[self.ends[k]] = begin, end
            starts.append((begin, end))
            for u2, v2, _ in self.pairs[k]:
                col = self.w.get((k, u2, v2))
                if col is not None:
                    values[col] = 1.0 if (u2, v2) == (u, v) else 0.0
        for (k, l), col in self.orders.items():
            values[col] = 1.0 if (*starts[k], k) <= (*starts[l], l) else 0.0

    def read(self, values: Sequence[float], draft: Draft) -> None:
        draft.extras["transfer_starts"] = {(i, j): values[self.starts[k]] or 0.0
                                           for k, (i, j, _) in enumerate(self.edges)}

