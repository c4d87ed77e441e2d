"""The placement relaxation: a lower bound that weighs each device's and each port's load against the transfers a split pays.

The bounds of :mod:`schedkit.problem.bounds` look at one side at a time: the critical path
(every task on its fastest device, no transfer), the load (the work spread over every device,
no transfer), the split bound (one transfer on one path). Where transfers cost about as much
as the work a split saves (MOIRAI's Inception-v4: a module of 33 tasks runs in 1.02 s on
either of two devices; halving it moves tensors of 0.03-0.6 s), none of them sees that a
schedule either keeps a device busy or pays transfers on its paths. A small MILP does.

**Statement.** Let ``x[i, d] = 1`` when task ``i`` runs on device ``d`` (one of its allowed
devices), ``s[i]`` its start, ``W`` the makespan, ``p[i, d]`` its duration there and
``c_e(u, v)`` the transfer time of edge ``e = (i, j)`` from ``u`` to ``v``. Every schedule
satisfies:

1. ``s[i] >= 0`` and ``s[i] + sum_d p[i, d] x[i, d] + tail(i) <= W``, ``tail(i)`` the
   longest chain of least durations after ``i``;
2. for each edge ``e = (i, j)``: ``s[j] >= s[i] + sum_d p[i, d] x[i, d] + t_e`` with
   ``t_e >= c_e(u, v) (x[i, u] + x[j, v] - 1)`` for each ``u != v``: the transfer starts after
   ``i`` ends, lasts at least ``c_e(u, v)`` (waiting for a port only delays it) and ends
   before ``j`` starts; a pair without a route is forbidden, ``x[i, u] + x[j, v] <= 1``;
3. for each device ``d``: ``sum_i p[i, d] x[i, d] <= W``: it runs one task at a time, within
   ``[0, W]``;
4. with ``congestion`` on ports, for each device ``u``: ``sum_e t^out_{e, u} <= W`` with
   ``t^out_{e, u} >= c_e(u, v) (x[i, u] + x[j, v] - 1)`` for each ``v != u``: the transfers
   leaving ``u`` never overlap and lie in ``[0, W]`` (and alike for those entering ``u``);
   with ``congestion`` on channels, the same for the transfers whose route holds a channel.

The mapping, starts and makespan of any valid schedule satisfy every row (each ``t`` set to
its transfer's length, ``0`` where the edge moves nothing), so the least ``W`` of this MILP,
and any dual bound a solver proves on it, is at most the makespan of every schedule: a
lower bound. What it leaves out is the order of tasks on a device and of transfers on a
port: tasks on one device may overlap in time as long as their total fits in ``W``. Rows
3-4 hold for the problem's semantics (a device runs one task at a time; MOIRAI's ports);
rows 1-2 only where the formulation orders edges (``rules.ordered_edges``) and row 2's
transfer terms only where it delays them by their data (``rules.communication``).

Solved per module of a chain (:mod:`schedkit.auto.series`), where each module's own loads
count: MOIRAI's Inception-v4 under ``-f moirai``: modules' combinatorial bounds 6.85 in sum,
these relaxations 8.53, in 3.3 s (2 shared cores).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import TimingRules
>>> p = Problem.from_dict({
...     "devices": [{"name": "a"}, {"name": "b"}],
...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
...     "tasks": [{"name": f"t{k}", "work": 2} for k in range(3)],
...     "edges": [{"src": "t0", "dst": "t1", "size": 1}, {"src": "t0", "dst": "t2", "size": 1}]})
>>> from schedkit.problem.bounds import lower_bound
>>> rules = TimingRules(ordered_edges=True, communication=True)
>>> lower_bound(p), relaxation_bound(p, rules, 10)   # t1 or t2 waits for t0 and a transfer
(4.0, 5.0)
"""

from __future__ import annotations

import math

from schedkit.blocks.expr import Expr
from schedkit.milp.linear import LinearModel
from schedkit.problem import Problem
from schedkit.timing import TimingRules

__all__ = ["relaxation_bound", "relaxation_model", "MAX_TASKS"]

#: No relaxation on larger parts: HiGHS's presolve does not look at the clock, and on a
#: module of MOIRAI's Transformer (1,365 tasks) its bound after 10 s is below the load bound.
MAX_TASKS = 400


def relaxation_bound(problem: Problem, rules: TimingRules, seconds: float | None, floor: float = 0.0) -> float:
    """The least makespan of the relaxation above, or the dual bound HiGHS proves on it in
    ``seconds`` (``None``: no limit); at least ``floor`` (a bound known already).

    ``floor`` when the relaxation does not apply: a workload of several inputs, a
    formulation that does not order the edges, more than :data:`MAX_TASKS` tasks, or no time.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.semantics import get_formulation
    >>> p = Problem.load("examples/tiny.yaml")
    >>> rules = get_formulation("moirai").timing_rules(p)
    >>> from schedkit.problem.bounds import lower_bound
    >>> round(lower_bound(p), 3), round(relaxation_bound(p, rules, 10), 4)   # the optimum: 4.5163
    (3.483, 4.2)
    >>> relaxation_bound(p, rules, 0, floor=1.5)    # no time: the floor
    1.5
    """
    if (problem.inputs > 1 or not rules.ordered_edges or len(problem.tasks) > MAX_TASKS
            or (seconds is not None and seconds <= 0) or not problem.tasks):
        return floor
    from schedkit.milp.solvers.highs import highs_for

    lin = relaxation_model(problem, rules, floor)
    h = highs_for(lin, time_limit=seconds)   # (HiGHS's threads left alone: its pool is sized once per process)
    h.run()
    info = h.getInfo()
    if h.getModelStatus() == h.getModelStatus().__class__.kOptimal:
        found = info.objective_function_value if lin.integer.count(True) == 0 else \
            min(info.objective_function_value, info.mip_dual_bound)
    else:   # (stopped: its dual bound, valid whatever the search reached)
        found = info.mip_dual_bound if info.valid else -math.inf
    return max(floor, found) if math.isfinite(found) else floor


def relaxation_model(problem: Problem, rules: TimingRules, floor: float = 0.0) -> LinearModel:
    """The MILP of the module's statement (rows 1-4), its objective the makespan ``W >= floor``.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.semantics import get_formulation
    >>> p = Problem.load("examples/tiny.yaml")
    >>> lin = relaxation_model(p, get_formulation("moirai").timing_rules(p))
    >>> lin.column_names()[:3], sum(lin.integer) == sum(len(a) for a in p.allowed if len(a) > 1)
    (['makespan', 'x(0_0)', 'x(0_1)'], True)
    """
    p = problem
    n, m = len(p.tasks), len(p.devices)
    lin = LinearModel(f"{p.name}/relaxation")
    makespan = Expr.term(lin.add_columns("makespan", [()], lower=floor, upper=math.inf)[0])
    lin.set_objective(makespan.cols[0])
    rows = lin.rows("relaxation")
    x = _assignment(lin, p)
    heads, tails = p.heads, p.tails
    starts = lin.add_columns("start", [(i,) for i in range(n)], lower=heads, upper=math.inf)
    start = [Expr.term(c) for c in starts]
    busy = [_duration(p, x, i) for i in range(n)]
    for i in range(n):
        rows.add("end", (i,), start[i] + busy[i] + tails[i] <= makespan)
    for d in range(m):
        load = Expr(0.0)
        for i in range(n):
            if d in x[i] and p.durations[i][d] > 0:
                load.add(x[i][d], p.durations[i][d])
        if load.cols:
            rows.add("load", (d,), load <= makespan)
    resources = _resources(p, rules.congestion) if rules.communication else {}
    held: dict[str, Expr] = {name: Expr(0.0) for name in resources}
    for k, (i, j, size) in enumerate(p.edges):
        times = {}
        for u in x[i]:
            for v in x[j]:
                if u == v:
                    continue
                if not p.pair_allowed(size, u, v):
                    rows.add("no_route", (k, u, v), x[i][u] + x[j][v] <= 1)
                elif rules.communication and p.moves(size, u, v):
                    times[u, v] = p.comm_time(size, u, v)
        wait = _transfer(lin, rows, ("transfer", k), times, x[i], x[j]) if times else Expr(0.0)
        rows.add("precedence", (k,), start[j] - start[i] - busy[i] - wait >= 0)
        for name, pairs in resources.items():
            mine = {pair: t for pair, t in times.items() if pair in pairs}
            if mine:
                held[name].add(_transfer(lin, rows, (name, k), mine, x[i], x[j]))
    for name, total in held.items():
        if total.cols:
            rows.add("congestion", (name,), total <= makespan)
    return lin


def _assignment(lin: LinearModel, p: Problem) -> list[dict[int, Expr]]:
    """Per task, its devices' ``x`` (a constant 1 where it has one device)."""
    x = []
    for i, allowed in enumerate(p.allowed):
        if len(allowed) == 1:
            x.append({allowed[0]: Expr(1.0)})
            continue
        cols = lin.add_columns("x", [(i, d) for d in allowed], lower=0, upper=1, integer=True)
        x.append({d: Expr.term(c) for d, c in zip(allowed, cols)})
        lin.rows("relaxation").add("assign", (i,), Expr(0.0, cols, [1.0] * len(cols)) == 1)
    return x


def _duration(p: Problem, x: list[dict[int, Expr]], i: int) -> Expr:
    total = Expr(0.0)
    for d, on in x[i].items():
        total.add(on, p.durations[i][d])
    return total


def _transfer(lin: LinearModel, rows, key: tuple, times: dict, at_i: dict, at_j: dict) -> Expr:
    """A column ``t >= c(u, v) (x[i, u] + x[j, v] - 1)`` for each pair of ``times``: the
    transfer's length when the ends sit on ``u`` and ``v``, 0 at least."""
    t = Expr.term(lin.add_columns(f"{key[0]}_time", [key[1:]], lower=0.0, upper=math.inf)[0])
    for (u, v), c in times.items():
        rows.add(f"{key[0]}_time", key[1:] + (u, v), t - (at_i[u] + at_j[v]) * c >= -c)
    return t


def _resources(p: Problem, congestion: str | None) -> dict[str, set]:
    """The device pairs whose transfers share each resource of ``congestion``: a device's send
    port (pairs ``(u, *)``), its receive port (``(*, v)``), a channel (pairs routed on it)."""
    m = len(p.devices)
    pairs = [(u, v) for u in range(m) for v in range(m) if u != v and p.linked[u][v]]
    found: dict[str, set] = {}
    if congestion in ("port", "both"):
        for d in range(m):
            found[f"{p.devices[d]}:send"] = {(u, v) for u, v in pairs if u == d}
            found[f"{p.devices[d]}:receive"] = {(u, v) for u, v in pairs if v == d}
    if congestion in ("channel", "both"):
        for u, v in pairs:
            for channel in p.route[u][v]:
                found.setdefault(channel, set()).add((u, v))
    return found
