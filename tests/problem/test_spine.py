"""The spine: pivots each after the one before, windows that hold only tasks that run between
their two pivots, and a window per stretch of a graph that no chain of cuts splits."""

import networkx as nx
from hypothesis import HealthCheck, assume, given, settings

from schedkit import Problem, ProblemError
from schedkit.problem.series_cuts import chain_cuts
from schedkit.problem.spine import MOST_LEFT_OUT, spine
from schedkit.testing.strategies import problems


def _encoder_decoder(kinds=("wide", "chain", "wide")) -> Problem:
    """An encoder chain, then decoder layers that each read the encoder's output too (the
    skip edges): three heads side by side (``wide``) or one after the other (``chain``)."""
    tasks, edges, last = [{"name": "in", "work": 1}], [], "in"
    for k in range(3):
        tasks.append({"name": f"e{k}", "work": 2})
        edges.append({"src": last, "dst": f"e{k}", "size": 1})
        last = f"e{k}"
    encoder = last
    for k, kind in enumerate(kinds):
        heads = [f"h{k}_{j}" for j in range(3)]
        tasks += [{"name": f"self{k}", "work": 2}, {"name": f"cross{k}", "work": 2}]
        tasks += [{"name": h, "work": 6} for h in heads]
        edges += [{"src": last, "dst": f"self{k}", "size": 1}, {"src": encoder, "dst": f"cross{k}", "size": 1}]
        steps = [(f"self{k}", h) for h in heads] + [(h, f"cross{k}") for h in heads] if kind == "wide" else \
            list(zip([f"self{k}", *heads], [*heads, f"cross{k}"]))
        edges += [{"src": a, "dst": b, "size": 1} for a, b in steps]
        last = f"cross{k}"
    return Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                              "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                              "tasks": tasks, "edges": edges})


def test_a_skip_edge_leaves_pivots_where_no_chain_cut_is():
    p = _encoder_decoder()
    cuts = {p.tasks[i] for c in chain_cuts(p) for i in (c.tail, c.head)}
    assert cuts == {"in", "e0", "e1", "e2"}          # (e2 -> cross_k jumps over the decoder)
    s = spine(p)
    # (the wide layers' work over two devices outweighs their critical path, the chained
    # layer's path its work: apart, their estimates add up to more than together)
    assert [p.tasks[v] for v in s.pivots] == ["self0", "cross0", "self2"]
    assert [[p.tasks[i] for i in w] for w in s.windows][1:] == [
        ["cross0", "h0_0", "h0_1", "h0_2"], ["self1", "cross1", "h1_0", "h1_1", "h1_2", "self2"],
        ["cross2", "h2_0", "h2_1", "h2_2"]]
    assert s.covered == len(p.tasks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=12, max_devices=2))
def test_windows_hold_only_tasks_between_their_pivots(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    s, g = spine(p), p.graph
    if s is None:   # (every task leaves too many out)
        closure = nx.transitive_closure_dag(g)
        assert all(len(p.tasks) - 1 - closure.in_degree(v) - closure.out_degree(v) > MOST_LEFT_OUT * len(p.tasks)
                   for v in g)
        return
    for before, after in zip(s.pivots, s.pivots[1:]):
        assert after in nx.descendants(g, before)
    seen = set()
    for t, (window, entry) in enumerate(zip(s.windows, s.entries)):
        assert window and not seen & set(window)
        seen |= set(window)
        pivot = s.pivots[t] if t < len(s.pivots) else None
        for i in window:
            assert entry is None or i in nx.descendants(g, entry)
            assert pivot is None or i == pivot or i in nx.ancestors(g, pivot)
    assert s.entries[0] is None and s.covered == len(seen)
