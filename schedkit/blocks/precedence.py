"""``precedence``: a task starts after its predecessors end and their data arrived."""

from __future__ import annotations

from schedkit.errors import FormulationError
from schedkit.numerics import time_tolerance
from schedkit.blocks.base import Block, placed_edges, register_block
from schedkit.blocks.edge_checks import placed_edges_at, suspect_edges
from schedkit.schedule.batched import is_batched


@register_block("precedence")
class Precedence(Block):
    """A task starts once each predecessor has ended and, across devices, its data arrived."""

    holds_on_parts = True
    default = True
    interprets = "edges (data dependencies)"
    requires = frozenset({"x", "timing"})
    communication: bool = True
    """Add the transfer time ``size / bandwidth + latency`` when the two ends sit on different devices."""
    template = r"""
For every edge $(i,j)$: $\mathit{start}_j \ge \mathit{end}_i$.
{% if communication %}
Where the two ends may sit on different devices and data moves, with $c_{uv}$ the transfer
time of the edge from $u$ to $v$ ($c_{uu} = 0$):

$$\mathit{start}_j \ge \mathit{end}_i + \sum_{v \in D_j \setminus\{u\}} c_{uv}\, x_{j,v}
  - \Big(1 - x_{i,u}\Big) \sum_{v \in D_j \setminus\{u\}} c_{uv} \qquad \forall u \in D_i$$

$$\mathit{start}_j \ge \mathit{end}_i + \sum_{u \in D_i \setminus\{v\}} c_{uv}\, x_{i,u}
  - \Big(1 - x_{j,v}\Big) \sum_{u \in D_i \setminus\{v\}} c_{uv} \qquad \forall v \in D_j$$

Both are exact when $x_{i,u} = x_{j,v} = 1$ and relax to $\mathit{start}_j \ge \mathit{end}_i - \ldots$
otherwise; they need no product variables.
{% endif %}
Where an edge carries data, device pairs with no link path get $x_{i,u} + x_{j,v} \le 1$.
"""

    builds_rows = True

    def applies_to(self, problem):
        return bool(problem.spec.edges)  # (one per edge of Problem.edges, which it need not build)

    def edge_delays(self):
        return self.communication

    def covers(self, other):
        # With communication, every edge waits at least as long as without.
        return other.kind == self.kind and (self.communication or not other.communication)

    def build(self, ctx, blk):
        p = ctx.problem
        x, timing = ctx.family("x"), ctx.family("timing")
        for i, j, size in p.edges:
            ti, tj = p.tasks[i], p.tasks[j]
            wait = timing.start(j) - timing.end(i)
            blk.add("delay", (ti, tj, "data"), wait >= 0)
            if size == 0:
                continue
            Ai, Aj = p.allowed[i], p.allowed[j]
            # (data needs a link path even where its transfer takes no time: as the check and CP-SAT say)
            for u in Ai:
                for v in Aj:
                    if u != v and not p.linked[u][v]:
                        _at_most_one(blk, (ti, tj, p.devices[u], p.devices[v]), x.x(i, u) + x.x(j, v))
            if not self.communication:
                continue
            for side, mine, other in (("from", Ai, Aj), ("to", Aj, Ai)):
                for a in mine:
                    cost = {}
                    for b in other:
                        if a == b:
                            continue
                        u, v = (a, b) if side == "from" else (b, a)
                        if p.linked[u][v]:
                            cost[b] = p.comm_time(size, u, v)
                    if not any(cost.values()):
                        continue
                    # start_j - end_i >= sum_b c_b x_b - K (1 - x_a), K = sum_b c_b: the terms in
                    # the order of the template (constant K first, then x_a, then each x_b)
                    k = sum(cost.values())
                    here, there = (i, j) if side == "from" else (j, i)
                    terms = [(x.x(here, a), -k)] + [(x.x(there, b), -c) for b, c in cost.items()]
                    # (the two tasks' times and x: no column twice)
                    blk.add_sum("delay", (ti, tj, f"{side}_{p.devices[a]}"), wait, terms, const=k, lower=0.0,
                                distinct=True)

    def build_cp(self, cp):
        p, model = cp.problem, cp.model
        for i, j, size in p.edges:
            model.add(cp.start[j] >= cp.end[i])
            if size == 0:
                continue
            for u, on_u in cp.on[i].items():
                for v, on_v in cp.on[j].items():
                    if not p.pair_allowed(size, u, v):
                        model.add_bool_or([on_u.negated(), on_v.negated()])
                    elif self.communication and p.moves(size, u, v):
                        delay = cp.ticks.up(p.comm_time(size, u, v))
                        model.add(cp.start[j] >= cp.end[i] + delay).only_enforce_if([on_u, on_v])

    def estimate(self, problem):
        total = 0
        for i, j, size in problem.edges:
            total += 3
            if self.communication and size:
                ai, aj = len(problem.allowed[i]), len(problem.allowed[j])
                total += ai * (4 + aj) + aj * (4 + ai)
        return total

    def estimate_cp(self, problem):
        # (one row per edge, and one enforced row or clause per pair of devices that it joins)
        return sum(1 + (len(problem.allowed[i]) * len(problem.allowed[j]) if size else 0)
                   for i, j, size in problem.edges)

    def violations(self, problem, schedule):
        tol = time_tolerance(schedule.makespan)
        # The arrays find the edges the check below might fail on (none, for a valid
        # schedule); it judges those alone, and every edge where the arrays cannot tell.
        found = suspect_edges(problem, schedule, self.communication, tol)
        edges = placed_edges(problem, schedule) if found is None else placed_edges_at(problem, schedule, found)
        out = []
        batched = is_batched(schedule)  # (then a transfer is a delay: no rows)
        for size, a, b, u, v, moved in edges:
            if not problem.pair_allowed(size, u, v):
                out.append(f"edge {a.task}->{b.task}: no link path from {a.device} to {b.device}")
                continue
            delay = problem.comm_time(size, u, v) if self.communication else 0.0
            if b.start < a.end + delay - tol:
                out.append(f"edge {a.task}->{b.task}: '{b.task}' starts at {b.start:g}, "
                           f"before {a.end + delay:g} (end {a.end:g} + transfer {delay:g})")
            elif delay > 0 and not batched:
                # The data's journey is part of the schedule: a row that arrives in time.
                if moved is None:
                    out.append(f"edge {a.task}->{b.task}: data moves {a.device}->{b.device} "
                               f"but the schedule has no transfer row for it")
                elif moved.end > b.start + tol:
                    out.append(f"edge {a.task}->{b.task}: the transfer ends at {moved.end:g}, "
                               f"after '{b.task}' starts at {b.start:g}")
        return out


def _at_most_one(blk, key, both) -> None:
    """``x[first] + x[second] <= 1``: the two ends may not sit on devices with no link path."""
    if both.is_constant:
        if both.const > 1:
            raise FormulationError(f"edge {key[0]}->{key[1]}: tasks fixed to {key[2]} and {key[3]}, "
                                   f"which no link path joins")
        return
    blk.add("no_link", key, both <= 1)
