"""``symmetry``: identical devices are used in file order (DiviML's symmetry breaking).

Devices that share a ``group`` are interchangeable (checked by
:func:`~schedkit.blocks.interchangeable.first_difference`): swapping two of them in a valid
schedule gives a valid schedule of the same makespan, so a solver that tells them apart
explores every mirror image of each schedule. The block keeps one of them: it orders the
members ``d_1, d_2, ...`` of each group, in file order, by a measure,
``measure(d_k) >= measure(d_k+1)``:

- ``tasks``: the number of tasks on the device;
- ``batches``: the number of batches (task rows) on it. Without batching every task is one
  batch, so this is ``tasks``; under ``batching`` the rows count the batch slots that run;
- ``busy_time``: the sum of the durations of its tasks.

The optimum never changes. A symmetry block never rejects a schedule (``role = "symmetry"``,
:meth:`Symmetry.violations` is empty); instead every method's schedule is relabelled by
:meth:`Symmetry.canonicalize` into the canonical order before it is validated or used as a
warm start (:func:`schedkit.validate.canonical`), so a valid schedule stays valid.

The problem check lives in :meth:`Symmetry.applies_to` (and so in ``build``, ``build_cp``
and ``canonicalize``): a problem without two devices in one group, or whose group members
differ, is a one-line :class:`~schedkit.errors.ProblemError` as soon as a formulation with
the block meets it. Problems whose devices carry a ``group`` without being identical stay
valid under formulations without the block.

Examples
--------
>>> from schedkit import Problem, Schedule, TaskRun
>>> p = Problem.from_dict({"name": "pair", "devices": [{"name": "g0", "group": "gpu"},
...     {"name": "g1", "group": "gpu"}], "links": [{"src": "g0", "dst": "g1", "bandwidth": 1}],
...     "tasks": [{"name": t, "durations": {"g0": 1, "g1": 1}} for t in "abc"]})
>>> rows = [("a", "g0", 0, 1), ("b", "g1", 0, 1), ("c", "g1", 1, 2)]
>>> s = Schedule(problem="pair", method="manual", status="heuristic",
...              tasks=[TaskRun(task=t, device=d, start=a, end=e) for t, d, a, e in rows])
>>> [(r.task, r.device) for r in Symmetry().canonicalize(p, s).tasks]   # g1 had more tasks
[('a', 'g1'), ('b', 'g0'), ('c', 'g0')]
>>> Symmetry().violations(p, s)
[]
"""

from __future__ import annotations

from typing import Literal

from schedkit.blocks.base import Block, register_block
from schedkit.blocks.expr import Expr
from schedkit.blocks.interchangeable import device_groups, first_difference
from schedkit.errors import ProblemError


@register_block("symmetry")
class Symmetry(Block):
    """Identical devices (one group) are used in file order: the first carries the most."""

    holds_on_parts = True
    role = "symmetry"
    requires = frozenset({"x"})
    builds_rows = True
    by: Literal["tasks", "batches", "busy_time"] = "tasks"
    """The measure that orders the members of a group: ``tasks`` (how many tasks a device
    runs), ``batches`` (how many batches; without batching the same as ``tasks``) or
    ``busy_time`` (the sum of its tasks' durations)."""
    template = r"""
$G$ ranges over the groups of identical devices, $d^G_1, d^G_2, \dots$ its members in file order;
{% if by == "busy_time" %}
$p_{i,d}$ is the duration of task $i$ on $d$ (equal on every member of a group):

$$\sum_{i:\, d^G_k \in D_i} p_{i,d^G_k}\, x_{i,d^G_k} \;\ge\; \sum_{i:\, d^G_{k+1} \in D_i} p_{i,d^G_{k+1}}\, x_{i,d^G_{k+1}}
  \qquad \forall G,\ k$$
{% else %}
{% if by == "batches" %}
each task is one batch without batching, so batches are counted as tasks (under `batching`, the
rows count its running batch slots $y$ instead of $x$; `tasks` counts a task's first slot on the
device, `busy_time` the batch times of its slots):
{% endif %}

$$\sum_{i:\, d^G_k \in D_i} x_{i,d^G_k} \;\ge\; \sum_{i:\, d^G_{k+1} \in D_i} x_{i,d^G_{k+1}} \qquad \forall G,\ k$$
{% endif %}

(a missing $x$ is the constant 0 or 1). Swapping two members of a group maps every schedule
onto one of the same makespan, so the rows cut off mirror images only; schedules of every
method are relabelled into this order before they are validated or used as a warm start.
"""

    # ------------------------------------------------------------------ data
    def applies_to(self, problem) -> bool:
        self.check(problem)
        return True

    def check(self, problem) -> None:
        """Raise a one-line :class:`~schedkit.errors.ProblemError` when ``problem`` has no
        group of two devices or more, or when the members of a group differ."""
        if not device_groups(problem):
            raise ProblemError(f"block 'symmetry': no two devices of problem '{problem.name}' share a "
                               f"'group', so it has nothing to order (give identical devices one group)")
        difference = first_difference(problem)
        if difference is not None:
            raise ProblemError(f"block 'symmetry': {difference}")

    def weight(self, problem, i: int, d: int) -> float:
        """What task ``i`` adds to the measure of device ``d`` (unbatched)."""
        return problem.durations[i][d] if self.by == "busy_time" else 1.0

    # ------------------------------------------------------------------ MILP
    def build(self, ctx, blk):
        p = ctx.problem
        self.check(p)
        if ctx.has("batch"):  # under ``batching``: its batch slots
            self._build_batched(ctx.family("batch"), blk, p)
            return
        x = ctx.family("x")
        for members in device_groups(p).values():
            for d, e in zip(members, members[1:]):
                more = Expr()   # measure(d) - measure(e)
                # Interchangeable devices: a task may run on d exactly when it may run on e.
                for i in (i for i in range(len(p.tasks)) if d in p.allowed[i]):
                    w = self.weight(p, i, d)
                    more.add(x.x(i, d), w).add(x.x(i, e), -w)
                if more.cols:
                    blk.add("order", (p.devices[d], p.devices[e]), more >= 0)

    def _build_batched(self, batch, blk, p) -> None:
        """The order over batch slots: tasks (a task's first slot on the device runs),
        batches (every running slot) or busy time (the slots' batch times)."""
        for members in device_groups(p).values():
            for d, e in zip(members, members[1:]):
                more = Expr()   # measure(d) - measure(e)
                for device, sign in ((d, 1.0), (e, -1.0)):
                    for slot in batch.slots:
                        if slot[1] != device or (self.by == "tasks" and slot[2] > 0):
                            continue
                        if self.by == "busy_time":
                            for b in batch.z[slot]:
                                more.add(batch.size(slot, b), sign * p.batches.time(slot[0], device, b))
                        else:
                            more.add(batch.active(slot), sign)
                if more.cols:
                    blk.add("order", (p.devices[d], p.devices[e]), more >= 0)

    def build_cp(self, cp):
        p = cp.problem
        self.check(p)
        if cp.batches is not None:  # under ``batching``: its slots, as in the MILP
            for members in device_groups(p).values():
                for d, e in zip(members, members[1:]):
                    def measure(device):
                        slots = [s for s in cp.batches if s[1] == device and (self.by != "tasks" or s[2] == 0)]
                        return sum(s[5] if self.by == "busy_time" else s[3] for s in slots)
                    cp.model.add(measure(d) >= measure(e))
            return
        for members in device_groups(p).values():
            for d, e in zip(members, members[1:]):
                users = [i for i in range(len(p.tasks)) if d in p.allowed[i]]
                if self.by == "busy_time":  # in ticks, equal on both members
                    cp.model.add(sum(cp.duration[i][d] * cp.on[i][d] for i in users)
                                 >= sum(cp.duration[i][e] * cp.on[i][e] for i in users))
                else:
                    cp.model.add(sum(cp.on[i][d] for i in users) >= sum(cp.on[i][e] for i in users))

    def estimate(self, problem):
        total = 0
        for members in device_groups(problem).values():
            users = sum(1 for a in problem.allowed if members[0] in a)
            total += 2 * users * (len(members) - 1)
        return total

    # ------------------------------------------------------------------ schedules
    def violations(self, problem, schedule):
        return []  # mirror images are valid schedules: they are relabelled, never rejected

    def measures(self, problem, schedule) -> list[float]:
        """The measure of every device in ``schedule`` (indexed like ``problem.devices``)."""
        out = [0.0] * len(problem.devices)
        if self.by == "tasks":  # distinct tasks: a task split into batches counts once
            seen = set()
            for row in schedule.tasks:
                if (row.task, row.device) not in seen:
                    seen.add((row.task, row.device))
                    out[problem.device_index[row.device]] += 1
        elif self.by == "batches":
            for row in schedule.tasks:
                out[problem.device_index[row.device]] += 1
        else:
            for row in schedule.tasks:
                d = problem.device_index[row.device]
                out[d] += (problem.durations[problem.task_index[row.task]][d] if row.inputs is None
                           else row.end - row.start)
        return out

    def canonicalize(self, problem, schedule):
        """``schedule`` with the members of each group relabelled so that the measure does not
        increase in file order: each member's tasks and the transfers from and to it (with their
        routes) move together onto another member.

        Members of equal measure keep their order (a stable sort), so a schedule already in the
        canonical order is returned as it is.
        """
        self.check(problem)
        if not schedule.tasks or any(r.task not in problem.task_index or r.device not in problem.device_index
                                     for r in schedule.tasks):
            return schedule  # the validator names the unknown rows
        measure = self.measures(problem, schedule)
        rename: dict[int, int] = {}
        for members in device_groups(problem).values():
            ranked = sorted(members, key=lambda d: -measure[d])  # stable: ties keep file order
            rename.update((old, new) for old, new in zip(ranked, members) if old != new)
        if not rename:
            return schedule
        names, index = problem.devices, problem.device_index
        moved = lambda name: names[rename.get(index[name], index[name])] if name in index else name  # noqa: E731
        tasks = [r.model_copy(update={"device": moved(r.device)}) if index[r.device] in rename else r
                 for r in schedule.tasks]
        transfers = []
        for t in schedule.transfers:
            if t.from_ not in index or t.to not in index:
                transfers.append(t)
                continue
            u, v = index[t.from_], index[t.to]
            nu, nv = rename.get(u, u), rename.get(v, v)
            if (nu, nv) == (u, v):
                transfers.append(t)
                continue
            update = {"from_": names[nu], "to": names[nv]}
            if t.route is not None and tuple(t.route) == problem.route[u][v]:
                update["route"] = list(problem.route[nu][nv])  # the mirrored route's channels
            transfers.append(t.model_copy(update=update))
        return schedule.model_copy(update={"tasks": tasks, "transfers": transfers})
