"""Method ``chain_split``: contiguous splits of the graph onto devices that fit its memory.

Tarnawski et al. (NeurIPS 2020) place chain-like DNN graphs by splitting a topological
order into contiguous stretches, one per device, by dynamic programming. Here the order
puts every task as late as its successors allow (a layer graph's weights and side branches
sit beside the layer that reads them), a collocation group is one unit at its first
member's place, and the program chooses where to cut and which device class runs each
stretch: a stretch costs its tasks' durations on the class, plus, at its start, the
transfer of the data crossing the cut (:class:`~schedkit.problem.path_split.CutCosts`):
its largest tensor (transfers at once) or all of it (one after another), and fits the
class's memory. Each stretch gets an unused device of its class while there
is one, else the device of the class with the most memory left that holds it. The mapping
is then timed by the event simulator with HEFT's upward rank
(:func:`~schedkit.timing.events.simulate`), so the schedule is valid on any graph; the
model is exact only for chains, where the split is the order.

Stretches on classes of finite memory may be charged a penalty each (in mean task
durations): none, then 1, which trades a cut for a slower device; when the split needs
more devices of a class than there are and a reused one overflows, the penalty rises until
the devices suffice (a :class:`~schedkit.errors.ProblemError` after a few tries: no split
found, not a proof). The shortest timed schedule is kept, over two orders (as late as
possible, and the problem's topological order), the two charges of a cut and the first two
penalties that fit; and over the splits of the first order with a cut charged instead by
the delay its transfers add net of their slack (:mod:`~schedkit.heuristics.cut_delays`: a
skip tensor sent while the stretch before the cut computes costs little; on MSR's ResNet-50
operator graph 436 -> 404).

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.from_dict({
...     "devices": [{"name": "a", "memory": 2}, {"name": "b", "memory": 2}],
...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
...     "tasks": [{"name": f"t{k}", "work": 1, "memory": 1} for k in range(4)],
...     "edges": [{"src": "t0", "dst": "t1", "size": 5}, {"src": "t1", "dst": "t2", "size": 1},
...               {"src": "t2", "dst": "t3", "size": 5}]})
>>> s = solve(p, "chain_split")
>>> [r.device for r in s.tasks], s.makespan, s.bound      # cut at the cheapest edge
(['a', 'a', 'b', 'b'], 5.0, 5.0)
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from schedkit.errors import ProblemError
from schedkit.methods import register_method
from schedkit.numerics import fits
from schedkit.problem import Problem
from schedkit.problem.bounds import formulation_bound
from schedkit.problem.graph import upward_rank
from schedkit.problem.path_split import CutCosts, device_classes
from schedkit.schedule import Result
from schedkit.timing import simulate, to_schedule

from schedkit.heuristics.cut_delays import cut_delays
from schedkit.heuristics.formulation import FollowsFormulation, FormulationOptions

__all__ = ["ChainSplit", "latest_order"]

#: Penalties tried per memory-bound stretch, in units of the mean task duration, when the
#: devices of a class do not suffice.
_PENALTIES = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)


def latest_order(problem: Problem) -> list[int]:
    """A topological order with every task as late as its successors allow: by decreasing
    height (the most edges on a path to a sink), then decreasing depth (the most edges on a
    path from a source: a task that waits longer for its inputs goes first), then index.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "d"}],
    ...     "tasks": [{"name": n, "work": 1} for n in ("x", "w", "y", "z")],
    ...     "edges": [{"src": "x", "dst": "y"}, {"src": "w", "dst": "z"}, {"src": "y", "dst": "z"}]})
    >>> [p.tasks[i] for i in latest_order(p)]      # w, read by z only, waits beside it
    ['x', 'y', 'w', 'z']
    """
    height, depth = [0] * len(problem.tasks), [0] * len(problem.tasks)
    for i in reversed(problem.topological_order):
        height[i] = max((height[j] + 1 for j, _ in problem.succs[i]), default=0)
    for j in problem.topological_order:
        depth[j] = max((depth[i] + 1 for i, _ in problem.preds[j]), default=0)
    return sorted(range(len(problem.tasks)), key=lambda i: (-height[i], -depth[i], i))


@register_method("chain_split")
class ChainSplit(FollowsFormulation):
    """Contiguous stretches of a topological order, one per device, by dynamic programming.

    Examples
    --------
    >>> from schedkit import Problem
    >>> s = ChainSplit().solve(Problem.load("examples/tiny.yaml"))
    >>> s.status, s.makespan >= s.bound
    ('heuristic', True)
    """

    Options = FormulationOptions

    def run(self, problem: Problem) -> Result:
        rank = upward_rank(problem)
        best = None
        for device_of in split_devices(problem):
            transfers = self.transfers(problem)
            start = simulate(problem, device_of, rank, transfers=transfers)
            schedule = to_schedule(problem, device_of, start, self.name, transfers)
            if best is None or schedule.makespan < best.makespan:
                best = schedule
        return Result.heuristic(best, bound=formulation_bound(problem, self.blocks(problem)))


def split_devices(problem: Problem) -> list[list[int]]:
    """The mappings to time: the split of each order and charge of a cut, with no penalty
    and with the first one that makes the devices suffice (see the module), duplicates once.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> all(len(m) == len(p.tasks) for m in split_devices(p))
    True

    Raises
    ------
    ProblemError
        When no split onto the devices fits their memory.
    """
    p = problem
    classes = device_classes(p)
    cuts = CutCosts(p, classes, True)
    mean = sum(p.min_duration) / len(p.tasks) or 1.0
    found: list[list[int]] = []
    cut_matrix = _CutMatrix(cuts, len(classes))
    latest = latest_order(p)
    # (the charge net of slack on the latest order alone: the topological order lists a
    # network's weights first, and its splits are seldom the shortest)
    plain = itertools.product((latest, list(p.topological_order)), ("max", "sum"), (False,))
    for order, how, slack in itertools.chain(plain, [(latest, "max", True), (latest, "sum", True)]):
        units = _units(p, order)
        if slack:  # (the delay the cut's transfers add to a chain schedule, net of their slack)
            delays = cut_delays(p, units, cut_matrix, how)
            if delays is None:
                continue
            cut_at = delays.__getitem__
        else:
            crossing = _crossing_sizes(p, units, how)
            cut_at = (lambda crossing: lambda k: cut_matrix(crossing[k]))(crossing)
        fitted = 0
        for penalty in _PENALTIES:
            device_of = _assign(p, units, classes, _split(p, units, classes, cut_at, penalty * mean))
            if device_of is not None:
                fitted += 1
                if device_of not in found:
                    found.append(device_of)
            if fitted == 2 or (fitted and penalty >= _PENALTIES[1]):
                break
    if not found:
        raise ProblemError(f"chain_split: no split of {p.name} into stretches fits the devices' memory")
    return found


def _units(p: Problem, order: list[int]) -> list[list[int]]:
    """The tasks in ``order``, a collocation group as one unit at its first member's place."""
    group_of = {i: name for name, members in p.colocate_groups.items() for i in members}
    units, seen = [], set()
    for i in order:
        group = group_of.get(i)
        if group is None:
            units.append([i])
        elif group not in seen:
            seen.add(group)
            units.append(list(p.colocate_groups[group]))
    return units


def _crossing_sizes(p: Problem, units: list[list[int]], how: str) -> list[float]:
    """``crossing[b]``: the data on the edges from a unit before ``b`` to one at or after it,
    ``how`` it is charged at the cut: ``max`` (the transfers at once, the largest counts) or
    ``sum`` (one after another)."""
    place = {i: k for k, unit in enumerate(units) for i in unit}
    starts: list[list[tuple[float, int]]] = [[] for _ in units]
    total = [0.0] * (len(units) + 1)  # (sum: an edge adds its size from after its source to its target)
    for i, j, size in p.edges:
        if place[i] < place[j] and size:
            starts[place[i]].append((-size, place[j]))
            total[place[i] + 1] += size
            total[place[j] + 1] -= size
    crossing, live, running = [0.0] * len(units), [], 0.0
    for b in range(1, len(units)):
        running += total[b]
        for item in starts[b - 1]:
            heapq.heappush(live, item)
        while live and live[0][1] < b:  # (an edge into a unit before b does not cross b)
            heapq.heappop(live)
        crossing[b] = running if how == "sum" else (-live[0][0] if live else 0.0)
    return crossing


def _split(p: Problem, units, classes, cut_at, penalty: float) -> list[tuple[int, int, int]]:
    """The least-cost stretches ``(first unit, last unit, class)`` (see the module);
    ``cut_at(k)``: the cost matrix ``[class before, class after]`` of a cut before unit ``k``;
    ``penalty`` is charged per stretch on a class of finite memory."""
    n, m = len(units), len(classes)
    reps = [c[0] for c in classes]
    caps = [p.device_memory[d] for d in reps]
    memory = [sum(p.task_memory[i] for i in unit) for unit in units]
    prefix = [[0.0] * (n + 1) for _ in range(m)]
    allowed = [[True] * n for _ in range(m)]
    for c, d in enumerate(reps):
        for k, unit in enumerate(units):
            allowed[c][k] = all(d in p.durations[i] for i in unit)
            prefix[c][k + 1] = prefix[c][k] + (sum(p.durations[i][d] for i in unit) if allowed[c][k] else 0.0)
    f = [[math.inf] * m for _ in range(n)]
    back: list[list[tuple[int, int] | None]] = [[None] * m for _ in range(n)]
    entry = [[(math.inf, -1)] * m for _ in range(n)]  # (cost, class before) of a stretch starting at j
    running = [(math.inf, 0, -1)] * m                # unlimited classes: (entry - prefix, start, before)
    extras = np.array([penalty if cap < math.inf else 0.0 for cap in caps])
    for k in range(n):
        if k == 0:
            entry[k] = [(extra, -1) for extra in extras.tolist()]
        else:
            # min over a of (f[k-1][a] + cut(a -> c) + extra, a), every class c at once.
            totals = np.asarray(f[k - 1])[:, None] + cut_at(k)
            totals += extras
            before = totals.argmin(axis=0)
            entry[k] = list(zip(totals[before, np.arange(m)].tolist(), before.tolist()))
        for c in range(m):
            if not allowed[c][k]:
                running[c] = (math.inf, 0, -1)
                continue
            if caps[c] == math.inf:
                value, a = entry[k][c]
                if value - prefix[c][k] < running[c][0]:
                    running[c] = (value - prefix[c][k], k, a)
                f[k][c] = running[c][0] + prefix[c][k + 1]
                back[k][c] = running[c][1:]
                continue
            used = 0.0
            for j in range(k, -1, -1):
                if not allowed[c][j]:
                    break
                used += memory[j]
                if not fits(used, caps[c]):
                    break
                value, a = entry[j][c]
                value += prefix[c][k + 1] - prefix[c][j]
                if value < f[k][c]:
                    f[k][c], back[k][c] = value, (j, a)
    c = min(range(m), key=lambda c: f[n - 1][c])
    if f[n - 1][c] == math.inf:
        raise ProblemError(f"chain_split: no stretch of {p.name}'s order fits a device's memory")
    stretches, k = [], n - 1
    while k >= 0:
        j, a = back[k][c]
        stretches.append((j, k, c))
        k, c = j - 1, a
    return stretches[::-1]


class _CutMatrix:
    """:class:`~schedkit.problem.path_split.CutCosts` of one size for every pair of classes
    at once: ``matrix(size)[a, b] == cuts(size, a, b)``, the same floats (each pair's least
    ``size * inv + latency`` over its front, padded with ``inf``; an edge's own times win)."""

    def __init__(self, cuts, m: int):
        self.cuts, self.m = cuts, m
        width = max([len(front) for front in cuts.front.values()] + [1])
        self.inv = np.full((m, m, width), np.inf)
        self.latency = np.full((m, m, width), np.inf)
        self.empty = np.ones((m, m), dtype=bool)
        for (a, b), front in cuts.front.items():
            self.empty[a, b] = not front
            for k, (inv, latency) in enumerate(front):
                self.inv[a, b, k], self.latency[a, b, k] = inv, latency

    def __call__(self, size: float) -> np.ndarray:
        if size == 0:
            return np.zeros((self.m, self.m))
        if not self.cuts.communication:
            return np.where(self.empty, np.inf, 0.0)
        with np.errstate(invalid="ignore"):
            matrix = (size * self.inv + self.latency).min(axis=2)
        matrix[self.empty] = np.inf
        if getattr(size, "times", None):  # the few edges with their own times: pair by pair
            for a in range(self.m):
                for b in range(self.m):
                    matrix[a, b] = self.cuts(size, a, b)
        return matrix


def _assign(p: Problem, units, classes, stretches) -> list[int] | None:
    """A device per stretch: an unused one of its class, else the one with the most memory
    left that holds it (``None`` when none does)."""
    left = list(p.device_memory)
    fresh = [list(c) for c in classes]
    device_of = [0] * len(p.tasks)
    for j, k, c in stretches:
        need = sum(p.task_memory[i] for unit in units[j:k + 1] for i in unit)
        if fresh[c]:
            d = fresh[c].pop(0)
        else:
            d = max(classes[c], key=lambda d: left[d])
            if not fits(need, left[d]):
                return None
        left[d] -= need
        for unit in units[j:k + 1]:
            for i in unit:
                device_of[i] = d
    return device_of
