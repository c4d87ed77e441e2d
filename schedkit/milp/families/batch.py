"""Family ``batch``: DiviML's batches as columns, per task, device and batch slot.

Every task ``i`` has up to ``K`` batch slots on each device ``d`` it may use (``K`` the
``batching`` block's ``max_batches_per_device``, and never more than L divided by the
least batch size there). A slot ``p = (i, d, k)`` has

- ``y_p`` (binary): the slot runs a batch; slots of one task on one device fill in order;
- ``z_{p,b}`` (binary, one per batch size ``b`` the task runs on ``d``): its size, with
  ``sum_b z_{p,b} = y_p``;
- ``a_{p,l}`` (binary, one per input ``l``): the slot holds input ``l``, with
  ``sum_l a_{p,l} = sum_b b z_{p,b}``;
- ``s_p``: its start, and its end ``s_p + sum_b t_{i,d,b} z_{p,b}`` (an expression);

and ``C``, the makespan of the L inputs. The ``batching`` block adds the rows that give them
their meaning. The read-back gives every active slot as a batch (task, device, inputs,
start), in ``draft.extras["batches"]``.
"""

from __future__ import annotations

from schedkit.blocks.expr import Expr
from schedkit.milp.families.base import Family, register_family
from schedkit.numerics import BOUND_SLACK


@register_family("batch")
class BatchFamily(Family):
    """Batch slots per task and device: active, size, inputs held, start; and the makespan."""

    defined_by = "batching"
    template = r"""For every task $i$, device $d \in D_i$ and slot $k < K_{i,d}$: $y_{idk} \in \{0,1\}$ (the slot
runs a batch), $z_{idkb} \in \{0,1\}$ for each batch size $b \in B_{i,d}$ with $\sum_b z_{idkb} = y_{idk}$,
$a_{idkl} \in \{0,1\}$ for each input $l < L$ with $\sum_l a_{idkl} = \sum_b b\, z_{idkb}$, a start
$s_{idk} \in [0, H]$ and the end $e_{idk} = s_{idk} + \sum_b t_{idb}\, z_{idkb}$; $C$ the makespan."""

    def create(self) -> None:
        self.slots: list[tuple[int, int, int]] = []
        self.col = None
        self.pairs: dict = {}

    def setup(self, most: int | None) -> None:
        """Create the slots, at most ``most`` per task and device (``None``: as many as fit)."""
        ctx = self.ctx
        p, lin, H = ctx.problem, ctx.lin, ctx.horizon * (1 + BOUND_SLACK)
        L, sizes = p.inputs, p.batches.sizes
        self.H = H
        self.col = lin.add_columns("makespan", [()], p.batches.lower_bound(p), H)[0]
        self.y, self.z, self.a, self.s, self.pairs = {}, {}, {}, {}, {}
        rows = lin.rows(None)
        for i, name in enumerate(p.tasks):
            for d in p.allowed[i]:
                if not sizes[i][d]:
                    continue
                count = L // sizes[i][d][0]
                for k in range(count if most is None else min(most, count)):
                    slot = (i, d, k)
                    key = (name, p.devices[d], k)
                    only = len(p.allowed[i]) == 1 and k == 0 and len(sizes[i][d]) == 1 and sizes[i][d][0] == L
                    self.slots.append(slot)
                    self.y[slot] = lin.add_columns("batch", [key], 1.0 if only else 0.0, 1.0, integer=True)[0]
                    self.z[slot] = dict(zip(sizes[i][d], lin.add_columns(
                        "batch_size", [(*key, b) for b in sizes[i][d]], 0.0, 1.0, integer=True)))
                    self.a[slot] = lin.add_columns("holds", [(*key, l) for l in range(L)], 0.0, 1.0, integer=True)
                    self.s[slot] = lin.add_columns("batch_start", [key], 0.0, H)[0]
                    chosen = Expr(0.0, list(self.z[slot].values()), [1.0] * len(self.z[slot]))
                    rows.add("batch_size_def", key, chosen - self.active(slot) == 0)
                    held = Expr(0.0, self.a[slot], [1.0] * L)
                    size = Expr(0.0, list(self.z[slot].values()), [float(b) for b in self.z[slot]])
                    rows.add("batch_inputs_def", key, held - size == 0)

    # ------------------------------------------------------------------ expressions
    def makespan(self) -> Expr:
        """The makespan of the workload."""
        return Expr.term(self.col)

    def active(self, slot) -> Expr:
        """``y``: the slot runs a batch."""
        return Expr.term(self.y[slot])

    def size(self, slot, b: int) -> Expr:
        """``z``: the slot's batch has size ``b``."""
        return Expr.term(self.z[slot][b])

    def holds(self, slot, l: int) -> Expr:
        """``a``: the slot holds input ``l``."""
        return Expr.term(self.a[slot][l])

    def start(self, slot) -> Expr:
        """The slot's start."""
        return Expr.term(self.s[slot])

    def end(self, slot) -> Expr:
        """The slot's end ``s + sum_b t_b z_b``."""
        i, d, _ = slot
        times = self.ctx.problem.batches
        return Expr(0.0, [self.s[slot], *self.z[slot].values()],
                    [1.0] + [times.time(i, d, b) for b in self.z[slot]])

    def order(self, first, second) -> Expr:
        """The binary "slot ``first`` runs before slot ``second``" (made on first use)."""
        col = self.pairs.get((first, second))
        if col is None:
            p = self.ctx.problem
            key = tuple(x for slot in (first, second) for x in (p.tasks[slot[0]], p.devices[slot[1]], slot[2]))
            col = self.pairs[first, second] = self.ctx.lin.add_columns("batch_order", [key], 0.0, 1.0,
                                                                        integer=True)[0]
        return Expr.term(col)

    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        if self.col is None:
            return
        runs: dict[tuple[int, int], list] = {}
        for row in schedule.tasks:
            runs.setdefault((p.task_index[row.task], p.device_index[row.device]), []).append(row)
        for (i, d), rows in runs.items():
            rows.sort(key=lambda r: r.start)
            for k, row in enumerate(rows):
                slot = (i, d, k)
                size = len(row.inputs or [0])
                if slot not in self.y or size not in self.z[slot]:
                    return  # a schedule these slots cannot hold: no warm start
        values[self.col] = schedule.makespan
        for slot in self.slots:
            values[self.y[slot]] = 0.0
            values[self.s[slot]] = 0.0
            for col in self.z[slot].values():
                values[col] = 0.0
            for col in self.a[slot]:
                values[col] = 0.0
        starts = {}
        for (i, d), rows in runs.items():
            for k, row in enumerate(rows):
                slot = (i, d, k)
                starts[slot] = (row.start, row.end, i, k)
                values[self.y[slot]] = 1.0
                values[self.s[slot]] = row.start
                values[self.z[slot][len(row.inputs or [0])]] = 1.0
                for l in row.inputs or [0]:
                    values[self.a[slot][l]] = 1.0
        for (first, second), col in self.pairs.items():
            a, b = starts.get(first), starts.get(second)
            values[col] = 1.0 if a is None or (b is not None and a <= b) else 0.0

    def read(self, values, draft) -> None:
        if self.col is None:
            return
        batches = []
        for slot in self.slots:
            if values[self.y[slot]] > 0.5:
                i, d, _ = slot
                inputs = [l for l, col in enumerate(self.a[slot]) if values[col] > 0.5]
                batches.append((i, d, inputs, values[self.s[slot]]))
        draft.extras["batches"] = batches
