"""The cuts of a chain of modules (schedkit/problem/series_cuts.py) against their definition."""

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit import Problem
from schedkit.generators import rwnn
from schedkit.problem.series_cuts import chain_cuts, modules


def _problem(n: int, edges: set) -> Problem:
    return Problem.from_dict({
        "name": "cuts", "devices": [{"name": "d0"}, {"name": "d1"}],
        "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}],
        "tasks": [{"name": f"t{i}", "work": 1} for i in range(n)],
        "edges": [{"src": f"t{i}", "dst": f"t{j}", "size": size} for (i, j), size in sorted(edges.items())]})


def _by_definition(p: Problem) -> list[tuple]:
    """Bridges and articulation points of the undirected graph that split it into everything
    before and everything after (networkx's closures), as (tail, head, size, tasks before)."""
    g, n = p.graph, len(p.tasks)
    undirected = g.to_undirected()
    if n < 2 or not nx.is_connected(undirected):
        return []
    sizes = {(i, j): s for i, j, s in p.edges}
    cuts, ends = [], set()
    for u, w in nx.bridges(undirected):
        a, b = (u, w) if (u, w) in sizes else (w, u)
        before = nx.ancestors(g, a) | {a}
        if len(before) + len(nx.descendants(g, b)) + 1 == n:
            cuts.append((a, b, sizes[a, b], len(before)))
            ends.update((a, b))
    for x in nx.articulation_points(undirected):
        anc, desc = nx.ancestors(g, x), nx.descendants(g, x)
        if x in ends or len(anc) + len(desc) + 1 != n or any(i in anc and j in desc for i, j in g.edges):
            continue
        cuts.append((x, x, 0.0, len(anc) + 1))
    return sorted(cuts, key=lambda c: c[3])


@st.composite
def _dags(draw):
    n = draw(st.integers(1, 12))
    chain = draw(st.booleans())  # chains with a few skips have cuts; dense graphs rarely do
    edges = {}
    for j in range(1, n):
        for i in range(j):
            # (a chain edge left out leaves a sink before a cut, or a source after it)
            if (chain and i == j - 1 and draw(st.floats(0, 1)) < 0.85) or \
                    draw(st.floats(0, 1)) < (0.15 if chain else 0.3):
                edges[i, j] = draw(st.sampled_from([0.0, 1.0, 2.5]))
    return _problem(n, edges)


@settings(max_examples=300, deadline=None)
@given(_dags())
def test_the_cuts_are_those_of_the_definition(p):
    found = [(c.tail, c.head, c.size, c.before) for c in chain_cuts(p)]
    assert found == _by_definition(p)


@settings(max_examples=100, deadline=None)
@given(_dags(), st.integers(1, 4))
def test_modules_partition_the_tasks_and_follow_one_another(p, min_tasks):
    groups, kept = modules(p, chain_cuts(p), min_tasks)
    assert sorted(i for g in groups for i in g) == list(range(len(p.tasks)))
    assert len(kept) == len(groups) - 1
    for earlier, later in zip(groups, groups[1:]):
        # every task of a later module follows every task of the earlier one, or is its twin
        assert not any(p.graph.has_edge(j, i) for i in earlier for j in later)


def test_a_task_that_leads_nowhere_before_a_bridge_spoils_it():
    # 0 -> 1 (a sink), 0 -> 2 -> 3: the one edge between {0, 1, 2} and {3} is 2 -> 3, but 1
    # does not precede 3, so 2 -> 3 does not cut the chain; 0 does (everything follows it).
    p = _problem(4, {(0, 1): 1.0, (0, 2): 1.0, (2, 3): 1.0})
    cuts = [(c.tail, c.head, c.size, c.before) for c in chain_cuts(p)]
    assert cuts == [(0, 0, 0.0, 1)] == _by_definition(p)


def test_a_chain_of_rwnn_modules_is_cut_between_them():
    p = Problem.from_dict(rwnn(modules=3, nodes=4, channels=1, seed=2))
    groups, kept = modules(p, chain_cuts(p), min_tasks=2)
    assert len(groups) >= 3 and len(kept) == len(groups) - 1
