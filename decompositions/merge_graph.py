"""The coarse graph of ``merge`` while pairs of nodes are merged (She et al. 2025, Algorithm 1).

A node is a group of tasks that will run back to back on one device. :class:`MergeGraph`
keeps, for every node, its members, devices, durations, memory and (joined) collocation
group, its edges with their mean transfer times, which nodes it reaches, and the longest
mean-cost paths into and out of it (HEFT's costs, :func:`~schedkit.problem.graph.costed_paths`),
so that a merge is weighed in constant time; :func:`greedy_merge` merges pairs by the rules
:mod:`schedkit.decompositions.merge` describes.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from graphlib import TopologicalSorter

from schedkit.errors import SchedkitError
from schedkit.reductions.coarsen import Collocation
from schedkit.problem import Problem
from schedkit.problem.graph import costed_paths, mean_costs

__all__ = ["MergeGraph", "greedy_merge"]


class MergeGraph:
    """The coarse graph while merging: members, devices, durations, levels, reachability,
    collocation groups, and the longest mean-cost paths through every node.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> g = MergeGraph(p)
    >>> g.merge(1, 3)                        # attn and norm
    >>> g.groups()
    [[0], [1, 3], [2], [4], [5]]
    >>> sorted(p.tasks[i] for i in g.pred[1]), sorted(p.tasks[i] for i in g.succ[1])
    (['embed', 'mlp'], ['logits'])
    """

    def __init__(self, problem: Problem, contract: bool = True):
        p = problem
        n = len(p.tasks)
        self.problem = p
        self.position = {i: k for k, i in enumerate(p.topological_order)}
        level = [0] * n
        for i in p.topological_order:
            for j, _ in p.succs[i]:
                level[j] = max(level[j], level[i] + 1)
        self.low = dict(enumerate(level))
        self.members = {i: [i] for i in range(n)}
        self.devices = {i: set(p.allowed[i]) for i in range(n)}
        self.time = {i: dict(p.durations[i]) for i in range(n)}
        self.memory = {i: p.task_memory[i] for i in range(n)}
        self.group = {i: p.spec.tasks[i].colocate for i in range(n)}
        self.classes = Collocation(p)
        self.joins = False  # whether two collocation groups may be joined (the last resort)
        self.contract = contract  # whether edges other than chain links may be contracted
        self.succ = {i: {j for j, _ in p.succs[i]} for i in range(n)}
        self.pred = {i: {j for j, _ in p.preds[i]} for i in range(n)}
        self.desc = dict(enumerate(p.descendants))
        self.via: dict[int, int] = {}
        self.order = sorted(range(n), key=self.key)  # level order: low level, then position
        _, comm = mean_costs(p)
        self.comm: dict[tuple[int, int], float] = {}
        for (i, j, _), c in zip(p.edges, comm):
            self.comm[i, j] = max(c, self.comm.get((i, j), 0.0))
        self.rank()

    def cost(self, i: int) -> float:
        """Mean duration of node ``i`` over its devices (HEFT's task cost)."""
        return sum(self.time[i].values()) / len(self.time[i])

    def rank(self) -> None:
        """The longest mean-cost paths before (``down``) and from (``up``) every node."""
        order = list(TopologicalSorter({i: self.pred[i] for i in self.members}).static_order())
        self.costs = {i: self.cost(i) for i in order}
        edges = ((i, j, self.comm[i, j]) for i in self.members for j in self.succ[i])
        self.down, self.up = costed_paths(order, self.costs, edges)
        self.inbound, self.outbound = {}, {}

    def through(self, a: int, b: int) -> float:
        """The longest mean-cost path through ``a`` and ``b`` merged (ranks of the others as
        they stand): what the merge makes of the coarse graph's critical path."""
        before, cost, after = self._paths(a, b)
        return before + cost + after

    def _paths(self, a: int, b: int) -> tuple[float, float, float]:
        """The longest path into the merged node, its mean cost, the longest out of it."""
        before = max(_without(self._inbound(a), b), _without(self._inbound(b), a))
        after = max(_without(self._outbound(a), b), _without(self._outbound(b), a))
        common = self.devices[a] & self.devices[b]
        return before, sum(self.time[a][d] + self.time[b][d] for d in common) / len(common), after

    def _inbound(self, a: int) -> tuple:
        """The two longest paths into ``a`` through different predecessors (each merge
        evaluated in constant time: a hub has hundreds of them)."""
        if a not in self.inbound:
            self.inbound[a] = _two_best((self.down[x] + self.costs[x] + self.comm[x, a], x) for x in self.pred[a])
        return self.inbound[a]

    def _outbound(self, a: int) -> tuple:
        if a not in self.outbound:
            self.outbound[a] = _two_best((self.comm[a, y] + self.up[y], y) for y in self.succ[a])
        return self.outbound[a]

    def key(self, i: int) -> tuple[int, int]:
        return (self.low[i], self.position[i])

    def least(self, i: int, j: int) -> float:
        """Least duration of ``i`` and ``j`` merged, over their shared devices."""
        return min(self.time[i][d] + self.time[j][d] for d in self.devices[i] & self.devices[j])

    def redundant(self, a: int, b: int) -> bool:
        """Whether another path leads from ``a`` to ``b`` than the edge ``a -> b``."""
        if a not in self.via:  # what a's successors reach (a node is not its own descendant)
            self.via[a] = 0
            for s in self.succ[a]:
                self.via[a] |= self.desc[s]
        return bool((self.via[a] >> b) & 1)

    def single(self, ends: set[int], check) -> bool:
        """Whether exactly one of ``ends`` counts once redundant edges are ignored."""
        if len(ends) == 1:
            return True
        if len(ends) > 8:  # not worth the search: a hub is no chain link
            return False
        return sum(1 for e in ends if not check(e)) == 1

    def groups(self) -> list[list[int]]:
        """The members of every node, the nodes in the order of their first member."""
        return sorted(self.members.values(), key=lambda m: self.position[m[0]])

    def joined(self, i: int) -> str | None:
        """The (joined) collocation group of node ``i``."""
        return self.classes.root(self.group[i])

    def independent(self, a: int, b: int) -> bool:
        return not (self.desc[a] >> b) & 1 and not (self.desc[b] >> a) & 1

    def merge(self, a: int, b: int) -> None:
        """Merge ``b`` into ``a``. The merged node's ranks are its own; the others' wait for
        the next :meth:`rank`."""
        before, cost, after = self._paths(a, b)
        self.down[a], self.up[a], self.costs[a] = before, cost + after, cost
        del self.down[b], self.up[b], self.costs[b]
        for x in {a, b} | self.pred[a] | self.pred[b] | self.succ[a] | self.succ[b]:
            self.inbound.pop(x, None)
            self.outbound.pop(x, None)
        self.order.remove(a)
        self.order.remove(b)
        ga, gb = self.joined(a), self.joined(b)
        if ga and gb:
            self.classes.join(ga, gb)
        elif ga or gb:
            other = b if ga else a
            self.classes.add(ga or gb, self.devices[other], self.memory[other])
        self.group[a] = ga or gb
        del self.group[b]
        common = self.devices[a] & self.devices[b]
        self.members[a] = sorted(self.members[a] + self.members.pop(b), key=self.position.get)
        self.devices[a] = common
        self.time[a] = {d: self.time[a][d] + self.time[b][d] for d in common}
        del self.devices[b], self.time[b]
        self.memory[a] += self.memory.pop(b)
        self.low[a] = min(self.low[a], self.low.pop(b))
        for x in self.pred.pop(b):
            self.succ[x].discard(b)
            c = self.comm.pop((x, b))
            if x != a:
                self.succ[x].add(a)
                self.pred[a].add(x)
                self.comm[x, a] = max(c, self.comm.get((x, a), 0.0))
        for y in self.succ.pop(b):
            self.pred[y].discard(b)
            c = self.comm.pop((b, y))
            if y != a:
                self.pred[y].add(a)
                self.succ[a].add(y)
                self.comm[a, y] = max(c, self.comm.get((a, y), 0.0))
        self.succ[a].discard(a)
        self.pred[a].discard(a)
        self.comm.pop((a, a), None)
        self.via.clear()
        both = (1 << a) | (1 << b)
        mine = (self.desc[a] | self.desc.pop(b)) & ~both
        self.desc[a] = mine
        for x, bits in self.desc.items():
            if x != a and bits & both:
                self.desc[x] = ((bits | mine) & ~(1 << b)) | (1 << a)
        insort(self.order, a, key=self.key)


def greedy_merge(problem: Problem, nodes: int, edge_factor: float, pair_factor: float,
                 contract: bool) -> MergeGraph:
    """The graph of greedy merging down to at most ``nodes`` nodes, the pair that passes
    first merged first (the rules of :mod:`schedkit.decompositions.merge`).

    Raises
    ------
    SchedkitError
        When no more pairs can be merged (no shared device, memory) before ``nodes`` is
        reached.

    Examples
    --------
    >>> from schedkit import Problem
    >>> greedy_merge(Problem.load("examples/tiny.yaml"), 3, 2.0, 1.0, True).groups()
    [[0, 2], [1, 3, 4], [5]]
    """
    g = MergeGraph(problem, contract)
    total = sum(problem.min_duration)
    weights = sum(problem.task_memory)
    relax = 1.0
    while len(g.members) > nodes:
        mean, memory = total / nodes, weights / nodes
        g.rank()
        limits = {edge: (factor * relax * mean, factor * relax * memory if weights else float("inf"))
                  for edge, factor in ((True, edge_factor), (False, pair_factor))}
        heap = _candidates(g, _pairs_everywhere(g), limits)
        merged, budget = False, max(8, len(g.members) // 16)
        while heap and len(g.members) > nodes and budget:
            found, a, b = heapq.heappop(heap)
            if a not in g.members or b not in g.members:
                continue
            now = _priority(g, a, b, limits)
            if now is None:
                continue
            if now != found:
                heapq.heappush(heap, (now, a, b))
                continue
            keep, drop = sorted((a, b), key=g.position.get)
            g.merge(keep, drop)
            merged, budget = True, budget - 1
            for item in _candidates(g, _pairs_around(g, keep), limits):
                heapq.heappush(heap, item)
        if not merged:
            if relax <= 2.0 * (len(problem.tasks) + 1):
                relax *= 2.0
            elif not g.contract:
                g.contract, relax = True, 1.0  # chain links and non-edges cannot get there
            elif not g.joins and problem.colocate_groups:
                g.joins, relax = True, 1.0  # what is left is held apart by collocation groups
            else:
                raise SchedkitError(f"merge: the tasks cannot be merged below {len(g.members)} nodes "
                                    f"(the rest share no device, or their memory does not fit on "
                                    f"one); ask for {len(g.members)} nodes or more")
    return g


def _priority(g: MergeGraph, a: int, b: int, limits: dict) -> tuple | None:
    """(joins two collocation groups, not a chain link, critical path through the merged
    node, not an edge, least duration) or None: not mergeable, or over the duration and memory
    limits of an edge (``limits[True]``) or of a non-edge (``limits[False]``)."""
    common = g.devices[a] & g.devices[b]
    if not common:
        return None
    memory = g.memory[a] + g.memory[b]
    ga, gb = g.joined(a), g.joined(b)
    joins = int(bool(ga and gb and ga != gb))
    if joins and not g.joins:
        return None
    if ga or gb:  # the whole (joined) group, with the merged node, on one device
        extra = g.memory[b] if ga and not gb else g.memory[a] if gb and not ga else 0.0
        if not g.classes.fits({ga, gb} - {None}, common, extra):
            return None
    elif memory and memory > max(g.problem.device_memory[d] for d in common):
        return None
    edge = b in g.succ[a] or a in g.succ[b]
    least, (most, most_memory) = g.least(a, b), limits[edge]
    if least > most or memory > most_memory:
        return None
    if edge:
        tail, head = (a, b) if b in g.succ[a] else (b, a)
        if g.redundant(tail, head):
            return None  # contracting it would close a cycle through the other path
        link = g.single(g.pred[head], lambda x: g.redundant(x, head)) and \
            g.single(g.succ[tail], lambda y: g.redundant(tail, y))
        if link:
            return (joins, 0, 0.0, 0, least)
        if not g.contract:
            return None
        return (joins, 1, round(g.through(a, b), 9), 0, least)
    if not g.independent(a, b):
        return None
    return (joins, 1, round(g.through(a, b), 9), 1, least)


def _pairs_everywhere(g: MergeGraph):
    for a in g.members:
        for b in g.succ[a]:
            yield a, b
    yield from zip(g.order, g.order[1:])


def _pairs_around(g: MergeGraph, a: int):
    """The merged node's edges and its neighbours in level order (and the pair that closed
    the gap the other node left)."""
    for b in g.succ[a]:
        yield a, b
    for b in g.pred[a]:
        yield b, a
    k = bisect_left(g.order, g.key(a), key=g.key)
    window = g.order[max(0, k - 2):k + 3]
    yield from zip(window, window[1:])


def _candidates(g: MergeGraph, pairs, limits: dict) -> list:
    heap = []
    for a, b in pairs:
        found = _priority(g, a, b, limits)
        if found is not None:
            heap.append((found, a, b))
    heapq.heapify(heap)
    return heap


def _two_best(items) -> tuple[float, int, float]:
    """(best value, its node, second best value) of ``(value, node)`` items; 0.0 when missing."""
    best, node, second = 0.0, -1, 0.0
    for value, x in items:
        if value > best:
            best, node, second = value, x, best
        elif value > second:
            second = value
    return best, node, second


def _without(best: tuple[float, int, float], x: int) -> float:
    """The best value of :func:`_two_best` once node ``x``'s is left out."""
    return best[2] if best[1] == x else best[0]
