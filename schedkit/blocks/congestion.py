"""``congestion``: no two transfers hold one channel or one device port at once.

A transfer from ``u`` to ``v`` holds what :meth:`Problem.occupies
<schedkit.problem.Problem.occupies>` names for its whole duration: every channel of its
route (``resource: channel``, She et al.), the send port of ``u`` and the receive port of
``v`` (``port``, MOIRAI's constraint 8) or both. Two transfers that may hold a common
resource and that the task graph leaves unordered get one order binary; for each resource
they may share, two big-M rows keep them apart, relaxed when either does not hold it.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "heft", formulation="moirai")
>>> Congestion(resource="port").violations(p, s)
[]
>>> Congestion(resource="port").to_data()
{'congestion': {'resource': 'port'}}
"""

from __future__ import annotations

import random
from typing import Literal

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.expr import Expr
from schedkit.numerics import time_tolerance


@register_block("congestion")
class Congestion(Block):
    """No two transfers hold one channel (or device port) at once: one order binary per pair that may share one."""

    holds_on_parts = True
    requires = frozenset({"x", "timing", "transfer"})
    resource: Literal["channel", "port", "both"] = "channel"
    """What transfers contend for: ``channel`` (every channel of the route), ``port`` (the sending
    device's send port and the receiving device's receive port) or ``both``."""
    template = r"""
A transfer from $u$ to $v$ holds
{%- if resource == "channel" %} every channel of the route from $u$ to $v$
{%- elif resource == "port" %} the send port of $u$ and the receive port of $v$ (not the ports of the
devices a multi-hop route passes through)
{%- else %} every channel of the route from $u$ to $v$, the send port of $u$ and the receive port of $v$
{%- endif %}, for its whole duration. Let $h_{k,\rho}$ say that transfer $k$ holds resource $\rho$,
linear in $x$ and exact on binary $x$: for the send port of $u$,
$h = x_{i,u} - \sum_{v \in D_j,\ c_{uv} = 0} x_{j,v}$ (that is $x_{i,u} - x_{j,u}$ when every pair
moves data), the receive port of $v$ is its mirror, and a channel held by the device pairs $P_\rho$
gives $h = \sum_{(u,v) \in P_\rho} w_{k,uv}$ ($\sum_{U} x_{i,u} + \sum_{V} x_{j,v} - 1$ when
$P_\rho = U \times V$).

For every pair of transfers $k = (i,j)$ and $l = (a,b)$ that may hold a common resource and that
the task graph does not order ($j \ne a$ and $j$ does not reach $a$, and the mirror), one binary
$z_{kl} = 1$ when $k$ goes first, and for every resource $\rho$ they may share:

$$s^{tr}_l \ge e^{tr}_k - M_{kl}\,\big(3 - z_{kl} - h_{k,\rho} - h_{l,\rho}\big) \qquad
  s^{tr}_k \ge e^{tr}_l - M_{lk}\,\big(2 + z_{kl} - h_{k,\rho} - h_{l,\rho}\big)$$

$M_{kl}$ is the upper bound of $e^{tr}_k$ minus the lower bound of $s^{tr}_l$ (family `transfer`),
that is from the horizon $H$ (the makespan of a schedule that satisfies every block) and the device
heads and tails: no fixed constant.
"""

    builds_rows = True

    def applies_to(self, problem):
        return bool(problem.edges)

    def timing_rules(self, rules, problem):
        # (every engine books transfers on the timelines of this resource: no two at once)
        return rules.replace(congestion=self.resource)

    def covers(self, other):
        # ``both`` holds channels and ports: it implies either alone.
        return other.kind == self.kind and self.resource in (other.resource, "both")

    # ------------------------------------------------------------------ build
    def build(self, ctx, blk):
        p = ctx.problem
        tr = ctx.family("transfer")
        lin = ctx.lin
        held = self._held(p, tr.pairs)
        pairs = candidate_pairs(p, tr.edges, held, ctx.orders_edges)
        orders = tr.add_orders([kl for kl, _ in pairs])
        usage: dict[tuple[int, str], Expr] = {}

        def use(k, name):
            if (k, name) not in usage:
                usage[k, name] = tr.usage(k, held[k][name])
            return usage[k, name]

        names = [(p.tasks[i], p.tasks[j]) for i, j, _ in tr.edges]
        for ((k, l), shared), z in zip(pairs, orders):
            written = set()
            for name in shared:
                hk, hl = use(k, name), use(l, name)
                key = (_frozen(hk), _frozen(hl))
                if key in written:
                    continue  # the same rows for another resource (the send and receive port of one pair)
                written.add(key)
                for first, second, tag in ((k, l, "before"), (l, k, "after")):
                    end, begin = tr.end(first), tr.start(second)
                    m = max(0.0, end.bounds(lin.lower, lin.upper)[1] - begin.bounds(lin.lower, lin.upper)[0])
                    # s_second >= e_first - M (3 - z - h_k - h_l)   (before; after: 2 + z - ...)
                    slack = (3.0 - z if tag == "before" else 2.0 + z) - hk - hl
                    # (both h may name one x, a shared source: summed, and a term that cancels goes)
                    apart = (begin - end + m * slack).merged(drop_zeros=True)
                    blk.add("disjunct", (*names[k], *names[l], name, tag), apart >= 0)

    def build_cp(self, cp):
        p = cp.problem
        holders: dict[str, list] = {}
        for transfer in cp.transfers():
            for (u, v), (_, interval) in transfer.pairs.items():
                for name in p.occupies(u, v, self.resource):
                    holders.setdefault(name, []).append(interval)
        for name in sorted(holders):
            if len(holders[name]) > 1:
                cp.model.add_no_overlap(holders[name])

    def _held(self, p, pairs) -> list[dict[str, set[tuple[int, int]]]]:
        """For each transfer, the resources it may hold and the device pairs that hold each."""
        out = []
        for moving in pairs:
            mine: dict[str, set[tuple[int, int]]] = {}
            for u, v, _ in moving:
                for name in p.occupies(u, v, self.resource):
                    mine.setdefault(name, set()).add((u, v))
            out.append(mine)
        return out

    def estimate_cp(self, problem):
        # (each transfer's interval per device pair, in the no-overlap of each resource it holds)
        return sum(2 * len(problem.allowed[i]) * len(problem.allowed[j]) for i, j, size in problem.edges if size)

    def estimate(self, problem):
        moving = [(i, j) for i, j, size in problem.edges if size]
        held = self._held(problem, [[(u, v, None) for u in problem.allowed[i] for v in problem.allowed[j]
                                     if problem.moves(size, u, v)] for i, j, size in problem.edges if size])
        count = len(moving)
        if count < 2:
            return 0
        # Rows of a sample of pairs (the exact count is quadratic): for each resource both may
        # hold, two rows of the order binary, two ends and both usage expressions.
        rng = random.Random(0)
        sample = [tuple(rng.sample(range(count), 2)) for _ in range(min(400, count * count))]
        reach = problem.descendants
        nonzeros = 0
        for a, b in sample:
            if _ordered(moving[a], moving[b], reach, True):
                continue
            for name in held[a].keys() & held[b].keys():
                nonzeros += 2 * (3 + _usage_terms(problem, moving[a], held[a][name])
                                 + _usage_terms(problem, moving[b], held[b][name]))
        return int(count * (count - 1) / 2 * nonzeros / len(sample))

    # ------------------------------------------------------------------ check
    def violations(self, problem, schedule):
        out = []
        tol = time_tolerance(schedule.makespan)
        rows = {r.task: r for r in schedule.tasks}
        sizes = {(problem.tasks[i], problem.tasks[j]): size for i, j, size in problem.edges}
        spans: dict[tuple[str, str], list] = {}
        for t in schedule.transfers:
            size = sizes.get((t.src, t.dst))
            if size is None or t.src not in rows or t.dst not in rows:
                continue  # the structural checks name it
            u, v = problem.device_index[rows[t.src].device], problem.device_index[rows[t.dst].device]
            if not problem.moves(size, u, v):
                continue  # no data moves: the row holds nothing
            for kind in ("channel", "port"):
                if self.resource in (kind, "both"):
                    for name in problem.occupies(u, v, kind):
                        spans.setdefault((kind, name), []).append((t.start, t.end, f"{t.src}->{t.dst}"))
        for (kind, name), found in spans.items():
            found.sort()
            latest = None
            for span in found:
                if latest is not None and span[0] < latest[1] - tol:
                    out.append(f"{kind} {name}: transfer {latest[2]} [{latest[0]:g}, {latest[1]:g}) "
                               f"overlaps transfer {span[2]} [{span[0]:g}, {span[1]:g})")
                if latest is None or span[1] > latest[1]:
                    latest = span
        return out


def _frozen(h: Expr) -> tuple:
    return h.const, tuple(sorted(zip(h.cols, h.coefs)))


def candidate_pairs(problem, edges, held, orders_edges: bool) -> list[tuple[tuple[int, int], list[str]]]:
    """Transfer pairs ``(k, l)``, ``k < l``, that may hold a common resource and that the task
    graph leaves unordered, with the resources they may share (sorted).

    ``orders_edges``: whether a block makes every edge wait (else only a transfer into the
    source of another orders the two).
    """
    reach = problem.descendants
    out = []
    for k in range(len(edges)):
        mine = held[k]
        if not mine:
            continue
        for l in range(k + 1, len(edges)):
            shared = mine.keys() & held[l].keys()
            if shared and not _ordered(edges[k][:2], edges[l][:2], reach, orders_edges):
                out.append(((k, l), sorted(shared)))
    return out


def _usage_terms(problem, edge, held) -> int:
    """About how many terms :meth:`TransferFamily.usage
    <schedkit.milp.families.transfer.TransferFamily.usage>` writes for ``held`` (its shortest
    form of a rectangle of device pairs, else one presence per pair)."""
    i, j = edge
    us, vs = {u for u, _ in held}, {v for _, v in held}
    if len(held) != len(us) * len(vs):
        return len(held)
    return min(len(us) + len(vs), len(us) + len(problem.allowed[j]) - len(vs),
               len(vs) + len(problem.allowed[i]) - len(us))


def _ordered(first, second, reach, orders_edges: bool) -> bool:
    """Whether the task graph orders transfer ``(i, j)`` and ``(a, b)``: one's consumer is
    the other's source, or (when the edges wait) reaches it."""
    (i, j), (a, b) = first, second
    if j == a or b == i:
        return True
    return orders_edges and bool((reach[j] >> a) & 1 or (reach[b] >> i) & 1)
