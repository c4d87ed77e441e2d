"""``cuts``: valid inequalities on device loads and on chains of descendants and ancestors.

A ``cut`` block: its rows remove no schedule, only parts of the MILP's relaxation, so
the validator never checks it. A formulation that does not list ``cuts`` gets it with
its defaults (``cuts: {load: false, chain: false}`` turns both families of rows off).
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.window_sum import TermTable


@register_block("cuts")
class Cuts(Block):
    """Valid inequalities: one-device load windows and chains of descendants (ancestors) on a device."""

    holds_on_parts = True
    role = "cut"
    requires = frozenset({"x", "timing", "makespan"})
    load: bool = True
    """Window rows: the tasks with head (tail) at least ``r`` that run on a device, one after another."""
    chain: bool = True
    """Chain rows: a task's descendants (ancestors) that run on one device follow (precede) it in a
    row; written only when a block of the formulation orders the edges."""
    chain_thresholds: int = Field(4, ge=2)
    """Head or tail values per task, device and side that get a chain row (evenly spread)."""
    template = r"""
{% if load %}
For a device $d$ and a head value $r$, the tasks with head at least $r$ that run on $d$ run one after
another after $r$ (and the mirror with tails $q$):

$$C \ge r + \sum_{i:\, r_i \ge r} p_{i,d}\, x_{i,d} + \min_{i:\, r_i \ge r} q_i$$

With $r = 0$ this is the load row $C \ge \sum_i p_{i,d}\, x_{i,d}$.

{% endif %}
{% if chain %}
For a task $j$, a device $d$ and a tail value $q$ among $j$'s descendants $k \succ j$ (at most
{{ chain_thresholds }} values per task, device and side), and the mirror with ancestors and heads:

$$C \ge \mathit{end}_j + \sum_{k \succ j,\, q_k \ge q} p_{k,d}\, x_{k,d} + q \qquad
  \mathit{start}_j \ge r + \sum_{k \prec j,\, r_k \ge r} p_{k,d}\, x_{k,d}$$

(only when a block orders the edges: heads $r$ and tails $q$ are device-free and count no transfers).
{% endif %}
"""

    builds_rows = True

    def build(self, ctx, blk):
        if self.load:
            _add_load_rows(ctx, blk)
        if self.chain and ctx.orders_edges:
            _add_chain_rows(ctx, blk, self.chain_thresholds)

    def estimate(self, problem):
        from schedkit.problem.pairs import reach_on_devices

        total = 0
        if self.load:
            heads, tails = problem.heads, problem.tails
            for d in range(len(problem.devices)):
                users = [i for i, a in enumerate(problem.allowed) if d in a and len(a) > 1]
                for key in (heads, tails):
                    values = sorted(key[i] for i in users)
                    # one row per distinct value, holding the tasks at or above it
                    total += sum(len(values) - k for k, v in enumerate(values) if k == 0 or v != values[k - 1])
        if self.chain and problem.edges:
            rows_per_group = min(self.chain_thresholds, 4) / 2
            total += int(rows_per_group * (reach_on_devices(problem, "descendants")
                                           + reach_on_devices(problem, "ancestors")))
        return total

    def violations(self, problem, schedule):
        return []  # valid inequalities: every schedule satisfies them


def _add_load_rows(ctx, rows) -> None:
    """Valid inequalities: one-device relaxations with heads and tails.

    For a device ``d`` and a head value ``r``, the tasks with head at least ``r``
    that run on ``d`` run one after another after ``r``:
    ``C >= r + sum(p[i,d] x[i,d] for r_i >= r) + min tail``; the mirror rows use
    tails. With ``r = 0`` this is the plain load row ``C >= sum_i p[i,d] x[i,d]``.
    (Heads on ``d`` itself would not do: a window's constant must hold even when none
    of its tasks runs on ``d``.)
    """
    p = ctx.problem
    x = ctx.family("x")
    makespan = ctx.family("makespan").expr()
    for d, name in enumerate(p.devices):
        users = [i for i in range(len(p.tasks)) if d in p.allowed[i]]
        if not any(x.col(i, d) is not None for i in users):
            continue  # only fixed tasks: the device bound already covers them
        window_of = TermTable([(x.x(i, d), -p.durations[i][d]) for i in users]).window
        for side, key, other in (("head", ctx.heads, ctx.tails), ("tail", ctx.tails, ctx.heads)):
            keys = [key[i] for i in users]
            window = window_of(range(len(users)), keys)
            least_other = _least_at_or_above(keys, [other[i] for i in users])
            for value in sorted(set(keys)):
                if side == "tail" and value == 0:
                    continue  # the head family already holds the plain load row
                # C >= r + sum p x + min q over the window, the fixed tasks' durations folded in
                slack = makespan - (value + least_other[value])
                # (the makespan and x of distinct tasks: no column twice)
                if window.add_to(slack, value):
                    rows.add("device_load", (name, f"{side}_{value:g}"), slack >= 0, distinct=True)


def _least_at_or_above(keys: list[float], others: list[float]) -> dict[float, float]:
    """For each key value ``r``: the least of ``others[u]`` over the ``u`` with ``keys[u] >= r``
    (one pass down the keys, not one per window)."""
    least, run = {}, np.inf
    for u in sorted(range(len(keys)), key=keys.__getitem__, reverse=True):
        run = min(run, others[u])
        least[keys[u]] = run
    return least


def _add_chain_rows(ctx, rows, thresholds: int) -> None:
    """Valid inequalities: a task's descendants (ancestors) on one device, in a row.

    For task ``j``, device ``d`` and a tail value ``q`` among ``j``'s descendants that
    may run on ``d``: those with tail at least ``q`` that do run on ``d`` start after
    ``end_j`` and run one after another, so
    ``C >= end_j + sum(p[k,d] x[k,d] for k in W) + q``. The mirror with ancestors and
    heads: ``start_j >= r + sum(p[k,d] x[k,d] for k in W)``. With no task of ``W`` on
    ``d`` the rows still hold (``q`` is the tail of a descendant, below ``j``'s tail).
    Heads and tails here are device-free and count no transfers. Only rows with an
    assignment column are written; at most ``thresholds`` values per task, device and side.
    """
    p = ctx.problem
    n = len(p.tasks)
    x, timing = ctx.family("x"), ctx.family("timing")
    makespan = ctx.family("makespan").expr()
    descendants = [[k for k in range(n) if (p.descendants[j] >> k) & 1] for j in range(n)]
    ancestors: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        for k in descendants[j]:
            ancestors[k].append(j)
    # a device's x[k,d] and -p[k,d] terms laid out once, and long windows chosen on arrays: a
    # chain row of a large graph holds hundreds of terms (DenseNet-121: 4 million in 20,000 rows)
    tables = [TermTable([(x.x(k, d), -p.durations[k].get(d, 0.0)) for k in range(n)])
              for d in range(len(p.devices))]
    on = [[d in allowed for allowed in p.allowed] for d in range(len(p.devices))]
    for j in range(n):
        for d, device in enumerate(p.devices):
            on_d = on[d]
            for side, group, key in (("after", descendants[j], ctx.tails), ("before", ancestors[j], ctx.heads)):
                group = [k for k in group if on_d[k]]
                keys = [key[k] for k in group]
                window = tables[d].window(group, keys)
                if window.top == -np.inf:
                    continue  # no assignment column in the group: no row would hold one
                values = sorted(set(keys))
                if len(values) > thresholds:
                    picks = (round(t * (len(values) - 1) / (thresholds - 1)) for t in range(thresholds))
                    values = sorted({values[t] for t in picks})
                for value in values:
                    if side == "after":   # C - end_j - sum p x >= q
                        slack = makespan - timing.end(j) - value
                    else:                 # start_j - sum p x >= r
                        slack = timing.start(j) - value
                    # (the makespan, j's start or end, and x of other tasks: no column twice)
                    if window.add_to(slack, value):
                        rows.add("chain_load", (p.tasks[j], device, side, f"{value:g}"), slack >= 0,
                                 distinct=True)
