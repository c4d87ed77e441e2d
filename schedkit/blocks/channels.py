"""``channels``: every transfer is a task of its own, between its source's end and its consumer's start.

Without this block a transfer is only a delay inside ``precedence``. With it, each edge
that may move data has a start and an end (the ``transfer`` family), so that a transfer
can wait, for a channel or a port under ``congestion``; the consumer starts after the
transfer ends. Precedence's own rows stay: they are the tighter form of the same delay.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "heft", formulation="moirai")
>>> Channels().violations(p, s)
[]
>>> late = s.model_copy(update={"transfers": [t.model_copy(update={"end": t.end + 5})
...                                          for t in s.transfers]})
>>> Channels().violations(p, late)[0].startswith("edge logits->sample: the transfer ends at")
True
"""

from __future__ import annotations

from schedkit.blocks.base import Block, placed_edges, register_block
from schedkit.numerics import time_tolerance


@register_block("channels")
class Channels(Block):
    """Transfers as tasks: each starts after its source ends, lasts its transfer time, ends before its consumer starts."""

    holds_on_parts = True
    requires = frozenset({"x", "timing", "transfer"})
    template = r"""
Every edge $(i,j)$ that may move data has a transfer with start $s^{tr}_{ij}$ and end
$e^{tr}_{ij}$ (family `transfer`): it leaves after $i$ ends and lasts the transfer time
$c_{uv}$ of the device pair $(u, v)$ it goes between, on the fixed route from $u$ to $v$:

$$s^{tr}_{ij} \ge \mathit{end}_i \qquad e^{tr}_{ij} \ge s^{tr}_{ij} + \sum_{u \in D_i,\, v \in D_j} c_{uv}\, w_{ij,uv}
  \qquad w_{ij,uv} \ge x_{i,u} + x_{j,v} - 1$$

and the consumer waits for it:

$$\mathit{start}_j \ge e^{tr}_{ij}$$

A transfer on one device, or of zero time, has length 0 and holds nothing. Alone, these rows
repeat `precedence`; they let a transfer wait for a channel or a port (`congestion`).
"""

    builds_rows = True

    def applies_to(self, problem):
        return bool(problem.edges)

    def build(self, ctx, blk):
        p = ctx.problem
        tr, timing = ctx.family("transfer"), ctx.family("timing")
        for k, (i, j, _) in enumerate(tr.edges):
            blk.add("arrive", (p.tasks[i], p.tasks[j]), timing.start(j) >= tr.end(k))

    def build_cp(self, cp):
        for transfer in cp.transfers():
            cp.model.add(cp.start[transfer.edge[1]] >= transfer.end)

    def estimate(self, problem):
        total = 0
        for i, j, size in problem.edges:
            if size:
                pairs = len(problem.allowed[i]) * len(problem.allowed[j])
                total += 8 + 4 * pairs
        return total

    def violations(self, problem, schedule):
        out = []
        tol = time_tolerance(schedule.makespan)
        for size, a, b, u, v, t in placed_edges(problem, schedule):
            if not problem.pair_allowed(size, u, v) or not problem.moves(size, u, v):
                continue  # no transfer (or no link path: the precedence block names it)
            label = f"edge {a.task}->{b.task}"
            if t is None:
                out.append(f"{label}: data moves {a.device}->{b.device} but the schedule has no transfer row")
                continue
            if (t.from_, t.to) != (a.device, b.device):
                out.append(f"{label}: the transfer goes {t.from_}->{t.to}, the tasks sit on "
                           f"{a.device}->{b.device}")
                continue
            need = problem.comm_time(size, u, v)
            if t.start < a.end - tol:
                out.append(f"{label}: the transfer starts at {t.start:g}, before '{a.task}' ends at {a.end:g}")
            if t.end > b.start + tol:
                out.append(f"{label}: the transfer ends at {t.end:g}, after '{b.task}' starts at {b.start:g}")
            if t.end - t.start < need - tol:
                out.append(f"{label}: the transfer lasts {t.end - t.start:g}, needs {need:g}")
            route = list(problem.route[u][v])
            if t.route is not None and list(t.route) != route:
                out.append(f"{label}: the transfer's route {t.route} is not the route "
                           f"{a.device}->{b.device}, {route}")
        return out
