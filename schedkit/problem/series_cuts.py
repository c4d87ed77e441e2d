"""Where a task graph is cut into a chain of modules: bridges and articulation tasks every
input-to-output path crosses.

A **bridge** of the undirected graph ``a -> b`` cuts it when its tail ``a`` follows every task
before it and its head ``b`` precedes every task after it; an **articulation task** ``x`` cuts it
when every other task is before or after it and no edge jumps over it. Between two cuts lies a
**module**, which in any schedule runs after the module before it. ``bridge_dp`` (a DP over the
devices at the cuts) and ``auto``'s ``series`` phase (the same chain under timing rules that
bridge_dp refuses) both read the chain from here.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> groups, cuts = modules(p, chain_cuts(p))
>>> [[p.tasks[i] for i in g] for g in groups][-1], len(cuts)
(['sample'], 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from schedkit.problem.problem import Problem

__all__ = ["Cut", "chain_cuts", "modules"]


@dataclass(frozen=True)
class Cut:
    """Where the chain is cut: the bridge ``tail -> head``, or the articulation task
    ``tail == head`` (twinned); ``before`` is every task on the tail's side."""

    tail: int
    head: int
    size: float
    before: int  # bit set of the tasks on the tail's side (the tail included)

    @property
    def twin(self) -> bool:
        return self.tail == self.head


def chain_cuts(problem: Problem) -> list[Cut]:
    """The bridges and articulation points every input-to-output path crosses, in order.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [(p.tasks[c.tail], p.tasks[c.head]) for c in chain_cuts(p)]
    [('norm', 'logits'), ('logits', 'sample')]
    """
    n = len(problem.tasks)
    undirected = problem.graph.to_undirected()
    if n < 2 or not nx.is_connected(undirected):
        return []
    everything = (1 << n) - 1
    desc, anc = problem.descendants, problem.ancestors  # (bit sets: O(edges) big-int operations)
    sizes = {(i, j): size for i, j, size in problem.edges}
    cuts, ends = [], set()
    for u, w in nx.bridges(undirected):
        a, b = (u, w) if (u, w) in sizes else (w, u)
        before = anc[a] | (1 << a)
        if before | desc[b] | (1 << b) == everything:
            cuts.append(Cut(a, b, sizes[a, b], before))
            ends.update((a, b))
    for x in nx.articulation_points(undirected):
        if x in ends or anc[x] | desc[x] | (1 << x) != everything:
            continue
        if any((anc[x] >> i) & 1 and (desc[x] >> j) & 1 for i, j, _ in problem.edges):
            continue  # an edge jumps over x: it does not separate the two sides
        cuts.append(Cut(x, x, 0.0, anc[x] | (1 << x)))
    return sorted(cuts, key=lambda c: bin(c.before).count("1"))


def modules(problem: Problem, cuts: list[Cut], min_tasks: int = 1) -> tuple[list[list[int]], list[Cut]]:
    """The tasks of every module between the ``cuts`` (joining modules smaller than
    ``min_tasks`` with the next one), and the cuts kept."""
    kept, groups, start = [], [], 0
    for cut in cuts:
        tasks = [i for i in range(len(problem.tasks)) if (cut.before >> i) & 1 and not (start >> i) & 1]
        if len(tasks) >= min_tasks:
            groups.append(tasks)
            kept.append(cut)
            start = cut.before
    last = [i for i in range(len(problem.tasks)) if not (start >> i) & 1]
    if len(last) < min_tasks and groups:
        groups[-1] += last
        kept.pop()
    else:
        groups.append(last)
    return [sorted(g) for g in groups], kept
