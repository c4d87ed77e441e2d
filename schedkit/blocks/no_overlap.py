"""``no_overlap``: a device runs one task at a time (job-shop disjunctions)."""

from __future__ import annotations

from typing import Literal

from ..validate import tolerance
from .base import Block, register_block


@register_block("no_overlap")
class NoOverlap(Block):
    """Two tasks on one device do not overlap: one order binary per pair the graph leaves open."""

    requires = frozenset({"x", "timing", "order"})
    provides = frozenset({"order"})
    encoding: Literal["bigm"] = "bigm"
    """How the disjunction is written: ``bigm`` with constants derived from the instance."""
    template = r"""
For each pair $i < j$ that may share a device and that the task graph does not order,
$y_{ij} = 1$ when $i$ comes first. For every device $d \in D_i \cap D_j$:

$$\mathit{start}_j \ge \mathit{end}_i - M_{ij}\,(1 - y_{ij}) - M_{ij}\,(2 - x_{i,d} - x_{j,d})$$
$$\mathit{start}_i \ge \mathit{end}_j - M_{ji}\, y_{ij} - M_{ji}\,(2 - x_{i,d} - x_{j,d})$$

$M_{ij} = H - q_i - r_j$ bounds $\mathit{end}_i - \mathit{start}_j$: $H$ is the makespan of a
feasible schedule of the same formulation, $r_j$ the head of $j$ (minimum work before it),
$q_i$ the tail of $i$ (minimum work after it). Pairs ordered by the graph's transitive
closure get no binary; terms with a fixed $x$ fold into constants.
"""

    builds_rows = True

    def build(self, ctx, blk):
        p = ctx.problem
        for i, j in ctx.order_pairs():
            y = ctx.order_col(i, j)
            ti, tj = p.tasks[i], p.tasks[j]
            common = sorted(set(p.allowed[i]) & set(p.allowed[j]))
            for first, second, tag in ((i, j, "before"), (j, i, "after")):
                m = ctx.big_m(first, second)
                c0, cf, vf = ctx.end_terms(first)
                # start_s - end_f + M*(1 - y or y) + M*(2 - x_fd - x_sd) >= 0
                head_coefs = [1.0] + [-c for c in cf]
                head_cols = [ctx.start_col(second)] + list(vf)
                if tag == "before":   # relaxed when y = 0:  + M (1 - y)
                    y_coef, y_const = -m, m
                else:                 # relaxed when y = 1:  + M y
                    y_coef, y_const = m, 0.0
                for d in common:
                    coefs = head_coefs + [y_coef]
                    cols = head_cols + [y]
                    const = -c0 + y_const + 2 * m
                    for k in (first, second):
                        col = ctx.x_col(k, d)
                        if col is None:
                            const -= m * ctx.x_fixed(k, d)
                        else:
                            coefs.append(-m)
                            cols.append(col)
                    blk.add("disjunct", (ti, tj, p.devices[d], tag), cols, coefs, lower=-const)

    def violations(self, problem, schedule):
        out = []
        tol = tolerance(schedule)
        by_device: dict[str, list] = {}
        for row in schedule.tasks:
            by_device.setdefault(row.device, []).append(row)
        for device, rows in by_device.items():
            rows.sort(key=lambda r: (r.start, r.end))
            latest = None
            for row in rows:
                if latest is not None and row.start < latest.end - tol and row.end - row.start > tol \
                        and latest.end - latest.start > tol:
                    out.append(f"device {device}: '{latest.task}' [{latest.start:g}, {latest.end:g}) "
                               f"overlaps '{row.task}' [{row.start:g}, {row.end:g})")
                if latest is None or row.end > latest.end:
                    latest = row
        return out
