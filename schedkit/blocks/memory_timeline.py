"""``memory_timeline``: a device's memory level, which rises and falls over time, stays within its capacity.

Two meanings (``docs``: DESIGN, "Semantics ... ``memory_timeline``"), both checked by
:meth:`MemoryTimeline.violations` with one event sweep per device:

- ``deltas`` (She et al. 2025, training pipelines): a device holds the weights
  ``weight_memory`` (and static ``memory``) of its tasks throughout; a task's positive
  ``activation_memory`` is added when it starts, a negative one released when it ends;
  at equal times releases come first.
- ``lifetime`` (inference): a task's output, ``activation_memory`` >= 0, lives on its device
  from the task's start until its last local consumer or outgoing transfer ends (its own
  end without consumers), and a copy lives on every other device that consumes it, from
  the first transfer's start there until the last consumer there ends.

The MILP rows are in :mod:`schedkit.blocks.memory_timeline_rows`. A problem with no finite
capacity or no weights, static memory or activations gives the block nothing to say
(:meth:`~MemoryTimeline.applies_to` is false, as for ``memory``): no rows, no checks, and
``schedkit solve`` says so in one note rather than failing (the block is simply true).

Examples
--------
>>> from schedkit import Problem, Schedule, TaskRun
>>> p = Problem.from_dict({"name": "two", "devices": [{"name": "gpu", "memory": 6}],
...     "tasks": [{"name": "f", "durations": {"gpu": 1}, "weight_memory": 2, "activation_memory": 3},
...               {"name": "b", "durations": {"gpu": 1}, "activation_memory": -3},
...               {"name": "g", "durations": {"gpu": 1}, "activation_memory": 3}]})
>>> rows = [("f", 0, 1), ("b", 1, 2), ("g", 2, 3)]
>>> s = Schedule(problem="two", method="manual", status="heuristic",
...              tasks=[TaskRun(task=t, device="gpu", start=a, end=e) for t, a, e in rows])
>>> MemoryTimeline().violations(p, s)      # b frees f's activations before g starts
[]
>>> late = s.model_copy(update={"tasks": [TaskRun(task=t, device="gpu", start=a, end=e)
...     for t, a, e in [("f", 0, 1), ("g", 1, 2), ("b", 2, 3)]]})
>>> MemoryTimeline().violations(p, late)
['device gpu: memory level 8 at time 1 exceeds its capacity 6']
"""

from __future__ import annotations

import math
from typing import Literal

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.memory_timeline_rows import (Expr, Vocabulary, build_deltas, capacity_row, counted,
                                                  output, rank_key, remote, resident, started, tstart)
from schedkit.errors import ProblemError
from schedkit.numerics import fits, is_whole, time_tolerance, whole_units


@register_block("memory_timeline")
class MemoryTimeline(Block):
    """A device's memory level over time (weights, activations added and released) stays within its capacity."""

    holds_on_parts = True
    interprets = "weights and activations over time"
    subsumes = frozenset({"memory"})  # static memory is resident in the level
    requires = frozenset({"x", "timing", "order"})
    mode: Literal["deltas", "lifetime"] = "deltas"
    """``deltas`` (She et al.): weights stay resident, a positive activation is added when its
    task starts and a negative one released when its task ends; ``lifetime``: an activation is
    a task's output, held from its start until its last consumer (or transfer) ends, with a copy
    on each other device that consumes it."""
    template = r"""
$R_i = w_i + m_i$ (weights and static memory) stays on the device of task $i$; $a_i$ is its
activation and $M_d$ the capacity of device $d$.
{% if mode == "deltas" %}
A positive $a_k$ is added when $k$ starts, a negative one released when it ends. A level rises only
when an activation starts, and a device runs one task at a time, so for every task $k$ with
$a_k > 0$ and device $d \in D_k$ with finite $M_d$:

$$\sum_{i:\, d \in D_i} R_i\, x_{i,d} + a_k + \sum_{j \ne k} a_j\, \pi^d_{jk}
  \le M_d + \bar M_{kd}\,(1 - x_{k,d})$$

where $\pi^d_{jk}$ is "$j$ runs on $d$ before $k$": $x_{j,d}$ when the graph puts $j$ first, absent
when it puts $k$ first, else the product $x_{j,d}\, y_{jk}$ of the order binary, bounded from the
safe side: $\pi \ge x_{j,d} + y_{jk} - 1$ when $a_j > 0$, $\pi \le x_{j,d}$ and $\pi \le y_{jk}$ when
$a_j < 0$ ($\pi = y_{jk}$ when $j$ can only run on $d$). $\bar M_{kd}$ is the largest value the left
side can take minus $M_d$. Pairs in which a task takes no time on $d$ (which `no_overlap` leaves
free) get rows tying $y$ to the times: $\mathit{start}_k \ge \mathit{end}_j$ when a release of $j$
is counted before $k$, $\mathit{start}_j \ge \mathit{start}_k$ when an addition of $j$ is not.
{% else %}
The output of $i$ ($a_i \ge 0$) lives on its device over $[\mathit{start}_i, E_i)$ with
$E_i \ge \mathit{end}_i$, $E_i \ge \mathit{end}_j$ for each consumer $j$ on the same device and
$E_i \ge e^{tr}_{ij}$ for each transfer; a copy lives on each other device $v$ that consumes it over
$[T_{iv}, F_{iv})$ with $T_{iv} \le s^{tr}_{ij}$ (or $\mathit{end}_i$ where nothing moves) and
$F_{iv} \ge \mathit{end}_j$ for each consumer $j$ on $v$. The level is checked where each item $b$
starts:

$$\sum_{i} R_i\, x_{i,d} + a_b + \sum_{a \ne b} a_a\, \kappa_{ab} \le M_d + \bar M_b\,(1 - \rho_b),
  \qquad \kappa_{ab} \ge \rho_a + o_{ab} - r_{ab} - 1,\ \kappa_{ab} \ge 0$$

with $\rho$ an item's presence ($x_{i,d}$ for an output), $o_{ab}$ "$a$ starts no later than $b$"
(the graph, the order binary $y$, or a binary with two big-M rows) and $r_{ab}$ a binary that may be
1 only when $a$ ends by the time $b$ starts. Consumers wait for their transfers.
{% endif %}
Where starts may tie (a task of zero duration, a copy), ranks that increase along the order
binaries keep them from forming a cycle in which every check misses one amount. Devices whose
capacity holds every amount that may reach them get no rows; big-M constants are bounds of the
columns, from the instance.
"""

    builds_rows = True

    # ------------------------------------------------------------------ data
    def finds_data(self, problem):
        # Static ``memory`` alone is the ``memory`` block's data: only weights and
        # activations are this block's own.
        return any(math.isfinite(c) for c in problem.device_memory) and \
            (any(problem.weight_memory) or any(problem.activation_memory))

    def applies_to(self, problem):
        if not any(math.isfinite(c) for c in problem.device_memory):
            return False
        if not any(problem.weight_memory) and not any(problem.activation_memory) \
                and not any(problem.task_memory):
            return False
        self.check(problem)
        return True

    def timing_rules(self, rules, problem):
        # (tasks wait for memory only where the timeline says anything: finite capacities)
        return rules.replace(memory=self.mode) if self.applies_to(problem) else rules

    def check(self, problem) -> None:
        """Raise a one-line :class:`~schedkit.errors.ProblemError` for data this mode cannot mean."""
        for i, name in enumerate(problem.tasks):
            amount = problem.activation_memory[i]
            if self.mode == "lifetime" and amount < 0:
                raise ProblemError(f"task '{name}': activation_memory {amount:g} is negative, which "
                                   f"memory_timeline mode 'lifetime' does not allow (it is an output's size)")
            own = problem.resident_memory[i] + max(amount, 0.0)
            if not any(fits(own, problem.device_memory[d]) for d in problem.allowed[i]):
                raise ProblemError(f"task '{name}': its weights and activations ({own:g}) fit on none of "
                                   f"its devices")

    # ------------------------------------------------------------------ MILP
    def build(self, ctx, blk):
        devices = finite_devices(ctx.problem)
        (build_deltas if self.mode == "deltas" else build_lifetime)(ctx, blk, devices)

    def estimate(self, problem):
        if not self.applies_to(problem):
            return 0
        total = 0
        for d in finite_devices(problem):
            users = sum(1 for a in problem.allowed if d in a)
            if self.mode == "deltas":
                checks = sum(1 for i, a in enumerate(problem.allowed) if d in a and problem.activation_memory[i] > 0)
                total += checks * users * 5
            else:
                items = sum(1 + len(problem.succs[i]) for i, a in enumerate(problem.allowed)
                            if d in a and problem.activation_memory[i] > 0)
                total += items * items * 12
        return total

    # ------------------------------------------------------------------ CP-SAT
    def build_cp(self, cp):
        p = cp.problem
        for d in finite_devices(p):
            users = [i for i, a in enumerate(p.allowed) if d in a]
            amounts = [p.resident_memory[i] for i in users]
            amounts += [p.activation_memory[i] for i in users] + [p.device_memory[d]]
            unit = whole_units([abs(a) for a in amounts])
            if not all(is_whole(a * unit) for a in amounts):
                cp.rounded.append(f"memory of device {p.devices[d]}")
            # Rounded the safe way: amounts held up, releases and the capacity down.
            held = lambda a: math.ceil(a * unit - 1e-9)  # noqa: E731
            cap = math.floor(p.device_memory[d] * unit + 1e-9)
            if self.mode == "deltas":
                _cp_deltas(cp, d, users, held, cap)
            else:
                _cp_lifetime(cp, d, held, cap)

    # ------------------------------------------------------------------ check
    def violations(self, problem, schedule):
        if not self.applies_to(problem):
            return []
        out = []
        tol = time_tolerance(schedule.makespan)
        base, items = self.occupancy(problem, schedule)
        for d, cap in enumerate(problem.device_memory):
            if math.isinf(cap) or (not base[d] and not items[d]):
                continue
            worst = _sweep(base[d], items[d], cap, tol)
            if worst is not None:
                level, t = worst
                out.append(f"device {problem.devices[d]}: memory level {level:g} at time {t:g} "
                           f"exceeds its capacity {cap:g}")
        return out

    def occupancy(self, problem, schedule) -> tuple[list[float], list[list[tuple[float, float, float]]]]:
        """Per device, the resident amount and the items ``(start, end, amount)`` of ``schedule``
        (``end`` infinite for what is never released; a release in ``deltas`` is a negative
        amount from the task's end on)."""
        p = problem
        rows = {r.task: r for r in schedule.tasks}
        base = [0.0] * len(p.devices)
        items: list[list] = [[] for _ in p.devices]
        for i, name in enumerate(p.tasks):
            row = rows[name]
            d = p.device_index[row.device]
            base[d] += p.resident_memory[i]
            amount = p.activation_memory[i]
            if self.mode == "deltas":
                if amount:
                    items[d].append((row.start if amount > 0 else row.end, math.inf, amount))
            elif amount > 0:
                self._lifetime_items(p, i, row, rows, schedule, items)
        return base, items

    @staticmethod
    def _lifetime_items(p, i, a, rows, schedule, items) -> None:
        moved = {(t.src, t.dst): t for t in schedule.transfers}
        u = p.device_index[a.device]
        end = a.end
        copies: dict[int, list[float]] = {}
        for j, size in p.succs[i]:
            b = rows[p.tasks[j]]
            v = p.device_index[b.device]
            if v == u:
                end = max(end, b.end)
                continue
            t = moved.get((a.task, b.task))
            if t is not None:
                begin, end = t.start, max(end, t.end)
            else:  # no row: the data leaves when its producer ends
                begin = a.end
                if p.pair_allowed(size, u, v) and p.moves(size, u, v):
                    end = max(end, a.end + p.comm_time(size, u, v))
            span = copies.setdefault(v, [begin, b.end])
            span[0], span[1] = min(span[0], begin), max(span[1], b.end)
        amount = p.activation_memory[i]
        items[u].append((a.start, end, amount))
        for v, (begin, last) in copies.items():
            items[v].append((begin, last, amount))


def _sweep(base: float, items, cap: float, tol: float):
    """``(level, time)`` where the level first exceeds ``cap``, or ``None``.

    The level at ``t`` counts the items with ``start <= t < end`` (times within ``tol`` are
    equal, so a release at ``t`` comes before an addition at ``t``); an empty interval never
    counts. It is checked at time 0 and wherever a positive amount starts.
    """
    live = [(s, e, a) for s, e, a in items if e > s + tol]
    starts = sorted((s, a) for s, _, a in live)
    ends = sorted((e, a) for _, e, a in live if math.isfinite(e))
    checks = sorted({0.0} | {s for s, a in starts if a > 0})
    level, si, ei = base, 0, 0
    for t in checks:
        while si < len(starts) and starts[si][0] <= t + tol:
            level += starts[si][1]
            si += 1
        while ei < len(ends) and ends[ei][0] <= t + tol:
            level -= ends[ei][1]
            ei += 1
        if not fits(level, cap):
            return level, t
    return None


def _cp_deltas(cp, d, users, held, cap) -> None:
    p = cp.problem
    times, changes, actives = [], [], []
    for i in users:
        on = cp.on[i][d]
        resident = held(p.resident_memory[i])
        if resident:
            times.append(0)
            changes.append(resident)
            actives.append(on)
        amount = p.activation_memory[i]
        if amount:
            times.append(cp.start[i] if amount > 0 else cp.end[i])
            changes.append(held(amount))
            actives.append(on)
    if times:
        low = min(0, sum(c for c in changes if c < 0))
        cp.model.add_reservoir_constraint_with_active(times, changes, actives, low, cap)


def _cp_lifetime(cp, d, held, cap) -> None:
    """Each output and copy an optional interval of variable length, in one cumulative."""
    p, model, horizon = cp.problem, cp.model, cp.horizon
    moving = {t.edge: t for t in cp.transfers()} if any(s for _, _, s in p.edges) else {}
    for (i, j), t in moving.items():
        model.add(cp.start[j] >= t.end)  # the consumer waits for its data (as channels says)
    intervals, demands = [], []
    for i, allowed in enumerate(p.allowed):
        resident = held(p.resident_memory[i])
        if resident and d in allowed:
            intervals.append(model.new_optional_fixed_size_interval_var(0, horizon, cp.on[i][d], "resident"))
            demands.append(resident)
        amount = p.activation_memory[i]
        if amount <= 0:
            continue
        size = held(amount)
        if d in allowed:
            last = model.new_int_var(0, horizon, f"output_end({p.tasks[i]})")
            model.add(last >= cp.end[i])
            for j, _ in p.succs[i]:
                if (i, j) in moving:
                    model.add(last >= moving[i, j].end)
                if d in p.allowed[j]:
                    model.add(last >= cp.end[j]).only_enforce_if([cp.on[i][d], cp.on[j][d]])
            length = model.new_int_var(0, horizon, "")
            intervals.append(model.new_optional_interval_var(cp.start[i], length, last, cp.on[i][d], ""))
            demands.append(size)
        consumers = [j for j, _ in p.succs[i] if d in p.allowed[j]]
        if consumers and p.allowed[i] != (d,):
            present = model.new_bool_var("")
            first = model.new_int_var(0, horizon, "")
            last = model.new_int_var(0, horizon, "")
            mine = cp.on[i].get(d)
            for j in consumers:
                on = cp.on[j][d]
                model.add_bool_or([on.negated(), present] + ([mine] if mine is not None else []))
                moved = moving.get((i, j))
                source = moved.start if moved is not None else cp.end[i]
                model.add(first <= source).only_enforce_if(on)
                if moved is not None:
                    for u in p.allowed[i]:  # device pairs that move nothing: there at i's end
                        if u != d and (u, d) not in moved.pairs:
                            model.add(first <= cp.end[i]).only_enforce_if([cp.on[i][u], on])
                model.add(last >= cp.end[j]).only_enforce_if(on)
            length = model.new_int_var(0, horizon, "")
            intervals.append(model.new_optional_interval_var(first, length, last, present, ""))
            demands.append(size)
    if intervals:
        model.add_cumulative(intervals, demands, cap)


# ====================================================================== MILP, lifetime
def build_lifetime(ctx, blk, devices) -> None:
    """Lifetime rows (see :mod:`~schedkit.blocks.memory_timeline_rows`): a level row where each item starts."""
    v = Vocabulary(ctx, blk)
    p = v.p
    moving = any(size for _, _, size in p.edges)
    v.transfer = ctx.family("transfer") if moving else None
    if v.transfer is not None:
        # The consumer waits for its transfer (as ``channels`` says; repeated when it is there).
        for i, j, _ in v.transfer.edges:
            v.row("arrive", (p.tasks[i], p.tasks[j]), v.start(j) - tstart(v, i, j, "end"), lower=0.0)
    for d in devices:
        cap, dev = p.device_memory[d], p.devices[d]
        base = resident(v, d)
        capacity_row(v, "resident", (dev,), base, Expr(1.0), cap)
        candidates = _candidates(p, d)
        if v.bounds(base)[1] + sum(p.activation_memory[i] for i, _ in candidates) <= cap:
            continue
        items = [output(v, i, d, devices) if not copy else remote(v, i, d) for i, copy in candidates]
        for b in items:
            level = base.copy().add(b.size)
            for a in items:
                if a is not b and a.task != b.task:
                    level.add(counted(v, a, b, d), a.size)
            capacity_row(v, "level", (b.name, dev), level, b.present, cap)
        for n, b in enumerate(items):
            for a in items[:n]:
                if a.task != b.task and (a.copy or b.copy or not v.timed(a.task, b.task, d)):
                    v.in_turn(rank_key(a, d), rank_key(b, d), started(v, a, b, d),
                              [a.present, b.present], (a.name, b.name, dev))


def _candidates(p, d) -> list[tuple[int, bool]]:
    """Outputs and remote copies that may live on ``d``: ``(task, is_copy)``."""
    out = []
    for i, amount in enumerate(p.activation_memory):
        if amount <= 0:
            continue
        if d in p.allowed[i]:
            out.append((i, False))
        if p.allowed[i] != (d,) and any(d in p.allowed[j] for j, _ in p.succs[i]):
            out.append((i, True))
    return out


def finite_devices(problem) -> list[int]:
    """Devices with a finite memory capacity."""
    return [d for d, cap in enumerate(problem.device_memory) if math.isfinite(cap)]
