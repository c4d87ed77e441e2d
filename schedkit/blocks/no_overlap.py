"""``no_overlap``: a device runs one task at a time (job-shop disjunctions)."""

from __future__ import annotations

from typing import Literal

from schedkit.numerics import bound_slack, time_tolerance
from schedkit.blocks.base import Block, register_block
from schedkit.schedule.bulk_checks import devices_apart


@register_block("no_overlap")
class NoOverlap(Block):
    """Two tasks on one device do not overlap: one order binary per pair the graph leaves open."""

    holds_on_parts = True
    default = True
    requires = frozenset({"x", "timing", "order"})
    build_only = frozenset({"encoding"})
    encoding: Literal["device", "bigm"] = "device"
    """How the disjunction is written, both with constants derived from the instance:
    ``device`` (per-device durations, one constant per case) or ``bigm`` (end times, one
    constant per pair)."""
    template = r"""
For each pair $i < j$ that may share a device and that the task graph does not order,
$y_{ij} = 1$ when $i$ comes first. $H$ is the makespan of a feasible schedule of the same
formulation; $r_{i,d}$ and $q_{i,d}$ are the head and tail of $i$ on device $d$ (the least
work and transfer time before its start and after its end there), $r_i$ and $q_i$ their
device-free versions, $\bar s_i$ the upper bound of $\mathit{start}_i$.
{% if encoding == "device" %}

For every device $d \in D_i \cap D_j$ and both orders $(f, s) \in \{(i, j), (j, i)\}$, with
$Y = 1 - y_{ij}$ for $(i, j)$ and $Y = y_{ij}$ for $(j, i)$:

$$\mathit{start}_s \ge \mathit{start}_f + p_{f,d} - M^1_{fsd}\,Y - M^2_{fd}\,(1 - x_{f,d}) - M^3_{fsd}\,(1 - x_{s,d})$$

Each constant covers one case on its own: $M^1_{fsd} = H - q_{f,d} - r_{s,d}$ (both on $d$,
the other order), $M^2_{fd} = \bar s_f + p_{f,d} - r_s$ ($f$ elsewhere),
$M^3_{fsd} = H - q_{f,d} - r_s$ ($f$ on $d$, $s$ elsewhere).
{% else %}

For every device $d \in D_i \cap D_j$:

$$\mathit{start}_j \ge \mathit{end}_i - M_{ij}\,(1 - y_{ij}) - M_{ij}\,(2 - x_{i,d} - x_{j,d})$$
$$\mathit{start}_i \ge \mathit{end}_j - M_{ji}\, y_{ij} - M_{ji}\,(2 - x_{i,d} - x_{j,d})$$

$M_{ij} = H - q_i - r_j$ bounds $\mathit{end}_i - \mathit{start}_j$.
{% endif %}

Pairs ordered by the graph's transitive closure get no binary; terms with a fixed $x$ fold
into constants. A device on which either task takes no time gets no rows: a task of zero
duration holds its device for no time, and may sit anywhere.
"""

    builds_rows = True

    def build(self, ctx, blk):
        if self.encoding == "device":
            return self._build_device(ctx, blk)
        p = ctx.problem
        order = ctx.family("order")
        x, timing = ctx.family("x"), ctx.family("timing")
        for i, j in order.pairs:
            y = order.y(i, j)
            ti, tj = p.tasks[i], p.tasks[j]
            common = _timed_common(p, i, j)
            for first, second, tag in ((i, j, "before"), (j, i, "after")):
                m = ctx.big_m(first, second)
                # start_s >= end_f - M (1 - y) - M (2 - x_fd - x_sd)   (before; after: M y)
                apart = timing.start(second) - timing.end(first) + (m * (1 - y) if tag == "before" else m * y)
                for d in common:
                    blk.add("disjunct", (ti, tj, p.devices[d], tag),
                            apart + 2 * m - m * x.x(first, d) - m * x.x(second, d) >= 0)

    def _build_device(self, ctx, blk):
        p = ctx.problem
        order = ctx.family("order")
        x, timing = ctx.family("x"), ctx.family("timing")
        hd, tl = ctx.device_heads, ctx.device_tails
        H, slack, devices, add_sum = ctx.horizon, bound_slack(ctx.horizon), p.devices, blk.add_sum
        # 1 - x[k,d], "k is elsewhere": made once per task and device, shared by every pair
        away = [{d: (1 - x.x(k, d)).frozen() for d in allowed} for k, allowed in enumerate(p.allowed)]
        for i, j in order.pairs:
            y = order.y(i, j)
            ti, tj = p.tasks[i], p.tasks[j]
            common = _timed_common(p, i, j)
            for first, second, tag, Y in ((i, j, "before", 1 - y), (j, i, "after", y)):
                gap = timing.start(second) - timing.start(first)
                latest, lowest = ctx.lin.upper[timing.start_col(first)], ctx.lin.lower[timing.start_col(second)]
                durations, tail, head = p.durations[first], tl[first], hd[second]
                first_away, second_away = away[first], away[second]
                for d in common:
                    duration = durations[d]
                    m1 = max(0.0, H - tail[d] - head[d]) + slack
                    m2 = max(0.0, latest + duration - lowest)
                    m3 = max(0.0, H - tail[d] - lowest) + slack
                    # start_s - start_f - p_fd + M1 Y + M2 (1 - x_fd) + M3 (1 - x_sd) >= 0, summed
                    # by the sink (the hottest rows of a build: no expression or row object made);
                    # two tasks' starts, their x on d and the order y: no column twice
                    add_sum("disjunct", (ti, tj, devices[d], tag), gap,
                            ((Y, m1), (first_away[d], m2), (second_away[d], m3)), const=-duration, lower=0.0,
                            distinct=True)

    def build_cp(self, cp):
        durations = cp.problem.durations
        for d in range(len(cp.problem.devices)):
            # (CP-SAT forbids a zero-size interval inside another; the validator allows it)
            intervals = [interval[d] for i, interval in enumerate(cp.interval) if d in interval and durations[i][d]]
            if len(intervals) > 1:
                cp.model.add_no_overlap(intervals)

    def estimate(self, problem):
        from schedkit.problem.pairs import open_pairs

        common = sum(len(a) for a in problem.allowed) / max(1, len(problem.tasks))
        return int(open_pairs(problem) * common * 2 * 6)

    def estimate_cp(self, problem):
        return sum(len(a) for a in problem.allowed)  # (each interval in one no-overlap constraint)

    def violations(self, problem, schedule):
        out = []
        tol = time_tolerance(schedule.makespan)
        if devices_apart(problem, schedule.tasks, tol):
            return out  # every device's rows apart on arrays: the loop below would say nothing
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


def _timed_common(problem, i: int, j: int) -> list[int]:
    """Devices both tasks may use and on which both take time (only those can overlap)."""
    durations = problem.durations
    return sorted(d for d in set(problem.allowed[i]) & set(problem.allowed[j])
                  if durations[i][d] and durations[j][d])
