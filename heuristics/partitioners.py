"""Partitioners of Mayer et al. (2017): map every task to a device, before scheduling.

A partitioner returns ``device_of``, the device of each task; a per-device scheduler
(:mod:`schedkit.heuristics.device_schedulers`) and the event simulator
(:func:`schedkit.timing.events.simulate`) then decide when each task runs.

Every partitioner places *units* (a collocation group, or one task) through a
:class:`~schedkit.heuristics.placement.Placer`, which only accepts feasible choices
(allowed devices, memory, links) and, should the greedy pass get stuck, runs the
partitioner again in a safe mode that never does; so a partitioner raises
:class:`~schedkit.errors.ProblemError` only when no feasible placement exists (see
:mod:`schedkit.heuristics.placement`).

Definitions: **speed**, **total rank** (upward plus downward rank, HEFT's mean costs of
:mod:`schedkit.problem.graph`) and **critical path** are those of
:mod:`schedkit.heuristics.measures`; equal ranks, within rounding, go to the lower index.
**Speed-proportional quotas** (:func:`quota_walk`): the
mean costs of all units split over the devices in proportion to their speed; walking
through the units in order, a unit joins the batch of the device whose quota contains
the middle of its cost (when that device cannot take it, the next devices in the order
are tried).

Partitioners:

``hash``
    A keyed hash of the task name (key: ``seed``) picks a device with probability
    proportional to its speed among the unit's allowed devices, so that the expected
    load is proportional to speed (TensorFlow-style hash placement made load-aware).
``batch_split``
    Units sorted by decreasing total rank (equal ranks, within rounding, in file order),
    cut into consecutive batches of speed-proportional quotas, one per device; the first
    batch goes to the fastest device, the next to the second fastest, and so on.
``critical_path``
    All critical-path tasks (with their collocation groups) on the single device that
    runs them fastest among the devices that can take them all (when none can, each on
    its own fastest device); every other unit, in topological order, to the least loaded
    device: the one where its assigned work plus the unit's duration is smallest.
``mite``
    Units in topological order, each to the device of least score
    ``(1 + M)(1 + I)(1 + T)(1 + E)``, each term in ``[0, 1]`` (``1 +`` keeps a zero term
    from wiping out the others):
    **M**emory: the fraction of the device's capacity used once the unit is added (0 when
    unlimited); **I**mportance: ``importance * (1 - speed / fastest feasible speed)`` with
    importance = the unit's largest total rank / the critical path length, so tasks near
    the critical path go to fast devices and others do not care; **T**raffic: the transfer
    time the unit's edges to already placed neighbours would take (each edge its own
    size, over the actual pair of devices: ``problem.comm_time``), divided by the largest
    such value over the feasible devices; **E**xecution time: the device's assigned work
    plus the unit's duration on it, divided by the largest such value. Equal scores (within
    rounding, :func:`~schedkit.numerics.shorter`) go to the lower device index.
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
from typing import Callable, Sequence

import numpy as np

from schedkit.heuristics.measures import critical_path_tasks, decreasing, device_speeds, total_rank
from schedkit.heuristics.placement import Placer, partition
from schedkit.numerics import fits, shorter, time_tolerance
from schedkit.problem import Problem
from schedkit.problem.graph import mean_costs

__all__ = ["PARTITIONERS", "hash_partition", "batch_split", "critical_path", "mite", "dfs"]


# ---------------------------------------------------------------------- MITE's traffic
class _TrafficRows:
    """Transfer times of one tensor between a device and every device, by ``problem.comm_time``.

    MITE weighs each candidate device by the transfer times of a unit's edges to its
    placed neighbours; a producer's output goes to many consumers, so a row per (size,
    device) is computed once and shared. Entries towards unlinked devices are ``inf``
    (such devices are never candidates).
    """

    def __init__(self, problem: Problem):
        self.p = problem
        self.devices = range(len(problem.devices))
        self._in: dict[tuple[float, int], list[float]] = {}
        self._out: dict[tuple[float, int], list[float]] = {}

    def inbound(self, size: float, source: int) -> list[float]:
        """``row[d]``: time to send ``size`` from ``source`` to ``d``."""
        # (A tensor with its own times is equal to a plain size as a key: keyed by itself.)
        key = (size if size.__class__ is float else id(size), source)
        row = self._in.get(key)
        if row is None:
            p = self.p
            row = self._in[key] = [p.comm_time(size, source, d) if p.linked[source][d]
                                            else math.inf for d in self.devices]
        return row

    def sums(self, inbound: list, outbound: list) -> list[float]:
        """Per device ``d``, the exact sum (``math.fsum``) of the times of ``inbound``
        ``(size, source)`` tensors into ``d`` and ``outbound`` ``(size, target)`` tensors
        out of ``d``: the rows of :meth:`inbound` and :meth:`outbound`, made on the arrays
        (an edge with its own times by those methods)."""
        a = self.p.arrays
        parts = []
        for pairs, into in ((inbound, True), (outbound, False)):
            if not pairs:
                continue
            size = np.array([s for s, _ in pairs], dtype=np.float64)
            end = np.array([k for _, k in pairs], dtype=np.int64)
            inv = a.inv_bandwidth[end] if into else a.inv_bandwidth[:, end].T
            latency = a.latency[end] if into else a.latency[:, end].T
            linked = a.linked[end] if into else a.linked[:, end].T
            rows = size[:, None] * inv  # comm_time's product and sum, in its order
            rows += latency
            rows[np.arange(len(pairs)), end] = 0.0  # (nothing moves on one device)
            rows[~linked] = math.inf
            for k, (s, device) in enumerate(pairs):
                if getattr(s, "times", None):
                    rows[k] = self.inbound(s, device) if into else self.outbound(s, device)
            parts.append(rows)
        table = parts[0] if len(parts) == 1 else np.vstack(parts)
        return list(map(math.fsum, table.T.tolist()))

    def outbound(self, size: float, target: int) -> list[float]:
        """``row[d]``: time to send ``size`` from ``d`` to ``target``."""
        key = (size if size.__class__ is float else id(size), target)
        row = self._out.get(key)
        if row is None:
            p = self.p
            row = self._out[key] = [p.comm_time(size, d, target) if p.linked[d][target]
                                             else math.inf for d in self.devices]
        return row


def _unit_key(seed: int, name: str) -> float:
    digest = hashlib.blake2b(name.encode(), digest_size=8, key=str(seed).encode()).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64


def quota_walk(placer: Placer, order: Sequence[int], devices: Sequence[int],
               speeds: Sequence[float], weight: Sequence[float]) -> None:
    """Place the units of ``order`` in consecutive batches over ``devices``, by speed.

    Each device's quota of the total ``weight`` is proportional to its speed; walking
    through ``order``, a unit joins the batch of the device whose quota contains the
    middle of its weight (when that device cannot take it, the next devices are tried).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
    ...                        "tasks": [{"name": f"t{i}", "work": 1} for i in range(4)]})
    >>> placer = Placer(p, "example")
    >>> quota_walk(placer, [0, 1, 2, 3], [1, 0], [3.0, 1.0], [1.0] * 4)   # b first, a 3x faster
    >>> placer.device_of
    [1, 0, 0, 0]
    """
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
    return partition(problem, "hash", _hash, seed=seed)


def _hash(placer: Placer, seed: int) -> list[int]:
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
    return partition(problem, "batch_split", _batch_split)


def _batch_split(placer: Placer) -> list[int]:
    p = placer.p
    cost, _ = mean_costs(p)
    rank = total_rank(p)
    unit_rank = [max(rank[i] for i in members) for members in placer.units]
    weight = [sum(cost[i] for i in members) for members in placer.units]
    order = decreasing(list(range(len(placer.units))), unit_rank,
                        time_tolerance(max(unit_rank, default=0.0)))
    speeds = device_speeds(p)
    devices = sorted(range(len(p.devices)), key=lambda d: (-speeds[d], d))
    quota_walk(placer, order, devices, speeds, weight)
    return placer.result()


def critical_path(problem: Problem) -> list[int]:
    """Critical-path partitioning: the critical path on its fastest device, the rest balanced.

    Examples
    --------
    >>> from schedkit import Problem
    >>> critical_path(Problem.load("examples/tiny.yaml"))
    [0, 0, 0, 0, 0, 1]
    """
    return partition(problem, "critical_path", _critical_path)


def _critical_path(placer: Placer) -> list[int]:
    p = placer.p
    path_units = placer.unit_order(critical_path_tasks(p))
    free_units = [u for u in path_units if not placer.placed(u)]
    best = None
    for d in range(len(p.devices)):
        if not all(d in placer.allowed[u] for u in free_units):
            continue
        if not fits(placer.used[d] + sum(placer.memory[u] for u in free_units), placer.capacity[d]):
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
    return partition(problem, "mite", _mite)


def _mite(placer: Placer) -> list[int]:
    p = placer.p
    total = total_rank(p)
    longest = max(total) if total else 0.0
    speeds = device_speeds(p)
    dev = placer.device_of
    traffic_rows = _TrafficRows(p)
    for u in placer.unit_order(p.topological_order):
        if placer.placed(u):
            continue
        options = placer.feasible(u)
        if not options:
            placer.place(u)  # raises the error naming the unit
        members = placer.units[u]
        importance = max(total[i] for i in members) / longest if longest > 0 else 0.0
        fastest = max(speeds[d] for d in options) or 1.0
        inbound, outbound = [], []
        for i in members:
            for q, size in p.preds[i]:
                if size and dev[q] >= 0 and placer.unit_of[q] != u:
                    inbound.append((size, dev[q]))
            for q, size in p.succs[i]:
                if size and dev[q] >= 0 and placer.unit_of[q] != u:
                    outbound.append((size, dev[q]))
        per_device = traffic_rows.sums(inbound, outbound) if inbound or outbound else None
        traffic = []
        finish = []
        for d in options:
            t = per_device[d] if per_device else 0.0
            traffic.append(t)
            finish.append(placer.load[d] + placer.duration(u, d))
        max_traffic = max(traffic)
        max_finish = max(finish)
        best = None
        for k, d in enumerate(options):
            cap = placer.capacity[d]
            used = placer.used[d] + placer.memory[u]
            memory = used / cap if math.isfinite(cap) and cap > 0 else 0.0
            speed_term = importance * (1.0 - speeds[d] / fastest)
            traffic_term = traffic[k] / max_traffic if max_traffic > 0 else 0.0
            exec_term = finish[k] / max_finish if max_finish > 0 else 0.0
            score = (1 + memory) * (1 + speed_term) * (1 + traffic_term) * (1 + exec_term)
            if best is None or shorter(score, best[0]):
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
    return partition(problem, "dfs", _dfs)


def _dfs(placer: Placer) -> list[int]:
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
    quota_walk(placer, placer.unit_order(order), list(range(len(p.devices))), speeds, weight)
    return placer.result()


PARTITIONERS: dict[str, Callable[..., list[int]]] = {
    "hash": hash_partition,
    "batch_split": batch_split,
    "critical_path": critical_path,
    "mite": mite,
    "dfs": dfs,
}
"""Partitioner name to function ``(problem, **options) -> device_of``."""
