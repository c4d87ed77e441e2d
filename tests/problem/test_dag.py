"""schedkit.problem.dag: the repeated-edge and cycle checks agree with plain Python and networkx."""

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit.problem.dag import acyclic, repeated

_graphs = st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30)))


@settings(max_examples=300, deadline=None)
@given(_graphs)
def test_acyclic_is_networkx_s_answer(graph):
    n, edges = graph
    edges = [(a, b) for a, b in edges if a != b]
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    assert acyclic(src, dst, n) == nx.is_directed_acyclic_graph(g)


@given(st.lists(st.integers(0, 50)))
def test_repeated_is_a_set_s_answer(keys):
    assert repeated(np.array(keys, dtype=np.int64)) == (len(set(keys)) != len(keys))
