"""Partitioners of Mayer et al. (2017): map every task to a device, before scheduling.

A partitioner returns ``device_of``, the device of each task; a per-device scheduler
(:mod:`schedkit.heuristics.device_schedulers`) and the event simulator
(:func:`schedkit.timing.events.simulate`) then decide when each task runs.

Every partitioner places *units*: a collocation group (``colocate``) is one unit that
may only go to a device all its tasks may use, with the sum of their memory and
durations; any other task is a unit of its own. A unit goes to a device only when the
device is allowed for all its tasks (durations, pins), its free static memory holds
the unit, and the unit's already placed neighbours sit on linked devices. Units with
a single allowed device are placed first. When a partitioner's preferred devices are
all excluded, the unit goes to the feasible device that would finish its assigned work
first.

Should this greedy pass get stuck (memory used up, or a unit cut off from its
neighbours' devices), the partitioner runs again in *safe* mode: a backtracking search
(units with fewer devices and more memory first, best fit) first finds one complete
feasible placement; the partitioner's choices are then accepted only while the
remaining units can still be placed (checked against that placement, or by a new
search within a node budget), otherwise the unit follows the known placement. So a
partitioner raises :class:`~schedkit.errors.ProblemError` only when no feasible
placement exists (or the first search, 200 000 nodes plus 10 per unit, runs out on a
huge, nearly full instance); the error names the task or collocation group when one
alone is the cause.

Definitions (``n`` tasks, ``m`` devices):

- **speed** of a device: the mean, over the tasks that may run on it and elsewhere, of
  ``min_duration[i] / durations[i][d]`` -- 1 for a device that is the fastest for every
  task; for problems given as ``work`` and ``speed`` this is ``speed / max speed``.
- **mean costs** (as HEFT, Topcuoglu et al. 2002): a task's mean duration over its allowed
  devices; an edge's mean transfer time over the linked pairs of distinct devices of its
  ends. **upward rank**: mean cost plus the longest mean-cost path after the task;
  **downward rank**: the longest mean-cost path before it; **total rank** = upward +
  downward, the length of the longest path through the task. The **critical path**
  starts at the task of largest upward rank and follows, from each task, the successor
  that attains its upward rank.
- **speed-proportional quotas**: the mean costs of all units split over the devices in
  proportion to their speed; walking through the units in order, a unit joins the batch
  of the device whose quota contains the middle of its cost (when that device cannot
  take it, the next devices in the order are tried).

Partitioners:

``hash``
    A keyed hash of the task name (key: ``seed``) picks a device with probability
    proportional to its speed among the unit's allowed devices, so that the expected
    load is proportional to speed (TensorFlow-style hash placement made load-aware).
``batch_split``
    Units sorted by decreasing total rank, cut into consecutive batches, one per device,
    of speed-proportional quotas; the first batch goes to the fastest device, the next to
    the second fastest, and so on.
``critical_path``
    All critical-path tasks (with their collocation groups) on the single device that
    runs them fastest among the devices that can take them all (when none can, each on
    its own fastest device); every other unit, in
    topological order, to the least loaded device: the one where its assigned work plus
    the unit's duration is smallest.
``mite``
    Units in topological order, each to the device of least score
    ``(1 + M)(1 + I)(1 + T)(1 + E)``, each term in ``[0, 1]`` (``1 +`` keeps a zero term
    from wiping out the others):
    **M**emory: the fraction of the device's capacity used once the unit is added (0 when
    unlimited); **I**mportance: ``importance * (1 - speed / fastest feasible speed)`` with
    importance = the unit's largest total rank / the critical path length, so tasks near
    the critical path go to fast devices and others do not care; **T**raffic: the transfer
    time the unit's edges to already placed neighbours would take (each edge its own
    size, over the actual pair of devices), divided by the largest such value over the
    feasible devices; **E**xecution time: the device's assigned work plus the unit's
    duration on it, divided by the largest such value.
``dfs``
    Units in depth-first preorder (from the tasks without predecessors, in index order,
    successors in index order) fill the devices in index order, each up to its
    speed-proportional quota, so that chains of dependent tasks share a device.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> critical_path(p)          # everything on the gpu but 'sample', which only runs on the cpu
[0, 0, 0, 0, 0, 1]
>>> sorted(PARTITIONERS)
['batch_split', 'critical_path', 'dfs', 'hash', 'mite']
"""

from __future__ import annotations

import hashlib
import math
from typing import Callable, Iterable, Sequence

from schedkit.errors import ProblemError
from schedkit.problem import Problem

__all__ = ["PARTITIONERS", "hash_partition", "batch_split", "critical_path", "mite", "dfs",
           "device_speeds", "mean_costs", "ranks", "critical_path_tasks"]

_EPS = 1e-9


# ---------------------------------------------------------------------- shared definitions
def device_speeds(problem: Problem) -> list[float]:
    """Relative speed of each device in ``(0, 1]`` (0 for a device no task may use).

    The mean of ``min_duration[i] / durations[i][d]`` over the tasks that may run on
    ``d`` and on another device (over all tasks of ``d`` when there are none).

    Examples
    --------
    >>> from schedkit import Problem
    >>> [round(s, 3) for s in device_speeds(Problem.load("examples/tiny.yaml"))]  # gpu0, cpu
    [1.0, 0.194]
    """
    p = problem
    m = len(p.devices)
    # Tasks bound to one device say nothing about its speed: use them only when no other
    # task may run there.
    total = [[0.0, 0.0] for _ in range(m)]
    count = [[0, 0] for _ in range(m)]
    for i, table in enumerate(p.durations):
        best = p.min_duration[i]
        kind = 0 if len(table) > 1 else 1
        for d, t in table.items():
            total[d][kind] += best / t if t > 0 else 1.0
            count[d][kind] += 1
    out = []
    for d in range(m):
        kind = 0 if count[d][0] else 1
        out.append(total[d][kind] / count[d][kind] if count[d][kind] else 0.0)
    return out


def mean_costs(problem: Problem) -> tuple[list[float], list[float]]:
    """Mean task durations and mean edge transfer times (in ``problem.edges`` order).

    An edge's mean transfer time averages ``comm_time`` over the linked ordered pairs of
    distinct allowed devices of its two ends (0 when there is none, or no data).

    Examples
    --------
    >>> from schedkit import Problem
    >>> cost, comm = mean_costs(Problem.load("examples/tiny.yaml"))
    >>> cost[0], round(comm[0], 4)       # embed: (0.4 + 1.8) / 2; 4e6 / 1.6e7 + 0.01
    (1.1, 0.26)
    """
    p = problem
    cost = [sum(t.values()) / len(t) for t in p.durations]
    # Most tasks share a few allowed-device sets: number the sets, cache per pair of sets.
    set_id: dict[tuple, int] = {}
    kind = [set_id.setdefault(a, len(set_id)) for a in p.allowed]
    sets = list(set_id)
    means: dict[tuple[int, int], tuple[float, float]] = {}
    comm = []
    for i, j, size in p.edges:
        if not size:
            comm.append(0.0)
            continue
        key = (kind[i], kind[j])
        if key not in means:
            pairs = [(u, v) for u in sets[key[0]] for v in sets[key[1]] if u != v and p.linked[u][v]]
            k = len(pairs) or 1
            means[key] = (sum(p.inv_bandwidth[u][v] for u, v in pairs) / k,
                          sum(p.latency[u][v] for u, v in pairs) / k)
        inv_bw, lat = means[key]
        comm.append(size * inv_bw + lat if inv_bw or lat else 0.0)
    return cost, comm


def ranks(problem: Problem) -> tuple[list[float], list[float]]:
    """Upward and downward ranks with mean costs (see the module docstring).

    Examples
    --------
    >>> from schedkit import Problem
    >>> up, down = ranks(Problem.load("examples/tiny.yaml"))
    >>> round(up[0] + down[0], 4) == round(up[-1] + down[-1], 4)   # both on the critical path
    True
    """
    _, _, up, down = _rank_data(problem)
    return up, down


def _rank_data(problem: Problem) -> tuple[list[float], list[float], list[float], list[float]]:
    """Mean task costs, mean edge costs, upward and downward ranks."""
    p = problem
    cost, comm = mean_costs(p)
    n = len(p.tasks)
    out_edges: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    in_edges: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (i, j, _), c in zip(p.edges, comm):
        out_edges[i].append((j, c))
        in_edges[j].append((i, c))
    order = p.topological_order
    up = [0.0] * n
    for i in reversed(order):
        up[i] = cost[i] + max((c + up[j] for j, c in out_edges[i]), default=0.0)
    down = [0.0] * n
    for j in order:
        down[j] = max((down[i] + cost[i] + c for i, c in in_edges[j]), default=0.0)
    return cost, comm, up, down


def critical_path_tasks(problem: Problem) -> list[int]:
    """The critical path with mean costs, from its first task to its last.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [p.tasks[i] for i in critical_path_tasks(p)]
    ['embed', 'mlp', 'norm', 'logits', 'sample']
    """
    _, comm, up, _ = _rank_data(problem)
    return _path(problem, comm, up)


def _path(p: Problem, comm: list[float], up: list[float]) -> list[int]:
    n = len(p.tasks)
    out_edges: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (i, j, _), c in zip(p.edges, comm):
        out_edges[i].append((j, c))
    entries = [i for i in range(n) if not p.preds[i]]
    i = max(entries, key=lambda k: (up[k], -k))
    path = [i]
    while out_edges[i]:
        i = max(out_edges[i], key=lambda e: (e[1] + up[e[0]], -e[0]))[0]
        path.append(i)
    return path


def _unit_key(seed: int, name: str) -> float:
    digest = hashlib.blake2b(name.encode(), digest_size=8, key=str(seed).encode()).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64


# ---------------------------------------------------------------------- placement state
class _NoRoom(ProblemError):
    """The greedy placement is stuck (a feasible placement may still exist)."""


#: Search nodes (unit placements tried) for the first feasibility search, per unit, and in all
#: for the searches made when a partitioner's choice departs from the known completion.
_FIRST_SEARCH_NODES = 200_000
_DEPARTURE_NODES = 50_000


class _Placer:
    """Units, their allowed devices, and the free memory and load of every device.

    In ``safe`` mode the placer first searches a complete feasible placement (the
    *completion*) and afterwards accepts a partitioner's choice only when the units not
    yet placed can still be completed: it never gets stuck.
    """

    def __init__(self, problem: Problem, who: str, safe: bool = False):
        p = problem
        self.p, self.who = p, who
        n, m = len(p.tasks), len(p.devices)
        self.unit_of = [-1] * n
        self.units: list[list[int]] = []
        self.label: list[str] = []
        for group, members in p.colocate_groups.items():
            for i in members:
                self.unit_of[i] = len(self.units)
            self.units.append(sorted(members))
            self.label.append(f"collocation group '{group}'")
        for i in range(n):
            if self.unit_of[i] < 0:
                self.unit_of[i] = len(self.units)
                self.units.append([i])
                self.label.append(f"task '{p.tasks[i]}'")
        # Units in the order of their first task.
        order = sorted(range(len(self.units)), key=lambda u: self.units[u][0])
        self.units = [self.units[u] for u in order]
        self.label = [self.label[u] for u in order]
        for u, members in enumerate(self.units):
            for i in members:
                self.unit_of[i] = u
        self.allowed: list[tuple[int, ...]] = []
        self.memory: list[float] = []
        for u, members in enumerate(self.units):
            common = set(p.allowed[members[0]])
            for i in members[1:]:
                common &= set(p.allowed[i])
            if not common:
                raise ProblemError(f"{self.label[u]}: its tasks share no device they may all run on")
            self.allowed.append(tuple(sorted(common)))
            self.memory.append(sum(p.task_memory[i] for i in members))
            if not any(self.memory[u] <= p.device_memory[d] * (1 + _EPS) + _EPS for d in common):
                raise ProblemError(f"{self.label[u]}: needs {self.memory[u]:g} of memory, more than "
                                   f"any device it may run on holds")
        self.allowed_set = [frozenset(a) for a in self.allowed]
        self.device_of = [-1] * n
        self.free = list(p.device_memory)
        self.load = [0.0] * m
        self.all_linked = all(all(row) for row in p.linked)
        # Units with one possible device are not a choice: place them first.
        for u, allowed in enumerate(self.allowed):
            if len(allowed) == 1:
                d = allowed[0]
                if self.memory[u] > self.free[d] * (1 + _EPS) + _EPS:
                    raise ProblemError(f"{self.label[u]}: device {p.devices[d]}, the only one it may "
                                       f"use, has no memory left for it")
                self.assign(u, d)
        self.safe = safe
        self.completion: dict[int, int] = {}
        if safe:
            found = self._search(_FIRST_SEARCH_NODES + 10 * len(self.units))
            if found is False:
                raise ProblemError(f"no placement of the tasks respects their devices, pins, "
                                   f"collocation groups, memory capacities and links ({who})")
            if found is None:
                raise ProblemError(f"{who}: found no placement that respects memory capacities and "
                                   f"links (search limit reached)")
            self._set_completion(found)
            self.departure_nodes = _DEPARTURE_NODES

    def placed(self, u: int) -> bool:
        return self.device_of[self.units[u][0]] >= 0

    def duration(self, u: int, d: int) -> float:
        members = self.units[u]
        if len(members) == 1:
            return self.p.durations[members[0]][d]
        return sum(self.p.durations[i][d] for i in members)

    def fits(self, u: int, d: int) -> bool:
        """Whether unit ``u`` may go to device ``d`` now (devices, memory, links)."""
        return d in self.allowed_set[u] and self._room(u, d)

    def _room(self, u: int, d: int) -> bool:
        """Memory and links (``d`` known to be allowed)."""
        if self.memory[u] > self.free[d] * (1 + _EPS) + _EPS:
            return False
        if self.all_linked:
            return True
        p, dev = self.p, self.device_of
        linked = p.linked
        for i in self.units[u]:
            for q, size in p.preds[i]:
                if size and dev[q] >= 0 and not linked[dev[q]][d]:
                    return False
            for q, size in p.succs[i]:
                if size and dev[q] >= 0 and not linked[d][dev[q]]:
                    return False
        return True

    def feasible(self, u: int) -> list[int]:
        return [d for d in self.allowed[u] if self._room(u, d)]

    def assign(self, u: int, d: int) -> None:
        for i in self.units[u]:
            self.device_of[i] = d
        self.free[d] -= self.memory[u]
        self.load[d] += self.duration(u, d)

    def unassign(self, u: int, d: int) -> None:
        for i in self.units[u]:
            self.device_of[i] = -1
        self.free[d] += self.memory[u]
        self.load[d] -= self.duration(u, d)

    def _search(self, budget: int) -> dict[int, int] | bool | None:
        """Backtracking search placing every unplaced unit: the placement, False or None.

        ``False``: no placement exists; ``None``: the search stopped after ``budget`` nodes.
        Units with fewer devices and more memory go first; a unit tries the fitting devices
        with the least free memory first (best fit). The state is restored on return.
        """
        todo = [u for u in range(len(self.units)) if not self.placed(u)]
        todo.sort(key=lambda u: (len(self.allowed[u]), -self.memory[u], u))
        stack: list[tuple[int, int]] = []
        choices: list[list] = []
        nodes = 0
        result: dict[int, int] | bool | None = False
        while True:
            k = len(stack)
            if k == len(todo):
                result = dict(stack)
                break
            if len(choices) == k:
                u = todo[k]
                choices.append([sorted(self.feasible(u), key=lambda d: (self.free[d], d)), 0])
            options, pos = choices[k]
            if pos >= len(options):
                choices.pop()
                if not stack:
                    break
                self.unassign(*stack.pop())
                continue
            nodes += 1
            if nodes > budget:
                result = None
                break
            choices[k][1] = pos + 1
            self.assign(todo[k], options[pos])
            stack.append((todo[k], options[pos]))
        for u, d in reversed(stack):
            self.unassign(u, d)
        self.nodes_used = nodes
        return result

    def _set_completion(self, completion: dict[int, int]) -> None:
        self.completion = completion
        self.reserved = [0.0] * len(self.p.devices)
        for u, d in completion.items():
            self.reserved[d] += self.memory[u]

    def _keeps_completion(self, u: int, d: int) -> bool:
        """Whether the completion of the other units stays feasible with ``u`` on ``d``."""
        if self.memory[u] > self.free[d] - self.reserved[d] + _EPS * (1 + abs(self.free[d])):
            return False
        if self.all_linked:
            return True
        p, linked, plan = self.p, self.p.linked, self.completion
        for i in self.units[u]:
            for q, size in p.preds[i]:
                c = plan.get(self.unit_of[q])
                if size and c is not None and self.unit_of[q] != u and not linked[c][d]:
                    return False
            for q, size in p.succs[i]:
                c = plan.get(self.unit_of[q])
                if size and c is not None and self.unit_of[q] != u and not linked[d][c]:
                    return False
        return True

    def _accept(self, u: int, d: int) -> bool:
        """Safe mode: place ``u`` on ``d`` if the other units can still be placed."""
        planned = self.completion.get(u)
        if planned == d or self._keeps_completion(u, d):
            del self.completion[u]
            self.reserved[planned] -= self.memory[u]
            self.assign(u, d)
            return True
        if self.departure_nodes <= 0:
            return False
        self.assign(u, d)
        found = self._search(min(self.departure_nodes, 10 * len(self.units) + 1000))
        self.departure_nodes -= self.nodes_used
        if isinstance(found, dict):
            self._set_completion(found)
            return True
        self.unassign(u, d)
        return False

    def place(self, u: int, preferred: Iterable[int] = ()) -> int:
        """Put ``u`` on the first feasible device of ``preferred``, else on the least loaded.

        The least loaded device is the feasible one where the assigned work plus the
        unit's duration is smallest.
        """
        if self.placed(u):
            return self.device_of[self.units[u][0]]
        tried = set()
        for d in preferred:
            if d not in tried and self.fits(u, d):
                tried.add(d)
                if self._take(u, d):
                    return d
        rest = sorted((d for d in self.feasible(u) if d not in tried),
                      key=lambda k: (self.load[k] + self.duration(u, k), k))
        for d in rest:
            if self._take(u, d):
                return d
        raise _NoRoom(f"{self.who}: no device left for {self.label[u]} (memory used up, "
                      f"or no link to the devices of its neighbours)")

    def _take(self, u: int, d: int) -> bool:
        if not self.safe:
            self.assign(u, d)
            return True
        return self._accept(u, d)

    def unit_order(self, tasks: Iterable[int]) -> list[int]:
        """Units in the order their first task appears in ``tasks``."""
        seen = set()
        out = []
        for i in tasks:
            u = self.unit_of[i]
            if u not in seen:
                seen.add(u)
                out.append(u)
        return out

    def result(self) -> list[int]:
        for u in range(len(self.units)):
            self.place(u)
        return list(self.device_of)


def _partition(problem: Problem, who: str, body: Callable[..., list[int]], **options) -> list[int]:
    """Run a partitioner greedily; when it gets stuck, again with a safe placer."""
    try:
        return body(_Placer(problem, who), **options)
    except _NoRoom:
        return body(_Placer(problem, who, safe=True), **options)


def _quota_walk(placer: _Placer, order: Sequence[int], devices: Sequence[int],
                speeds: Sequence[float], weight: Sequence[float]) -> None:
    """Place ``order`` in consecutive batches over ``devices`` with speed-proportional quotas."""
    devices = [d for d in devices if speeds[d] > 0] or list(devices)
    total = sum(weight[u] for u in order)
    if total <= 0:
        weight = [1.0] * len(weight)
        total = float(len(order))
    share = sum(speeds[d] for d in devices) or 1.0
    bounds = []
    acc = 0.0
    for d in devices:
        acc += total * (speeds[d] / share if share else 1 / len(devices))
        bounds.append(acc)
    k = 0
    done = 0.0
    for u in order:
        middle = done + weight[u] / 2
        while k < len(devices) - 1 and middle > bounds[k]:
            k += 1
        placer.place(u, devices[k:] + devices[:k])
        done += weight[u]


# ---------------------------------------------------------------------- partitioners
def hash_partition(problem: Problem, *, seed: int = 0) -> list[int]:
    """Hash partitioning: a keyed hash of each task's name picks a speed-weighted device.

    Parameters
    ----------
    problem : Problem
    seed : int
        Key of the hash; another seed gives another spread.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> hash_partition(p)[-1] == p.device_index["cpu"]    # 'sample' only runs on the cpu
    True
    """
    return _partition(problem, "hash", _hash, seed=seed)


def _hash(placer: _Placer, seed: int) -> list[int]:
    problem = placer.p
    speeds = device_speeds(problem)
    for u, members in enumerate(placer.units):
        if placer.placed(u):
            continue
        allowed = list(placer.allowed[u])
        weights = [speeds[d] for d in allowed]
        if sum(weights) <= 0:
            weights = [1.0] * len(allowed)
        name = problem.spec.tasks[members[0]].colocate if len(members) > 1 else problem.tasks[members[0]]
        x = _unit_key(seed, name) * sum(weights)
        k = 0
        while k < len(allowed) - 1 and x >= weights[k]:
            x -= weights[k]
            k += 1
        placer.place(u, allowed[k:] + allowed[:k])
    return placer.result()


def batch_split(problem: Problem) -> list[int]:
    """Batch split: units by decreasing total rank, in batches, fastest devices first.

    Examples
    --------
    >>> from schedkit import Problem
    >>> batch_split(Problem.load("examples/tiny.yaml"))   # attn falls in the cpu's batch
    [0, 1, 0, 0, 0, 1]
    """
    return _partition(problem, "batch_split", _batch_split)


def _batch_split(placer: _Placer) -> list[int]:
    p = placer.p
    cost, _, up, down = _rank_data(p)
    rank = [up[u] + down[u] for u in range(len(p.tasks))]
    unit_rank = [max(rank[i] for i in members) for members in placer.units]
    weight = [sum(cost[i] for i in members) for members in placer.units]
    order = sorted(range(len(placer.units)), key=lambda u: (-unit_rank[u], u))
    speeds = device_speeds(p)
    devices = sorted(range(len(p.devices)), key=lambda d: (-speeds[d], d))
    _quota_walk(placer, order, devices, speeds, weight)
    return placer.result()


def critical_path(problem: Problem) -> list[int]:
    """Critical-path partitioning: the critical path on its fastest device, the rest balanced.

    Examples
    --------
    >>> from schedkit import Problem
    >>> critical_path(Problem.load("examples/tiny.yaml"))
    [0, 0, 0, 0, 0, 1]
    """
    return _partition(problem, "critical_path", _critical_path)


def _critical_path(placer: _Placer) -> list[int]:
    p = placer.p
    _, comm, up, _ = _rank_data(p)
    path_units = placer.unit_order(_path(p, comm, up))
    free_units = [u for u in path_units if not placer.placed(u)]
    best = None
    for d in range(len(p.devices)):
        if not all(d in placer.allowed[u] for u in free_units):
            continue
        if sum(placer.memory[u] for u in free_units) > placer.free[d] * (1 + _EPS) + _EPS:
            continue
        score = sum(placer.duration(u, d) for u in free_units)
        if best is None or score < best[0]:
            best = (score, d)
    for u in free_units:
        if best is not None and placer.fits(u, best[1]):
            placer.place(u, [best[1]])
        else:  # no single device takes the whole path: each task to its fastest device
            placer.place(u, sorted(placer.allowed[u], key=lambda d: (placer.duration(u, d), d)))
    for u in placer.unit_order(p.topological_order):
        placer.place(u)  # least loaded: smallest assigned work + own duration
    return placer.result()


def mite(problem: Problem) -> list[int]:
    """MITE: each unit to the device of least memory x importance x traffic x execution score.

    Examples
    --------
    >>> from schedkit import Problem
    >>> mite(Problem.load("examples/tiny.yaml"))
    [0, 0, 0, 0, 0, 1]
    """
    return _partition(problem, "mite", _mite)


def _mite(placer: _Placer) -> list[int]:
    p = placer.p
    _, _, up, down = _rank_data(p)
    total = [a + b for a, b in zip(up, down)]
    longest = max(total) if total else 0.0
    speeds = device_speeds(p)
    dev = placer.device_of
    inv_bw, lat = p.inv_bandwidth, p.latency
    for u in placer.unit_order(p.topological_order):
        if placer.placed(u):
            continue
        options = placer.feasible(u)
        if not options:
            placer.place(u)  # raises the error naming the unit
        members = placer.units[u]
        importance = max(total[i] for i in members) / longest if longest > 0 else 0.0
        fastest = max(speeds[d] for d in options) or 1.0
        # Data from and to placed neighbours, summed per neighbour device.
        inbound: dict[int, list[float]] = {}
        outbound: dict[int, list[float]] = {}
        for i in members:
            for q, size in p.preds[i]:
                if size and dev[q] >= 0 and placer.unit_of[q] != u:
                    acc = inbound.setdefault(dev[q], [0.0, 0.0])
                    acc[0] += size
                    acc[1] += 1
            for q, size in p.succs[i]:
                if size and dev[q] >= 0 and placer.unit_of[q] != u:
                    acc = outbound.setdefault(dev[q], [0.0, 0.0])
                    acc[0] += size
                    acc[1] += 1
        traffic = []
        finish = []
        for d in options:
            t = 0.0
            for v, (size, count) in inbound.items():
                if v != d:
                    t += size * inv_bw[v][d] + count * lat[v][d]
            for v, (size, count) in outbound.items():
                if v != d:
                    t += size * inv_bw[d][v] + count * lat[d][v]
            traffic.append(t)
            finish.append(placer.load[d] + placer.duration(u, d))
        max_traffic = max(traffic)
        max_finish = max(finish)
        best = None
        for k, d in enumerate(options):
            cap = p.device_memory[d]
            used = cap - placer.free[d] + placer.memory[u]
            memory = used / cap if math.isfinite(cap) and cap > 0 else 0.0
            speed_term = importance * (1.0 - speeds[d] / fastest)
            traffic_term = traffic[k] / max_traffic if max_traffic > 0 else 0.0
            exec_term = finish[k] / max_finish if max_finish > 0 else 0.0
            score = (1 + memory) * (1 + speed_term) * (1 + traffic_term) * (1 + exec_term)
            if best is None or score < best[0] - 1e-12:
                best = (score, d)
        placer.place(u, [best[1]])
    return placer.result()


def dfs(problem: Problem) -> list[int]:
    """DFS partitioning: units in depth-first order fill the devices one after another.

    Examples
    --------
    >>> from schedkit import Problem
    >>> dfs(Problem.load("examples/tiny.yaml"))
    [0, 0, 0, 0, 0, 1]
    """
    return _partition(problem, "dfs", _dfs)


def _dfs(placer: _Placer) -> list[int]:
    p = placer.p
    n = len(p.tasks)
    seen = [False] * n
    order = []
    for source in range(n):
        if p.preds[source] or seen[source]:
            continue
        stack = [source]
        while stack:
            i = stack.pop()
            if seen[i]:
                continue
            seen[i] = True
            order.append(i)
            stack.extend(sorted((j for j, _ in p.succs[i] if not seen[j]), reverse=True))
    cost, _ = mean_costs(p)
    weight = [sum(cost[i] for i in members) for members in placer.units]
    speeds = device_speeds(p)
    _quota_walk(placer, placer.unit_order(order), list(range(len(p.devices))), speeds, weight)
    return placer.result()


PARTITIONERS: dict[str, Callable[..., list[int]]] = {
    "hash": hash_partition,
    "batch_split": batch_split,
    "critical_path": critical_path,
    "mite": mite,
    "dfs": dfs,
}
"""Partitioner name to function ``(problem, **options) -> device_of``."""
