"""The MILP rows of ``memory_timeline``: a device's memory level, exact and linear.

``deltas`` (She et al. 2025). She et al. follow each device's sequence with a level before
(m-) and after (m+) every operation, m+ = m- + delta, carried from an operation to the next
one on the machine. Carried forward with the pairwise order binaries ``y`` (which say
"before", not "immediately before") such a chain is not exact: ``m-_k >= m+_j`` for every
earlier ``j`` forgets the releases between ``j`` and ``k``. Unrolled, the level at the start
of ``k`` on ``d`` is the sum of what the tasks before it on ``d`` did, which is exact with the
order binaries alone:

    sum_i R_i x_id + A_k + sum_j A_j pi_jk  <=  cap_d + M_kd (1 - x_kd)   (A_k > 0)

(``R_i``: weights plus static memory). ``pi_jk`` is "``j`` before ``k`` on ``d``": the
constant ``x_jd`` when the graph puts ``j`` first, nothing when it puts ``k`` first, else the
product ``x_jd y_jk``, which needs only its lower McCormick row for a positive ``A_j`` (more
counted is safe) and its two upper rows for a release (less released is safe), and no column
at all when ``j`` has one device (pipeline stages: the rows are plain sums of ``y``). A level
rises only when a positive ``A`` starts, so checking those starts is enough; a release
happens at an end, and for tasks of positive duration on ``d`` the ``no_overlap`` rows
already tie ``y`` to the times. A task of zero duration may sit inside another one, so its
pairs get rows of their own tying ``y`` to the times (``link``). ``M_kd`` is the largest
level the row's terms can reach, minus the capacity: no fixed constant.

``lifetime``. Items live on a device over ``[S, E)``: a task's output from its start to
``E_i`` (at least its end, the end of every consumer on the same device and of every outgoing
transfer, family ``transfer``), and a copy of it on a consuming device from ``T`` (at most the
start of each transfer to that device, or the producer's end where the edge moves nothing)
to ``F`` (at least the end of each consumer there). The level is checked where each item
starts; item ``a`` counts at item ``b``'s start through ``kappa_ab >= present_a + o_ab -
r_ab - 1`` with ``o_ab`` "``a`` starts first" (the graph, the order binary of two outputs
of positive duration, or a binary of the block) and ``r_ab`` "``a`` is released by then"
(a binary with ``E_a <= S_b`` when it is 1), only for pairs that may coexist on the device.

Columns of the block's own (products, ``kappa``, ``E``, ``T``, ``F``, lifetime's binaries)
get no warm-start value: HiGHS completes them from the shared families' values.

Pairs whose starts may tie (a task of zero duration, a copy) also get ranks that increase
along their order binaries: at one instant, weak time rows alone would let the binaries form a
cycle in which every check misses one amount.

Measured (HiGHS 1.15, one thread, time to proven optimum, 16 random instances of 6 colocated
forward/backward pairs on 3 devices of memory 6): the products per ``(j, k, d)`` written here,
median 0.14-0.17 s, worst 0.5 s; one product per pair ``(j, k)`` shared by the devices
(``pi >= y + x_jd + x_kd - 2``, fewer columns, a weaker relaxation), median 0.11-0.12 s, worst
0.58 s: no clear winner, and the tighter one is kept. Random 5-task instances (both modes,
with tasks of zero duration) prove optimal in 0.01-0.2 s and agree with CP-SAT's model and
with a brute force over mappings and orders (``tests/blocks/test_memory_timeline.py``).

Expressions are :class:`~schedkit.blocks.expr.Expr`; the rows here are sums built term by
term, in which one column may appear more than once, so bounds and rows are taken on the
merged expression (one term per column).

Examples
--------
>>> e = Expr(2.0, [0], [1.0]).add(Expr(1.0, [0, 3], [-1.0, 2.0]), 3.0)
>>> m = e.merged()
>>> m.const, m.cols, m.coefs
(5.0, [0, 3], [-2.0, 6.0])
"""

from __future__ import annotations

from collections import namedtuple

from schedkit.blocks.expr import INF, Expr

class Vocabulary:
    """The shared families' columns as expressions, the block's own columns and rows."""

    def __init__(self, ctx, blk):
        self.ctx, self.blk, self.lin, self.p = ctx, blk, ctx.lin, ctx.problem
        self.x, self.timing = ctx.family("x"), ctx.family("timing")
        self.order = ctx.family("order")
        self.reach = self.p.descendants
        self.transfer = None
        self.memo: dict = {}

    # ---------------------------------------------------------------- expressions
    def xe(self, i: int, d: int) -> Expr:
        return self.x.x(i, d)

    def start(self, i: int) -> Expr:
        return self.timing.start(i)

    def end(self, i: int) -> Expr:
        return self.timing.end(i)

    def reaches(self, i: int, j: int) -> bool:
        return bool((self.reach[i] >> j) & 1)

    def first(self, j: int, k: int) -> Expr:
        """``j`` before ``k``: the graph's constant or the order binary."""
        if self.reaches(j, k):
            return Expr(1.0)
        if self.reaches(k, j):
            return Expr(0.0)
        y = self.order.y(min(j, k), max(j, k))
        return y if j < k else 1 - y

    def timed(self, i: int, j: int, d: int) -> bool:
        """Both take time on ``d``: ``no_overlap`` orders them by ``y`` there."""
        return bool(self.p.durations[i][d] and self.p.durations[j][d])

    def bounds(self, e: Expr) -> tuple[float, float]:
        return e.merged().bounds(self.lin.lower, self.lin.upper)

    def gap(self, e: Expr) -> float:
        """A big-M that relaxes ``e >= 0``: how far below 0 ``e`` can go (the column bounds
        carry the horizon's slack already; more would only add digits that HiGHS's presolve
        has been seen to trip on)."""
        return max(0.0, -self.bounds(e)[0])

    # ---------------------------------------------------------------- columns and rows
    def column(self, name: str, key: tuple, low: float, high: float, integer: bool = False) -> Expr:
        return Expr.term(self.lin.add_columns(name, [key], low, high, integer=integer, block="memory_timeline")[0])

    def row(self, name: str, key: tuple, e: Expr, lower: float = -INF, upper: float = INF):
        e = e.merged(drop_zeros=True)
        if e.cols:
            self.blk.add(name, key, e, lower=lower, upper=upper)

    def rank(self, key) -> Expr:
        """A position of its own for an amount that may start with others at one instant."""
        if ("rank", key) not in self.memo:
            top = float(len(self.p.tasks) * (1 + len(self.p.devices)))
            self.memo["rank", key] = self.column("rank", key if isinstance(key, tuple) else (key,), 0.0, top)
        return self.memo["rank", key]

    def in_turn(self, a, b, first: Expr, conditions: list[Expr], key: tuple) -> None:
        """Ranks that follow ``first`` (``a`` before ``b``) when every condition holds.

        At one instant the weak time rows let order binaries form a cycle (``a`` before
        ``b`` before ``c`` before ``a``), in which every check misses one amount: strictly
        increasing ranks forbid it. Any schedule has ranks: its start order, ties broken
        topologically.
        """
        ra, rb = self.rank(a), self.rank(b)
        if not (first.is_constant and not first.const):
            self.unless(rb.copy().add(ra, -1).add(-1.0), [first] + conditions, "rank", (*key, "before"))
        if not (first.is_constant and first.const):
            self.unless(ra.copy().add(rb, -1).add(-1.0), [Expr(1.0).add(first, -1)] + conditions, "rank",
                        (*key, "after"))

    def unless(self, e: Expr, conditions: list[Expr], name: str, key: tuple) -> None:
        """Row ``e >= 0`` whenever every condition (a 0/1 expression) is 1."""
        m = self.gap(e)
        relaxed = e.copy()
        for cond in conditions:
            relaxed.add(1.0, m).add(cond, -m)
        self.row(name, key, relaxed, lower=0.0)


def resident(v: Vocabulary, d: int) -> Expr:
    """Weights and static memory of the tasks on ``d``."""
    p = v.p
    e = Expr()
    for i, allowed in enumerate(p.allowed):
        amount = p.resident_memory[i]
        if amount and d in allowed:
            e.add(v.xe(i, d), amount)
    return e


def capacity_row(v: Vocabulary, name: str, key: tuple, level: Expr, present: Expr, cap: float) -> None:
    """``level <= cap`` when ``present`` is 1, relaxed by the most ``level`` can exceed ``cap``."""
    high = v.bounds(level)[1]
    if high <= cap:
        return
    m = high - cap
    e = level.copy().add(present, m)
    v.row(name, key, e, upper=cap + m)


# ====================================================================== deltas
def build_deltas(ctx, blk, devices) -> None:
    """Deltas rows: a level row at each start of a positive activation on each finite device."""
    v = Vocabulary(ctx, blk)
    p = v.p
    A = p.activation_memory
    for d in devices:
        cap, dev = p.device_memory[d], p.devices[d]
        users = [i for i, allowed in enumerate(p.allowed) if d in allowed]
        base = resident(v, d)
        capacity_row(v, "resident", (dev,), base, Expr(1.0), cap)
        top = v.bounds(base)[1]
        for k in users:
            if A[k] <= 0:
                continue
            others = [j for j in users if j != k and A[j] and not v.reaches(k, j)]
            if top + A[k] + sum(A[j] for j in others if A[j] > 0) <= cap:
                continue  # no order on d can exceed the capacity
            level = base.copy().add(A[k])
            for j in others:
                level.add(before_on(v, j, k, d), A[j])
                if not v.reaches(j, k) and not v.timed(j, k, d):
                    link(v, j, k, d)
            capacity_row(v, "level", (p.tasks[k], dev), level, v.xe(k, d), cap)
        for k in users:
            for j in users:
                if j < k and A[j] > 0 and A[k] > 0 and not v.timed(j, k, d):
                    v.in_turn(p.tasks[j], p.tasks[k], v.first(j, k), [v.xe(j, d), v.xe(k, d)],
                              (p.tasks[j], p.tasks[k], dev))


def before_on(v: Vocabulary, j: int, k: int, d: int) -> Expr:
    """``j`` on ``d`` and before ``k``: bounded from the safe side for the sign of ``A_j``."""
    xj = v.xe(j, d)
    if v.reaches(j, k):
        return xj
    y = v.first(j, k)
    if xj.is_constant:
        return y if xj.const else Expr(0.0)
    p = v.p
    key = (p.tasks[j], p.tasks[k], p.devices[d])
    prod = v.column("before", key, 0.0, 1.0)
    if p.activation_memory[j] > 0:   # counted at least when both hold
        v.row("before_low", key, prod.copy().add(xj, -1).add(y, -1), lower=-1.0)
    else:                            # released only when both hold
        v.row("before_x", key, prod.copy().add(xj, -1), upper=0.0)
        v.row("before_y", key, prod.copy().add(y, -1), upper=0.0)
    return prod


def link(v: Vocabulary, j: int, k: int, d: int) -> None:
    """Tie the order binary of ``j`` and check ``k`` to their times on ``d`` (one of them
    takes no time there, so ``no_overlap`` does not): a release counted before ``k`` has
    happened by ``s_k``; an addition not counted starts no earlier than ``k``."""
    p = v.p
    both = [v.xe(j, d), v.xe(k, d)]
    key = (p.tasks[j], p.tasks[k], p.devices[d])
    if p.activation_memory[j] < 0:
        v.unless(v.start(k) - v.end(j), [v.first(j, k)] + both, "release_link", key)
    else:
        v.unless(v.start(j) - v.start(k), [v.first(k, j)] + both, "start_link", key)


# ====================================================================== lifetime
#: One amount on one device over ``[start, end)`` while ``present``.
Item = namedtuple("Item", "name task copy present start end size")


def rank_key(item: Item, d: int) -> tuple:
    return (item.name,) if not item.copy else (item.name, "")


def tstart(v, i, j, which: str = "start") -> Expr | None:
    """The start (or ``which="end"``) of the transfer of edge ``(i, j)``, if it has columns."""
    k = v.transfer.index.get((i, j)) if v.transfer is not None else None
    if k is None:
        return None
    return v.transfer.start(k) if which == "start" else v.transfer.end(k)


def output(v: Vocabulary, i: int, d: int, devices) -> Item:
    """Task ``i``'s output on ``d``: from its start to ``E_i`` (one column per task)."""
    p = v.p
    name = p.tasks[i]
    if ("E", i) not in v.memo:
        ends = [v.end(i)] + [v.end(j) for j, _ in p.succs[i]]
        ends += [e for e in (tstart(v, i, j, "end") for j, _ in p.succs[i]) if e is not None]
        low = v.bounds(ends[0])[0]
        high = max(v.bounds(e)[1] for e in ends)
        E = v.memo["E", i] = v.column("output_end", (name,), low, high)
        v.row("output_end", (name, "self"), E.copy().add(v.end(i), -1), lower=0.0)
        for j, _ in p.succs[i]:
            after = tstart(v, i, j, "end")
            if after is not None:
                v.row("output_end", (name, p.tasks[j], "transfer"), E.copy().add(after, -1), lower=0.0)
            for u in set(p.allowed[i]) & set(p.allowed[j]) & set(devices):
                v.unless(E.copy().add(v.end(j), -1), [v.xe(i, u), v.xe(j, u)], "output_end",
                         (name, p.tasks[j], p.devices[u]))
    return Item(name, i, False, v.xe(i, d), v.start(i), v.memo["E", i], p.activation_memory[i])


def remote(v: Vocabulary, i: int, d: int) -> Item:
    """The copy of ``i``'s output on ``d``, for the consumers there, when ``i`` runs elsewhere."""
    p = v.p
    dev = p.devices[d]
    name = f"{p.tasks[i]}@{dev}"
    consumers = [j for j, _ in p.succs[i] if d in p.allowed[j]]
    key = (p.tasks[i], dev)
    xi = v.xe(i, d)
    if xi.is_constant and not xi.const and any(p.allowed[j] == (d,) for j in consumers):
        present = Expr(1.0)
    else:
        present = v.column("copy", key, 0.0, 1.0)
        for j in consumers:   # present when a consumer is on d and i is not (more is safe)
            v.row("copy", (*key, p.tasks[j]), present.copy().add(v.xe(j, d), -1).add(xi), lower=0.0)
    sources = [(j, tstart(v, i, j) or v.end(i)) for j in consumers]
    low = v.bounds(v.end(i))[0]
    T = v.column("copy_start", key, low, max(low, max(v.bounds(s)[1] for _, s in sources)))
    F = v.column("copy_end", key, 0.0, max(v.bounds(v.end(j))[1] for j in consumers))
    for j, source in sources:
        tag = (*key, p.tasks[j])
        v.unless(source.copy().add(T, -1), [v.xe(j, d)], "copy_start", tag)
        v.unless(F.copy().add(v.end(j), -1), [v.xe(j, d)], "copy_end", tag)
        if tstart(v, i, j) is None:
            continue
        size = next(s for c, s in p.succs[i] if c == j)
        for u in p.allowed[i]:
            if u != d and not p.moves(size, u, d):
                # no transfer row between these devices: the copy is there when i ends
                v.unless(v.end(i) - T, [v.xe(i, u), v.xe(j, d)], "copy_start",
                         (*tag, p.devices[u]))
    return Item(name, i, True, present, T, F, p.activation_memory[i])


def counted(v: Vocabulary, a: Item, b: Item, d: int) -> Expr:
    """Whether ``a`` occupies ``d`` when ``b`` starts: at least ``present_a + o_ab - r_ab - 1``."""
    first = started(v, a, b, d)
    if first.is_constant and not first.const:
        return Expr(0.0)
    gone = released(v, a, b, d)
    floor = a.present.copy().add(first).add(gone, -1).add(-1.0)
    if floor.is_constant:
        return Expr(max(0.0, floor.const))
    kappa = v.column("alive", (a.name, b.name, v.p.devices[d]), 0.0, 1.0)
    v.row("alive", (a.name, b.name, v.p.devices[d]), kappa.copy().add(floor, -1), lower=0.0)
    return kappa


def started(v: Vocabulary, a: Item, b: Item, d: int) -> Expr:
    """``a`` starts no later than ``b`` (ties: either, the other check counts the pair)."""
    i, k = a.task, b.task
    if not a.copy and not b.copy and (v.reaches(i, k) or v.reaches(k, i) or v.timed(i, k, d)):
        return v.first(i, k)
    if a.copy and not b.copy and v.reaches(k, i):
        return Expr(0.0)   # the copy leaves after i ends, after k
    if b.copy and not a.copy and v.reaches(i, k):
        return Expr(1.0)
    names = sorted((a.name, b.name))
    key = (*names, "" if not (a.copy or b.copy) else v.p.devices[d])
    if ("o", key) not in v.memo:
        o = v.memo["o", key] = v.column("first", key, 0.0, 1.0, integer=True)
        one, two = (a, b) if names[0] == a.name else (b, a)
        v.unless(two.start.copy().add(one.start, -1), [o], "first", (*key, "before"))
        v.unless(one.start.copy().add(two.start, -1), [Expr(1.0).add(o, -1)], "first", (*key, "after"))
    o = v.memo["o", key]
    return o if names[0] == a.name else Expr(1.0).add(o, -1)


def released(v: Vocabulary, a: Item, b: Item, d: int) -> Expr:
    """``a`` has left ``d`` when ``b`` starts (1 only if ``E_a <= S_b``)."""
    p = v.p
    if not b.copy and p.durations[b.task][d] and any(j == b.task for j, _ in p.succs[a.task]):
        return Expr(0.0)   # b reads a: a lives until b ends
    key = (a.name, b.name, "" if not (a.copy or b.copy) else p.devices[d])
    if ("r", key) not in v.memo:
        r = v.memo["r", key] = v.column("released", key, 0.0, 1.0, integer=True)
        v.unless(b.start.copy().add(a.end, -1), [r], "released", key)
    return v.memo["r", key]
