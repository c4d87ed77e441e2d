"""The coarse graph of ``merge`` while pairs of nodes are merged (She et al. 2025, Algorithm 1).

A node is a group of tasks that will run back to back on one device. :class:`MergeGraph`
keeps, for every node, its members, devices, durations, memory and (joined) collocation
group, its edges with their mean transfer times, which nodes it reaches, and the longest
mean-cost paths into and out of it (HEFT's costs, :func:`~schedkit.problem.graph.costed_paths`),
so that :mod:`schedkit.decompositions.merge` can weigh a merge in constant time.
"""

from __future__ import annotations

from bisect import insort
from graphlib import TopologicalSorter

from schedkit.reductions.coarsen import Collocation
from schedkit.problem import Problem
from schedkit.problem.graph import costed_paths, mean_costs

__all__ = ["MergeGraph"]


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
