"""Coarsening: groups of tasks become single tasks, and a coarse schedule expands back.

What greedy merging (``merge``) and operator fusion (``fusion``) share. A **group** is a
list of tasks of the problem, in topological order, that will run as one task on one
device: its devices are the intersection of its members' allowed devices, its duration on
each the sum of its members', its memory the sum, its collocation group its members' (at
most one, unless the caller joins groups: :class:`Collocation`). Edges between groups keep
the largest size among the edges they stand for: every edge of the problem then has its
own transfer no longer than the coarse one.

:func:`expand` runs the members of each coarse task back to back, in topological order,
on the coarse task's device, then recomputes the times on the original problem
(left-shifted): a member may start earlier than its coarse task's slot when its own inputs
are ready, never later than the slot allows. :func:`reordered` keeps the devices and lets
HEFT's list schedule choose every device's order again (for ``merge``, whose groups are
only a means to a small problem; a fused operator runs as one).

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> groups = [[0], [1, 3], [2], [4, 5]]     # attn with norm, logits with sample
>>> coarse = coarse_problem(p, groups, "tiny/coarse")
>>> coarse.tasks, [coarse.devices[d] for d in coarse.allowed[3]]
(['embed', 'attn+norm', 'mlp', 'logits+sample'], ['cpu'])
>>> s = expand(p, groups, solve(coarse, "heft"), "example")
>>> s.validate(p).placement()["norm"] == s.placement()["attn"]
True
"""

from __future__ import annotations

import copy
import time
from typing import Sequence

import numpy as np

from schedkit.errors import SchedkitError
from schedkit.numerics import fits, shorter
from schedkit.problem import Problem
from schedkit.problem.graph import upward_rank
from schedkit.schedule import Schedule
from schedkit.timing import fixed_order_times, list_schedule, placement_indices, to_schedule
from schedkit.reductions.subproblem import edge_row, heavier, spec_data, stitch

__all__ = ["group_names", "Collocation", "coarse_problem", "expand", "expanded", "reordered",
           "reordered_times", "makespan_of"]


def group_names(problem: Problem, groups: Sequence[Sequence[int]]) -> list[str]:
    """A unique name per group: a lone task keeps its name; a group of up to four is its
    members' names joined by ``+``, a larger one ``first..last[N]`` (N members); a ``#k``
    suffix makes a name unique."""
    names, seen = [], set(problem.tasks)
    for members in groups:
        if len(members) == 1:
            names.append(problem.tasks[members[0]])
            continue
        parts = [problem.tasks[i] for i in members]
        name = "+".join(parts) if len(parts) <= 4 else f"{parts[0]}..{parts[-1]}[{len(parts)}]"
        base, k = name, 1
        while name in seen:
            k += 1
            name = f"{base}#{k}"
        seen.add(name)
        names.append(name)
    return names


class Collocation:
    """Collocation groups while tasks are grouped: which groups have been joined into one,
    and the devices and memory each joined group needs on its one device.

    A coarsening that puts members of two collocation groups into one coarse task ties both
    groups to one device: :meth:`join` records it, and :meth:`label` names the joined group
    the coarse problem gives every coarse task of either.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b"}],
    ...     "tasks": [{"name": "x", "work": 1, "memory": 3, "colocate": "g"},
    ...               {"name": "y", "work": 1, "memory": 2, "colocate": "h"},
    ...               {"name": "z", "work": 1, "colocate": "h"}]})
    >>> c = Collocation(p)
    >>> c.label(0), c.label(1), c.devices(["g", "h"]), c.memory(["g", "h"])
    ('g', 'h', {0, 1}, 5.0)
    >>> c.fits(["g", "h"], {0, 1})      # 5 does not fit on a, b has no limit
    True
    >>> c.join("g", "h"); c.label(2)
    'g'
    """

    def __init__(self, problem: Problem):
        self.problem = problem
        self._parent: dict[str, str] = {}
        self._devices: dict[str, set[int]] = {}
        self._memory: dict[str, float] = {}
        for group, members in problem.colocate_groups.items():
            self._parent[group] = group
            self._devices[group] = set.intersection(*(set(problem.allowed[i]) for i in members))
            self._memory[group] = float(sum(problem.task_memory[i] for i in members))

    def root(self, group: str | None) -> str | None:
        """The joined group that ``group`` belongs to (``None`` for none)."""
        if group is None:
            return None
        while self._parent[group] != group:
            self._parent[group] = self._parent[self._parent[group]]
            group = self._parent[group]
        return group

    def label(self, task: int) -> str | None:
        """The joined group of task ``task`` of the problem."""
        return self.root(self.problem.spec.tasks[task].colocate)

    def devices(self, roots) -> set[int]:
        """The devices every task of the joined groups ``roots`` (one or more) may run on."""
        return set.intersection(*(self._devices[r] for r in roots))

    def memory(self, roots) -> float:
        """The static memory of the tasks of the joined groups ``roots``."""
        return sum(self._memory[r] for r in set(roots))

    def fits(self, roots, devices, extra: float = 0.0) -> bool:
        """Whether the joined groups ``roots`` (and ``extra`` memory of tasks outside them)
        fit together on one of ``devices`` that they all may run on."""
        need = self.memory(roots) + extra
        return any(fits(need, self.problem.device_memory[d]) for d in self.devices(roots) & set(devices))

    def join(self, a: str, b: str) -> None:
        """Tie joined groups ``a`` and ``b`` to one device."""
        a, b = self.root(a), self.root(b)
        if a != b:
            self._parent[b] = a
            self._devices[a] &= self._devices.pop(b)
            self._memory[a] += self._memory.pop(b)

    def rebound(self, problem: Problem) -> Collocation:
        """The same joined groups, labelling the tasks of ``problem`` (whose collocation
        groups have the same names: a coarsening of it, or what it was coarsened from)."""
        other = copy.copy(self)
        other.problem = problem
        return other

    def add(self, root: str, devices: set[int], memory: float) -> None:
        """Tie tasks outside any group (their ``devices`` and ``memory``) to joined group ``root``."""
        self._devices[root] &= devices
        self._memory[root] += memory


def coarse_problem(problem: Problem, groups: Sequence[Sequence[int]], name: str,
                   ops: Sequence[str | None] | None = None, colocate: Collocation | None = None) -> Problem:
    """The problem whose tasks are ``groups`` (each a list of task indices in topological order).

    Parameters
    ----------
    problem : Problem
    groups : sequence of sequence of int
        A partition of the tasks; each group's members share a device and no path leaves
        the group and comes back (the caller guarantees it).
    name : str
        The coarse problem's name.
    ops : sequence of str or None, optional
        An ``op`` for each coarse task.
    colocate : Collocation, optional
        The collocation groups the caller joined: a coarse task's group is its members'
        joined group (without it, members of two groups are an error).

    Raises
    ------
    SchedkitError
        When a group's members share no device or belong to two collocation groups that
        ``colocate`` has not joined.
    """
    labels = group_names(problem, groups)
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    label = (lambda i: problem.spec.tasks[i].colocate) if colocate is None else colocate.label
    # A group's durations summed once per device type, not looked up per device: 10,000
    # tasks on 1,024 devices of 3 types made 10 million look-ups (4.4 s) per coarse problem.
    kind, by_type = problem.arrays.device_type.tolist(), problem.arrays.type_durations
    rows = []
    for g, members in enumerate(groups):
        devices = set(problem.allowed[members[0]])
        for i in members[1:]:
            devices &= set(problem.allowed[i])
        if not devices:
            raise SchedkitError(f"tasks {', '.join(problem.tasks[i] for i in members)} share no device")
        groups_of = {label(i) for i in members} - {None}
        if len(groups_of) > 1:
            raise SchedkitError(f"tasks {', '.join(problem.tasks[i] for i in members)} belong to "
                                f"collocation groups {', '.join(sorted(groups_of))}")
        total = np.zeros(by_type.shape[1])
        for i in members:  # (in turn, as sum() adds: the same floats, bit for bit)
            total += by_type[i]
        total = total.tolist()
        row = {"name": labels[g], "durations": {problem.devices[d]: total[kind[d]] for d in sorted(devices)}}
        memory = sum(problem.task_memory[i] for i in members)
        if memory:
            row["memory"] = memory
        if groups_of:
            row["colocate"] = groups_of.pop()
        op = ops[g] if ops is not None else (problem.spec.tasks[members[0]].op if len(members) == 1 else None)
        if op:
            row["op"] = op
        rows.append(row)
    sizes = _coarse_edges(problem, group_of, len(groups))
    data = spec_data(problem, platform=True)
    return Problem.from_dict({"name": name, "devices": data["devices"], "links": data.get("links", []),
                              "tasks": rows,
                              "edges": [edge_row(problem, labels[a], labels[b], s)
                                        for (a, b), s in sorted(sizes.items())]})


def _coarse_edges(problem: Problem, group_of: dict[int, int], count: int) -> dict[tuple[int, int], float]:
    """The data of every edge between two groups: the heaviest of the edges it stands for
    (:func:`~schedkit.reductions.subproblem.heavier`), by (source group, target group).

    Plain sizes are reduced by numpy (a graph of 100,000 tasks has millions of edges); the
    few edges with their own transfer times are merged one by one.
    """
    a = problem.arrays
    g = np.empty(len(problem.tasks), dtype=np.int64)
    g[np.fromiter(group_of.keys(), dtype=np.int64, count=len(group_of))] = \
        np.fromiter(group_of.values(), dtype=np.int64, count=len(group_of))
    src, dst = g[a.edge_src], g[a.edge_dst]
    plain = (src != dst) & ~a.edge_payload
    keys, where = np.unique(src[plain] * count + dst[plain], return_inverse=True)
    largest = np.full(len(keys), -np.inf)
    np.maximum.at(largest, where, a.edge_size[plain])
    sizes: dict[tuple[int, int], float] = {(int(k) // count, int(k) % count): float(v)
                                          for k, v in zip(keys.tolist(), largest.tolist())}
    for k in np.flatnonzero(a.edge_payload).tolist():
        i, j, size = problem.edges[k]
        key = (group_of[i], group_of[j])
        if key[0] != key[1]:
            sizes[key] = heavier(problem, sizes.get(key, 0.0), size)
    return dict(sorted(sizes.items()))


def expand(problem: Problem, groups: Sequence[Sequence[int]], coarse: Schedule, method: str) -> Schedule:
    """The schedule of ``problem`` from a schedule of its coarse problem: each group's members
    back to back, in topological order, on its coarse task's device; times left-shifted."""
    return stitch(problem, *expanded(problem, groups, coarse), method)


def expanded(problem: Problem, groups: Sequence[Sequence[int]], coarse: Schedule) -> tuple[list[int], list[list[int]]]:
    """The mapping and device orders of :func:`expand`: each task's device, and the tasks
    of every device (groups in the order of their coarse slots, members in theirs)."""
    labels = group_names(problem, groups)
    rows = {r.task: r for r in coarse.tasks}
    device_of = [0] * len(problem.tasks)
    slots = []
    for g, members in enumerate(groups):
        row = rows[labels[g]]
        d = problem.device_index[row.device]
        for i in members:
            device_of[i] = d
        slots.append((row.start, row.end, g, d))
    orders: list[list[int]] = [[] for _ in problem.devices]
    for _, _, g, d in sorted(slots):
        orders[d] += list(groups[g])
    return device_of, orders


def makespan_of(problem: Problem, device_of: Sequence[int], start: Sequence[float]) -> float:
    """The makespan of the tasks started at ``start`` on ``device_of`` (as
    :func:`~schedkit.timing.to_schedule` computes their ends)."""
    durations = problem.durations
    return max((float(start[i]) + durations[i][d] for i, d in enumerate(device_of)), default=0.0)


def reordered_times(problem: Problem, device_of: Sequence[int], orders: Sequence[Sequence[int]],
                    deadline: float | None = None) -> list[float]:
    """The start times of :func:`reordered` applied to :func:`stitch`'s schedule, without
    making either schedule (on 100,000 tasks, each costs seconds): the left-shifted times
    of ``orders``, or of HEFT's list schedule on the same devices when that is shorter.

    ``deadline`` (a ``time.perf_counter()`` time): the list schedule is skipped when the
    time left is shorter than the left-shifted times took (it costs about as much).
    """
    began = time.perf_counter()
    start = fixed_order_times(problem, device_of, orders)
    if deadline is not None and deadline - time.perf_counter() < time.perf_counter() - began:
        return start
    _, listed = list_schedule(problem, upward_rank(problem), device_of=list(device_of))
    return listed if shorter(makespan_of(problem, device_of, listed), makespan_of(problem, device_of, start)) \
        else start


def reordered(problem: Problem, schedule: Schedule, method: str) -> Schedule:
    """``schedule``, or the list schedule on its devices when that is shorter.

    The list schedule keeps every task on its device and takes them in HEFT's order
    (:func:`~schedkit.problem.graph.upward_rank`, insertion into idle gaps): an expanded
    coarse schedule runs whole groups one after the other, and where transfers are slow a
    member that feeds another device waits behind its group's other members.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import to_schedule
    >>> p = Problem.load("examples/tiny.yaml")
    >>> late = to_schedule(p, [0, 0, 0, 0, 0, 1], [1.0, 2.0, 3.5, 5.0, 5.5, 7.0], "late")
    >>> best = reordered(p, late, "again")
    >>> round(best.makespan, 5)
    4.51625
    >>> reordered(p, best, "again") is best      # no shorter: the schedule itself
    True
    """
    devices, starts = list_schedule(problem, upward_rank(problem), device_of=placement_indices(problem, schedule))
    listed = to_schedule(problem, devices, starts, method)
    return listed if shorter(listed.makespan, schedule.makespan) else schedule
