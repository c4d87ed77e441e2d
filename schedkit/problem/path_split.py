"""The dynamic program of :func:`~schedkit.problem.memory_bound.memory_bound`: a path of the
task graph split into runs on device classes, with the detours beside it.

See :mod:`schedkit.problem.memory_bound` for the statement and why it bounds every schedule.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({
...     "devices": [{"name": "a", "memory": 2}, {"name": "b", "memory": 2}],
...     "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
...     "tasks": [{"name": f"t{k}", "work": 1, "memory": 1} for k in range(3)],
...     "edges": [{"src": "t0", "dst": "t1", "size": 5}, {"src": "t1", "dst": "t2", "size": 1}]})
>>> path_split_bound(p, [0, 1, 2], [0.0, 5.0, 1.0])    # t0 t1 | t2: one cut, of 1
4.0
>>> classes = device_classes(p)     # a and b are alike: one class
>>> classes, CutCosts(p, classes, True)(5.0, 0, 0)
([(0, 1)], 5.0)
"""

from __future__ import annotations

import bisect
import collections
import math
from typing import NamedTuple, Sequence

from schedkit.numerics import fits
from schedkit.problem.problem import Problem

__all__ = ["CutCosts", "device_classes", "path_split_bound"]


def device_classes(problem: Problem) -> list[tuple[int, ...]]:
    """Devices grouped into classes that no task tells apart: one capacity, one duration each.

    Examples
    --------
    >>> from schedkit import Problem
    >>> device_classes(Problem.load("examples/tiny.yaml"))
    [(0,), (1,)]
    """
    groups: dict[tuple, list[int]] = {}
    for d, cap in enumerate(problem.device_memory):
        groups.setdefault((cap, tuple(t.get(d) for t in problem.durations)), []).append(d)
    return [tuple(g) for g in groups.values()]

class CutCosts:
    """Least transfer time of an edge between two distinct devices of two device classes.

    ``cuts(size, a, b)``: ``inf`` when no two distinct linked devices of the classes
    exist (a split there is impossible), 0 without ``communication``; a ``Payload``'s own
    times count for the pairs they name.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")       # a gpu and a cpu, 1.6e7 per time unit
    >>> cuts = CutCosts(p, device_classes(p), True)
    >>> round(cuts(4e6, 0, 1), 4), cuts(4e6, 0, 0)     # gpu -> cpu; no second gpu
    (0.26, inf)
    """

    def __init__(self, problem: Problem, classes, communication: bool):
        self.problem, self.classes, self.communication = problem, classes, communication
        self.front = {}
        for a, ca in enumerate(classes):
            for b, cb in enumerate(classes):
                costs = {(problem.inv_bandwidth[u][v], problem.latency[u][v])
                         for u in ca for v in cb if u != v and problem.linked[u][v]}
                # (size * inv + latency is least at a pair no other pair beats in both)
                self.front[a, b] = [(i, t) for i, t in costs
                                    if not any(i2 <= i and t2 <= t and (i2, t2) != (i, t) for i2, t2 in costs)]

    def __call__(self, size: float, a: int, b: int) -> float:
        if size == 0:
            return 0.0
        front = self.front[a, b]
        if not front:
            return math.inf  # no two distinct linked devices: the split is impossible
        if not self.communication:
            return 0.0
        best = min([size * i + t for i, t in front])
        for (u, v), own in getattr(size, "times", {}).items():  # an edge's own times win
            if u != v and u in self.classes[a] and v in self.classes[b]:
                best = min(best, own)
        return best

    def anywhere(self, size: float) -> float:
        """Least transfer time of the edge between any two distinct devices."""
        n = len(self.classes)
        return min(self(size, a, b) for a in range(n) for b in range(n))

class _Detour(NamedTuple):
    """A chain beside the path (see :func:`_detours`)."""

    start: int           # path position of x
    end: int             # path position of y
    memory: float        # of the chain's tasks
    least: float         # the chain's least durations
    one: float           # least transfer on any of its edges
    two: float           # least two transfers on two of its edges
    on: list             # per class, the chain's durations there (inf where not allowed)
    splits: list         # (memory with x, memory with y) of each way to share the chain


def path_split_bound(problem: Problem, path: Sequence[int], sizes: Sequence[float], *,
                     communication: bool = True, classes=None, cuts=None) -> float:
    """Least makespan of the path ``path`` split into runs that fit (see the module).

    Parameters
    ----------
    problem : Problem
    path : sequence of int
        Tasks, each an edge's source of the next.
    sizes : sequence of float
        ``sizes[k]``: the data on the edge into ``path[k]`` (``sizes[0]`` unused).
    communication : bool
        Charge transfers at the splits.
    classes, cuts
        :func:`device_classes` and their transfer costs, when the caller has them.

    Returns
    -------
    float
        ``head(path[0])`` + the least split's length + ``tail(path[-1])``; ``inf`` when no
        split fits (then no schedule exists).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> path = p.topological_order[:2]
    >>> path_split_bound(p, path, [0.0, p.succs[path[0]][0][1]]) <= p.heads[path[1]] + 10
    True
    """
    p = problem
    classes = classes or device_classes(p)
    cuts = cuts or CutCosts(p, classes, communication)
    position = {v: k for k, v in enumerate(path)}
    memory = [p.task_memory[v] for v in path]
    attached = set(path)
    for members in p.colocate_groups.values():
        on = [position[i] for i in members if i in position]
        if on:  # the group's device holds its first member's run: count the others there
            memory[min(on)] += sum(p.task_memory[i] for i in members if i not in position)
            attached.update(members)
    detours = _detours(p, path, position, attached, classes, cuts)
    return p.heads[path[0]] + _split(p, path, sizes, memory, detours, classes, cuts) + p.tails[path[-1]]


def _detours(p: Problem, path, position, taken: set, classes, cuts) -> list[_Detour]:
    """Chains off the path from one path task to a later one (or an edge alone, skipping
    some), no task in two, with spans that do not overlap (largest memory first)."""
    found = []
    for x in path:
        for s, size in p.succs[x]:
            chain, sizes = [], [size]
            while s not in taken and s not in chain and len(p.succs[s]) == 1:
                chain.append(s)
                s, size = p.succs[s][0]
                sizes.append(size)
            if s in position and (chain or position[s] > position[x] + 1):  # (an edge alone skips some)
                taken.update(chain)
                lost = sorted(cuts.anywhere(z) for z in sizes) + [math.inf]  # (one edge cannot leave and return)
                on = [sum(p.durations[i].get(c[0], math.inf) for i in chain) for c in classes]
                found.append(_Detour(position[x], position[s], sum(p.task_memory[i] for i in chain),
                                     sum(p.min_duration[i] for i in chain),
                                     lost[0], lost[0] + lost[1], on, _splits(p, chain)))
    found.sort(key=lambda t: -t.memory)
    kept: list[_Detour] = []
    for t in found:
        if all(t.end <= u.start or u.end <= t.start for u in kept):
            kept.append(t)
    return kept


#: Longest chain whose ways to share two devices are told apart (2**k of them).
_SHARED_CHAIN = 3


def _splits(p: Problem, chain) -> list[tuple[float, float]]:
    """Each way a chain can sit on the devices of ``x`` and ``y`` only: the memory on each.

    Beyond :data:`_SHARED_CHAIN` tasks, one way that counts neither (a relaxation)."""
    if len(chain) > _SHARED_CHAIN:
        return [(0.0, 0.0)]
    total = sum(p.task_memory[i] for i in chain)
    shares = {0.0}
    for i in chain:
        shares |= {s + p.task_memory[i] for s in shares}
    return [(s, max(0.0, total - s)) for s in sorted(shares)]


def _split(p: Problem, path, sizes, memory, detours, classes, cuts) -> float:
    """The dynamic program over runs (see the module).

    ``f[k][c][mode]``: least length of ``path[:k + 1]`` split into runs, the last on class
    ``c`` ending at ``k``. When a detour's span holds the cut after ``k`` and that run holds
    its ``x``, mode 1 says part of its chain is on a third device, mode ``2 + s`` that it is
    shared between the devices of ``x`` and ``y`` as in its ``splits[s]``; mode 0 is every
    other run. A run that then holds the detour's ``y`` pays the detour's excess over the
    way between them (one cut), and the chain's memory on it.
    """
    n, m = len(path), len(classes)
    reps = [c[0] for c in classes]
    caps = [p.device_memory[d] for d in reps]
    # prefix[c][k]: durations of path[:k] on class c (0 for tasks it cannot run: never in a run)
    prefix = [[0.0] * (n + 1) for _ in range(m)]
    for c, d in enumerate(reps):
        row = prefix[c]
        for k, v in enumerate(path):
            row[k + 1] = row[k] + p.durations[v].get(d, 0.0)
    allowed = [[d in p.durations[v] for v in path] for d in reps]
    starting: list[list[_Detour]] = [[] for _ in range(n)]
    crossing: list[_Detour | None] = [None] * (n + 1)  # crossing[e]: the detour whose span holds the cut before e
    for t in detours:
        starting[t.start].append(t)
        for e in range(t.start + 1, t.end + 1):
            crossing[e] = t
    f: list[list[list[float]]] = [[] for _ in range(n)]
    entries: list[list[list[float]]] = [[] for _ in range(n)]
    running = [math.inf] * m  # unlimited classes: best entry - prefix, the detours dropped
    near = max(_NEAR_LEAST, _WORK // (n * max(1, sum(cap < math.inf for cap in caps))))
    far = [_Far(memory, caps[c], entries, prefix[c], c, near) for c in range(m)]
    for k, v in enumerate(path):
        after = crossing[k + 1]
        modes = 2 + len(after.splits) if after is not None else 1
        entries[k] = _entries(k, f, sizes, crossing[k], prefix, cuts, m)
        for c, d in enumerate(reps):
            if not allowed[c][k]:
                running[c] = math.inf
                far[c].restart(k + 1)
                f[k].append([math.inf] * modes)
            elif math.isinf(caps[c]):  # memory never binds: the chains are on the run's device
                running[c] = min(running[c], entries[k][c][0] - prefix[c][k])
                f[k].append([running[c] + prefix[c][k + 1]] * modes)
            else:
                best = _best_run(allowed[c], k, c, caps[c], memory, entries, prefix[c], starting, crossing, modes,
                                 near)
                plain = far[c](k)
                f[k].append([min(b, plain) for b in best])
    return min(min(row) for row in f[n - 1])


#: Starts of runs weighed exactly per path (detours, modes), over every position and class
#: of finite memory; a run that starts farther back than its share is weighed as a plain
#: split, detours and modes dropped: a relaxation, in time O(1) each.
_WORK = 20_000
#: The fewest starts weighed exactly.
_NEAR_LEAST = 8


class _Far:
    """The least plain split whose last run, on a class of capacity ``cap``, ends at ``k``
    and starts before ``k - near + 1``: a window minimum of ``entry - prefix`` over the
    starts whose run fits (both ends of the window only move forward)."""

    def __init__(self, memory, cap, entries, prefix, c, near):
        self.cap, self.entries, self.prefix, self.c, self.near = cap, entries, prefix, c, near
        self.total = [0.0]  # memory of path[:k]
        for size in memory:
            self.total.append(self.total[-1] + size)
        self.low, self.next, self.window = 0, 0, collections.deque()

    def restart(self, e: int) -> None:
        """No run holds a task before ``e``."""
        self.low = self.next = e
        self.window.clear()

    def __call__(self, k: int) -> float:
        # (the run's memory from prefix sums, shrunk by 1e-12 so that their rounding
        # never drops a start that fits: a start too many only lowers the bound)
        while self.low <= k and not fits((self.total[k + 1] - self.total[self.low]) * (1 - 1e-12), self.cap):
            self.low += 1
        while self.next <= k - self.near:
            e, self.next = self.next, self.next + 1
            value = self.entries[e][self.c][0] - self.prefix[e]
            while self.window and self.window[-1][1] >= value:
                self.window.pop()
            self.window.append((e, value))
        while self.window and self.window[0][0] < self.low:
            self.window.popleft()
        return self.window[0][1] + self.prefix[k + 1] if self.window else math.inf


def _entries(e, f, sizes, t, prefix, cuts, m) -> list[tuple[float, list[float]]]:
    """Per class ``c``, the ways into a run on ``c`` starting at ``e``: the best over every
    mode of the cut before it, and, when the detour ``t`` crosses that cut, the best by mode
    with its excess paid (mode 0: the run before does not hold ``x``, more cuts follow)."""
    if e == 0:
        return [(0.0, [])] * m
    before = f[e - 1]
    least = [min(row) for row in before]
    out = []
    for c in range(m):
        cut = [cuts(sizes[e], a, c) for a in range(m)]
        any_ = min(x + y for x, y in zip(least, cut))
        ways = [math.inf] * (len(before[0]) if t is not None else 0)
        for a in range(m if t is not None else 0):
            if cut[a] == math.inf:
                continue
            way = prefix[a][e] - prefix[a][t.start + 1] + cut[a] + prefix[c][t.end] - prefix[c][e]
            ways[0] = min(ways[0], before[a][0] + cut[a])
            ways[1] = min(ways[1], before[a][1] + cut[a] + max(0.0, t.least + t.two - way))
            shared = max(0.0, t.least + t.one - way)
            for q in range(2, len(ways)):
                ways[q] = min(ways[q], before[a][q] + cut[a] + shared)
        out.append((any_, ways))
    return out


def _best_run(allowed, k, c, cap, memory, entries, prefix, starting, crossing, modes, near) -> list:
    """``f[k][c]`` by modes: the least split whose last run, on class ``c`` (capacity
    ``cap``), ends at ``k`` and starts at one of the ``near`` last positions."""
    best = [math.inf] * modes
    after = crossing[k + 1]  # the detour whose span holds the cut after k
    used, inside = 0.0, _Knapsack()
    for e in range(k, max(-1, k - near), -1):
        if not allowed[e]:
            break
        used += memory[e]
        if not fits(used, cap):
            break
        for t in starting[e]:
            if t.end <= k:
                inner = prefix[t.end] - prefix[t.start + 1]
                inside.add(max(0.0, t.two + t.least - inner), max(0.0, t.on[c] - inner), t.memory)
        t, (any_, by_mode) = crossing[e], entries[e][c]
        run = prefix[k + 1] - prefix[e]
        if (t is None or k < t.end) and not (after is not None and e <= after.start):
            # (most starts: one way in, one way out)
            if any_ + run < best[0]:
                value = any_ + run + (inside(cap - used) if inside.total else 0.0)
                if value < best[0]:
                    best[0] = value
            continue
        if t is None or k < t.end:
            ways = [(any_, 0.0)]
        else:  # the run holds the y of a detour crossing the cut before it
            ways = [(by_mode[0], 0.0), (by_mode[1], 0.0)] + [(w, y) for w, (_, y) in zip(by_mode[2:], t.splits)]
        if after is not None and e <= after.start:
            exits = [(1, 0.0)] + [(2 + q, x) for q, (x, _) in enumerate(after.splits)]
        else:
            exits = [(0, 0.0)]
        for way, extra in ways:
            for mode, more in exits:
                # (the detours' penalties are >= 0: a way no shorter than the best needs none)
                if way + run >= best[mode] or not fits(used + extra + more, cap):
                    continue
                value = way + run + inside(cap - used - extra - more)
                best[mode] = min(best[mode], value)
    return best


class _Knapsack:
    """Least total penalty of the detours inside a run, each out of the run (its first
    penalty) or in it (its second, its memory in ``room``): the LP relaxation, filled
    greedily by gain per memory, kept sorted as detours join (a run meets many rooms)."""

    def __init__(self):
        self.items, self.sorted, self.forced = [], True, 0.0
        self.total, self.sizes, self.gains = 0.0, [0.0], [0.0]

    def add(self, out: float, on: float, size: float) -> None:
        if out == math.inf:  # (it cannot leave the run: in it, its memory taken first)
            self.total += on
            self.forced += size
            return
        self.total += out
        if on < out:
            self.items.append((out - on, size))
            self.sorted = False

    def __call__(self, room: float) -> float:
        if not self.sorted:
            self.items.sort(key=lambda g: -math.inf if g[1] <= 0 else -g[0] / g[1])
            self.sizes, self.gains = [0.0], [0.0]
            for gain, size in self.items:
                self.sizes.append(self.sizes[-1] + size)
                self.gains.append(self.gains[-1] + gain)
            self.sorted = True
        if self.forced:
            if not fits(self.forced, room):
                return math.inf
            room -= self.forced
        room = max(room, 0.0)
        k = bisect.bisect_right(self.sizes, room) - 1  # the detours that fit whole
        saved = self.gains[k]
        if k < len(self.items):
            gain, size = self.items[k]
            saved += gain * (room - self.sizes[k]) / size
        return self.total - saved
