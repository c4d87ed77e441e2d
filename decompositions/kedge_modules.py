"""The modules of ``kedge``: k-edge-connected components of the task graph, from a Gomory-Hu tree.

Two tasks are k-edge-connected when every edge on their path in a Gomory-Hu tree of the
undirected task graph (networkx) weighs at least k. Components smaller than ``min_tasks``
join the neighbouring module they share most edges with, and modules that depend on each
other both ways are joined, so that the modules form a DAG (:func:`kedge_modules`);
:func:`choose_k` picks the smallest k that gives balanced modules. The tree costs one
max-flow per task (:func:`gomory_hu_seconds`).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.generators import rwnn
>>> p = Problem.from_dict(rwnn(modules=3, nodes=5, channels=2, dependency="sdep", seed=3))
>>> len(kedge_modules(p, 3))
3
"""

from __future__ import annotations

import networkx as nx

from schedkit.problem import Problem
from schedkit.problem.edge_table import edge_count

__all__ = ["kedge_modules", "choose_k", "gomory_hu_seconds"]


def _components(problem: Problem, tree: nx.Graph, k: int) -> dict[int, int]:
    kept = nx.Graph()
    kept.add_nodes_from(tree)
    kept.add_edges_from((u, v) for u, v, w in tree.edges(data="weight") if w >= k)
    return {i: min(group) for group in nx.connected_components(kept) for i in group}


def _join_small(problem: Problem, label: dict[int, int], min_tasks: int) -> dict[int, int]:
    """Join every component smaller than ``min_tasks`` to the neighbour it shares most edges with."""
    label = dict(label)
    while True:
        size: dict[int, int] = {}
        for c in label.values():
            size[c] = size.get(c, 0) + 1
        for c in sorted((c for c, s in size.items() if s < min_tasks), key=lambda c: (size[c], c)):
            count: dict[int, int] = {}
            for i, j, _ in problem.edges:
                a, b = label[i], label[j]
                if a != b and c in (a, b):
                    other = b if a == c else a
                    count[other] = count.get(other, 0) + 1
            if count:
                into = max(count, key=lambda o: (count[o], size[o], -o))
                label = {i: into if g == c else g for i, g in label.items()}
                break
        else:
            return label


def kedge_modules(problem: Problem, k: int, min_tasks: int = 3, tree: nx.Graph | None = None) -> list[list[int]]:
    """The modules for connectivity ``k``, each a sorted list of tasks, in topological order.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [[p.tasks[i] for i in m] for m in kedge_modules(p, 2, min_tasks=1)]
    [['embed', 'attn', 'mlp', 'norm'], ['logits'], ['sample']]
    """
    if tree is None:
        tree = _gomory_hu(problem)
    label = _join_small(problem, _components(problem, tree, k), min_tasks)
    quotient = nx.DiGraph()
    quotient.add_nodes_from(set(label.values()))
    quotient.add_edges_from((label[i], label[j]) for i, j, _ in problem.edges if label[i] != label[j])
    dag = nx.condensation(quotient)  # modules that feed each other both ways become one
    groups: dict[int, list[int]] = {}
    for i, c in label.items():
        groups.setdefault(dag.graph["mapping"][c], []).append(i)
    order = nx.lexicographical_topological_sort(dag, key=lambda m: min(groups[m]))
    return [sorted(groups[m]) for m in order]


#: Seconds per task and edge of a Gomory-Hu tree (one max-flow per task; measured: 1,000 tasks
#: and 14,400 edges in 54 s, 2,500 and 37,000 in 321 s).
GOMORY_HU_SECONDS = 3.7e-6


def gomory_hu_seconds(problem: Problem) -> float:
    """About how long the Gomory-Hu tree of ``problem``'s task graph takes to compute.

    Examples
    --------
    >>> from schedkit import Problem
    >>> gomory_hu_seconds(Problem.load("examples/hetero20.yaml")) < 0.1
    True
    """
    return GOMORY_HU_SECONDS * len(problem.tasks) * max(1, edge_count(problem))


def _gomory_hu(problem: Problem) -> nx.Graph:
    """A Gomory-Hu tree of the undirected task graph (a forest when it is not connected)."""
    from networkx.algorithms.flow import edmonds_karp

    graph = problem.graph.to_undirected()
    nx.set_edge_attributes(graph, 1, "capacity")
    tree = nx.Graph()
    tree.add_nodes_from(graph)
    for nodes in nx.connected_components(graph):
        if len(nodes) > 1:
            tree.update(nx.gomory_hu_tree(graph.subgraph(nodes), flow_func=edmonds_karp))
    return tree


def choose_k(problem: Problem, max_share: float = 0.3, min_tasks: int = 3) -> tuple[int, list[list[int]]]:
    """The smallest k whose modules are balanced (none above ``max_share`` of the tasks),
    else the k whose largest module is smallest; and its modules."""
    tree = _gomory_hu(problem)
    top = max([d for _, d in problem.graph.to_undirected().degree()] + [1]) + 1
    best = None
    for k in range(1, top + 1):
        groups = kedge_modules(problem, k, min_tasks, tree)
        largest = max(map(len, groups))
        if len(groups) >= 2 and largest <= max_share * len(problem.tasks):
            return k, groups
        if len(groups) >= 2 and (best is None or largest < best[0]):
            best = (largest, k, groups)
    if best is None:
        return 1, [list(range(len(problem.tasks)))]
    return best[1], best[2]
