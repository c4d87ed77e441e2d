"""``batching``: the L inputs of a workload run in batches (DiviML), as an exact MILP.

The semantics (DESIGN, "``batching``") are checked by the default blocks, input by input
(:mod:`schedkit.schedule.batched`): every (task, input) pair in exactly one batch of a size
its device runs, for that batch's time; batches on one device never overlap; per input
and edge, the consumer's batch starts after the producer's ends plus the transfer time;
static memory once per device that runs a task. This block is their MILP over batch
slots (the ``batch`` family), DiviML's model: in a formulation with ``batching`` it builds
the rows of ``assignment``, ``placement``, ``precedence``, ``no_overlap`` and ``memory``
for batches (:attr:`Batching.replaces`), which then build nothing of their own.

:meth:`Batching.build_cp` is the same model for CP-SAT, with an optional interval per slot.

``max_batches_per_device`` (DiviML: 1) restricts the formulation, not the semantics: each
task's inputs go to at most that many batches per device, so a proven optimum is optimal
among such schedules.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.from_dict({"name": "b", "workload": {"inputs": 4},
...     "devices": [{"name": "gpu", "batch_sizes": [2, 4]}, {"name": "cpu"}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
...     "tasks": [{"name": "a", "durations": {"gpu": {2: 1, 4: 1.5}, "cpu": 1}}]})
>>> s = solve(p, "milp", formulation="throughput", solver="highs")
>>> s.status, s.makespan, sorted((r.device, len(r.inputs)) for r in s.tasks)
('optimal', 1.5, [('gpu', 4)])
"""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import Field

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.expr import Expr
from schedkit.errors import FormulationError
from schedkit.numerics import is_whole, whole_units


@register_block("batching")
class Batching(Block):
    """The workload's inputs run in batches of the sizes each device allows (DiviML's model)."""

    holds_on_parts = True
    interprets = "a workload of several inputs"
    requires = frozenset({"batch"})
    replaces = frozenset({"assignment", "placement", "precedence", "no_overlap", "memory", "cuts"})
    max_batches_per_device: int | None = Field(1, ge=1)
    """At most this many batches of one task on one device (DiviML: 1); ``None``: no limit."""
    subsumes = replaces - {"cuts"}  # (their data is honoured, in batches)
    excludes: ClassVar[frozenset[str]] = frozenset({"channels", "congestion", "memory_timeline"})
    """Blocks whose meaning under batching is not defined yet (DESIGN): a formulation with one
    of them and ``batching`` is refused when it is made, before any solve."""
    builds_rows = True
    template = r"""
Over the batch slots of family `batch` ($K$ = {{ max_batches_per_device or "L / least size" }} per task
and device), with $M = H$ the horizon and $c_{uv}$ the transfer time of an edge's size:

$$\sum_{d,k} a_{idkl} = 1 \quad \forall i, l \qquad y_{id,k} \le y_{id,k-1},\quad
  s_{idk} \ge e_{id,k-1} - M(1 - y_{idk})$$

Two slots $p, q$ of different tasks on one device never overlap ($o_{pq}$ binary):
$s_q \ge e_p - M(3 - o_{pq} - y_p - y_q)$, $s_p \ge e_q - M(2 + o_{pq} - y_p - y_q)$.
Per input $l$ and edge $(i, j)$, for slots $p$ of $i$ on $u$ and $q$ of $j$ on $v$:
$s_q \ge e_p + c_{uv} - (M + c_{uv})(2 - a_{pl} - a_{ql})$ (and $a_{pl} + a_{ql} \le 1$ without a link path).
Memory: $\sum_i m_i\, y_{id0} \le M_d$ (a task's memory once per device that runs it). Collocated
tasks hold each input on the same device. $C \ge e_p - M(1 - y_p)$. Inputs are interchangeable: on the first
task with a choice, the slot of input $l$ is non-decreasing in $l$.
"""

    def applies_to(self, problem) -> bool:
        return True

    def finds_data(self, problem) -> bool:
        # The default blocks judge a workload input by input: without this block, its
        # data is honoured all the same (this block adds a formulation's limit).
        return False

    def violations(self, problem, schedule) -> list[str]:
        # The semantics are the default blocks' (input by input); what this block adds is
        # the formulation's limit per device.
        if self.max_batches_per_device is None:
            return []
        count: dict[tuple[str, str], int] = {}
        for row in schedule.tasks:
            key = (row.task, row.device)
            count[key] = count.get(key, 0) + 1
        return [f"task '{task}' runs {n} batches on {device}, more than max_batches_per_device "
                f"{self.max_batches_per_device}" for (task, device), n in count.items()
                if n > self.max_batches_per_device]

    def estimate(self, problem) -> int:
        L, slots = problem.inputs, sum(len(a) for a in problem.allowed)
        pairs = sum(len(problem.allowed[i]) * len(problem.allowed[j]) for i, j, _ in problem.edges)
        return slots * (2 * L + 8) + pairs * L * 5 + slots * slots * 8

    def build(self, ctx, blk) -> None:
        p = ctx.problem
        batch = ctx.family("batch")
        batch.setup(self.max_batches_per_device)
        H = batch.H
        of_task: list[list] = [[] for _ in p.tasks]
        on_device: list[list] = [[] for _ in p.devices]
        for slot in batch.slots:
            of_task[slot[0]].append(slot)
            on_device[slot[1]].append(slot)
        L = p.inputs
        for i, name in enumerate(p.tasks):  # every (task, input) in one batch
            for l in range(L):
                blk.add("input_once", (name, l), sum((batch.holds(s, l) for s in of_task[i]), Expr()) == 1)
        C = batch.makespan()
        for slot in batch.slots:
            i, d, k = slot
            key = (p.tasks[i], p.devices[d], k)
            y = batch.active(slot)
            blk.add("makespan", key, C >= batch.end(slot) - H * (1 - y))
            if k > 0:  # slots fill in order, one after the other
                prev = (i, d, k - 1)
                blk.add("fill", key, batch.active(prev) >= y)
                blk.add("after", key, batch.start(slot) >= batch.end(prev) - H * (1 - y))
        for d, slots in enumerate(on_device):
            _no_overlap(blk, batch, p, slots, H)
            _memory(blk, batch, p, d, slots)
        _precedence(blk, batch, p, of_task, H)
        _colocate(blk, batch, p, of_task)
        _interchangeable_inputs(blk, batch, p, of_task)


    # ------------------------------------------------------------------ CP-SAT
    def build_cp(self, cp) -> None:
        """The same model with intervals: one optional interval per batch slot, its length the
        chosen size's batch time (in ticks, rounded up), ``add_no_overlap`` per device, per-input
        precedence enforced by the two slots' input literals."""
        p, model, up, H = cp.problem, cp.model, cp.ticks.up, cp.horizon
        L, sizes = p.inputs, p.batches.sizes
        slots = []  # (i, d, k, y, z by size, start, length, inputs)
        for i, name in enumerate(p.tasks):
            for d in p.allowed[i]:
                if not sizes[i][d]:
                    continue
                count = L // sizes[i][d][0]
                most = self.max_batches_per_device
                for k in range(count if most is None else min(most, count)):
                    y = model.new_bool_var(f"batch({name},{p.devices[d]},{k})")
                    z = {b: model.new_bool_var("") for b in sizes[i][d]}
                    held = [model.new_bool_var("") for _ in range(L)]
                    model.add(sum(z.values()) == y)
                    model.add(sum(held) == sum(b * v for b, v in z.items()))
                    start = model.new_int_var(0, H, "")
                    length = model.new_int_var(0, H, "")
                    model.add(length == sum(up(p.batches.time(i, d, b)) * v for b, v in z.items()))
                    end = model.new_int_var(0, 2 * H, "")  # (its own end variable: see CpContext)
                    model.add(end == start + length)
                    interval = model.new_optional_interval_var(start, length, end, y, "")
                    model.add(cp.makespan >= end).only_enforce_if(y)
                    slots.append((i, d, k, y, z, start, length, held, interval))
        of_task = [[s for s in slots if s[0] == i] for i in range(len(p.tasks))]
        for i in range(len(p.tasks)):
            for l in range(L):
                model.add_exactly_one(s[7][l] for s in of_task[i])
            for s in of_task[i]:
                if s[2] > 0:
                    prev = next(r for r in of_task[i] if r[1] == s[1] and r[2] == s[2] - 1)
                    model.add_implication(s[3], prev[3])
                    model.add(s[5] >= prev[5] + prev[6]).only_enforce_if(s[3])
        for d in range(len(p.devices)):
            on = [s[8] for s in slots if s[1] == d]
            if len(on) > 1:
                model.add_no_overlap(on)
        for i, j, size in p.edges:
            for a in of_task[i]:
                for b in of_task[j]:
                    u, v = a[1], b[1]
                    if not p.pair_allowed(size, u, v):
                        for l in range(L):
                            model.add_bool_or([a[7][l].negated(), b[7][l].negated()])
                        continue
                    c = up(p.comm_time(size, u, v)) if u != v else 0
                    for l in range(L):
                        model.add(b[5] >= a[5] + a[6] + c).only_enforce_if([a[7][l], b[7][l]])
        for group, members in p.colocate_groups.items():
            for i in members[1:]:
                for d in set(p.allowed[i]) | set(p.allowed[members[0]]):
                    for l in range(L):
                        model.add(sum(s[7][l] for s in of_task[i] if s[1] == d)
                                  == sum(s[7][l] for s in of_task[members[0]] if s[1] == d))
        _cp_memory(cp, slots)
        cp.batches = [(s[0], s[1], s[2], s[3], s[5], s[6], s[7]) for s in slots]

        def fix(schedule) -> None:  # each row on its slot, in start order per task and device
            rows: dict = {}
            for row in schedule.tasks:
                rows.setdefault((p.task_index[row.task], p.device_index[row.device]), []).append(row)
            chosen = set()
            for (i, d), runs in rows.items():
                for k, row in enumerate(sorted(runs, key=lambda r: r.start)):
                    s = next(s for s in of_task[i] if s[1] == d and s[2] == k)
                    chosen.add(id(s))
                    model.add(s[3] == 1)
                    model.add(s[5] == up(row.start))
                    for l in row.inputs or [0]:
                        model.add(s[7][l] == 1)
            for s in slots:
                if id(s) not in chosen:
                    model.add(s[3] == 0)

        cp.fix_batches = fix


def _cp_memory(cp, slots) -> None:
    """Static memory once per device that runs a task: its first slot there (in whole units,
    rounded the safe way)."""
    p = cp.problem
    for d, cap in enumerate(p.device_memory):
        firsts = [s for s in slots if s[1] == d and s[2] == 0 and p.task_memory[s[0]]]
        if math.isinf(cap) or sum(p.task_memory[s[0]] for s in firsts) <= cap:
            continue
        unit = whole_units([p.task_memory[s[0]] for s in firsts] + [cap])
        if not all(is_whole(x * unit) for x in [p.task_memory[s[0]] for s in firsts] + [cap]):
            cp.rounded.append(f"memory of device {p.devices[d]}")
        cp.model.add(sum(math.ceil(p.task_memory[s[0]] * unit - 1e-9) * s[3] for s in firsts)
                     <= math.floor(cap * unit + 1e-9))


def _no_overlap(blk, batch, p, slots, H) -> None:
    for n, first in enumerate(slots):
        for second in slots[n + 1:]:
            if first[0] == second[0]:
                continue  # one task's slots on a device: in order already
            o, yp, yq = batch.order(first, second), batch.active(first), batch.active(second)
            key = (p.tasks[first[0]], p.tasks[second[0]], p.devices[first[1]], first[2], second[2])
            blk.add("first", key, batch.start(second) >= batch.end(first) - H * (3 - o - yp - yq))
            blk.add("second", key, batch.start(first) >= batch.end(second) - H * (2 + o - yp - yq))


def _memory(blk, batch, p, d, slots) -> None:
    cap = p.device_memory[d]
    firsts = [s for s in slots if s[2] == 0 and p.task_memory[s[0]]]
    if math.isinf(cap) or sum(p.task_memory[s[0]] for s in firsts) <= cap:
        return
    blk.add("memory", (p.devices[d],), sum((p.task_memory[s[0]] * batch.active(s) for s in firsts), Expr()) <= cap)


def _precedence(blk, batch, p, of_task, H) -> None:
    for i, j, size in p.edges:
        for first in of_task[i]:
            u = first[1]
            end = batch.end(first)
            for second in of_task[j]:
                v = second[1]
                key = (p.tasks[i], p.tasks[j], p.devices[u], first[2], p.devices[v], second[2])
                if not p.pair_allowed(size, u, v):
                    for l in range(p.inputs):
                        blk.add("unlinked", (*key, l), batch.holds(first, l) + batch.holds(second, l) <= 1)
                    continue
                c = p.comm_time(size, u, v) if u != v else 0.0
                big = H + c
                for l in range(p.inputs):
                    # input l in both slots: s_q >= e_p + c
                    both = 2 - batch.holds(first, l) - batch.holds(second, l)
                    blk.add("input_after", (*key, l), batch.start(second) >= end + c - big * both)


def _colocate(blk, batch, p, of_task) -> None:
    for group, members in p.colocate_groups.items():
        lead = members[0]
        for i in members[1:]:
            for d in set(p.allowed[i]) | set(p.allowed[lead]):
                for l in range(p.inputs):
                    here = Expr()
                    for s in of_task[i]:
                        if s[1] == d:
                            here.add(batch.holds(s, l))
                    for s in of_task[lead]:
                        if s[1] == d:
                            here.add(batch.holds(s, l), -1.0)
                    blk.add("colocate", (group, p.tasks[i], p.devices[d], l), here == 0)


def _interchangeable_inputs(blk, batch, p, of_task) -> None:
    # Relabelling the inputs maps schedules to schedules: keep those in which the first
    # task with a choice holds its inputs in slot order.
    for i in p.topological_order:
        slots = of_task[i]
        if len(slots) > 1:
            for l in range(p.inputs - 1):  # (slot 0 weighs nothing)
                later = Expr()   # the slot index of input l + 1, less that of input l
                for k, s in enumerate(slots[1:], 1):
                    later.add(batch.holds(s, l + 1), float(k))
                for k, s in enumerate(slots[1:], 1):
                    later.add(batch.holds(s, l), -float(k))
                blk.add("input_order", (p.tasks[i], l), later >= 0)
            return


def check_batchable(problem, blocks) -> None:
    """Refuse, before any solve, blocks whose meaning under batching is not defined yet.

    A workload of several inputs is scheduled in batches, whatever the formulation says;
    ``channels``, ``congestion`` and ``memory_timeline`` (:attr:`Batching.excludes`) have no
    meaning for batches yet (DESIGN), so a method held to one of them has nothing to solve.

    Parameters
    ----------
    problem : Problem
    blocks : list of Block
        The blocks the method is held to.

    Raises
    ------
    FormulationError
        Naming the first such block that applies to the problem.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.blocks import Channels
    >>> p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}], "workload": {"inputs": 2},
    ...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
    ...     "tasks": [{"name": "x", "work": 1}, {"name": "y", "work": 1}],
    ...     "edges": [{"src": "x", "dst": "y", "size": 1}]})
    >>> check_batchable(p, [Channels()])
    Traceback (most recent call last):
    ...
    schedkit.errors.FormulationError: block 'channels' does not combine with batching yet (the workload asks for 2 inputs)
    """
    if problem.inputs <= 1:
        return
    for block in blocks:
        if block.kind in Batching.excludes and block.applies_to(problem):
            raise FormulationError(f"block '{block.kind}' does not combine with batching yet "
                                   f"(the workload asks for {problem.inputs} inputs)")
