"""chain_split: contiguous stretches that fit memory, cut where transfers are cheap; the contract."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers.method_contract import check_deterministic, check_examples, check_random
from schedkit import Problem, ProblemError, solve
from schedkit.heuristics.chain_split import latest_order, split_devices
from schedkit.testing.strategies import problems as problem_data


def chain(capacities, sizes, memory=1):
    """A chain of unit tasks of ``memory`` on devices of ``capacities``, all linked."""
    names = [f"d{k}" for k in range(len(capacities))]
    return Problem.from_dict({
        "name": "chain", "devices": [{"name": n, "memory": c} for n, c in zip(names, capacities)],
        "links": [{"src": a, "dst": b, "bandwidth": 1} for k, a in enumerate(names) for b in names[k + 1:]],
        "tasks": [{"name": f"t{k}", "work": 1, "memory": memory} for k in range(len(sizes) + 1)],
        "edges": [{"src": f"t{k}", "dst": f"t{k + 1}", "size": s} for k, s in enumerate(sizes)]})


def test_a_chain_is_cut_at_its_cheapest_edges_that_fit():
    p = chain([2, 2, 2], [9, 1, 9, 2, 9])   # two tasks per device: cuts after t1 and t3
    s = solve(p, "chain_split")
    assert [r.device for r in s.tasks] == ["d0", "d0", "d1", "d1", "d2", "d2"]
    assert s.makespan == 6 + 1 + 2 == s.bound


def test_a_device_is_reused_when_its_memory_holds_a_second_stretch():
    p = chain([3, 1], [1, 1, 1])   # 4 tasks: d0 holds three, d1 one
    assert sorted(r.device for r in solve(p, "chain_split").tasks) == ["d0", "d0", "d0", "d1"]


def test_no_split_that_fits_is_said():
    with pytest.raises(ProblemError, match="chain_split"):
        split_devices(chain([1, 1], [1, 1], memory=1))


def test_weights_wait_beside_their_layer():
    p = Problem.from_dict({"devices": [{"name": "d"}],
                           "tasks": [{"name": n, "work": 1} for n in ("a", "b", "w", "c")],
                           "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "w", "dst": "c"}]})
    assert [p.tasks[i] for i in latest_order(p)] == ["a", "b", "w", "c"]


def test_msr_resnet50_layer_graph_beats_heft():
    from schedkit.importers.msr import load_msr

    p = Problem.from_dict(load_msr("data/msr-dnn/layer/resnet50_inference.json"))
    s = solve(p, "chain_split")
    assert s.makespan < 1000 < solve(p, "heft").makespan      # 969.7 against 1351.4
    assert s.bound > 700


def test_examples():
    check_examples("chain_split")


def test_deterministic():
    check_deterministic("chain_split")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=3))
def test_random_problems(data):
    check_random(data, "chain_split")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=8, max_devices=5, transfer_times=True), st.booleans())
def test_cut_matrix_equals_the_cut_costs_pair_by_pair(data, communication):
    from schedkit.heuristics.chain_split import _CutMatrix
    from schedkit.problem.path_split import CutCosts, device_classes

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    classes = device_classes(p)
    cuts = CutCosts(p, classes, communication)
    matrix = _CutMatrix(cuts, len(classes))
    for _, _, size in p.edges:
        for value in (size, 0.0, 2.5):
            found = matrix(value)
            assert [[float(x) for x in row] for row in found] == \
                [[cuts(value, a, b) for b in range(len(classes))] for a in range(len(classes))]


def test_a_skip_edge_with_slack_costs_only_its_delay():
    from schedkit.heuristics.chain_split import _CutMatrix, _units
    from schedkit.heuristics.cut_delays import cut_delays
    from schedkit.problem.path_split import CutCosts, device_classes

    p = Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
        "tasks": [{"name": f"t{k}", "work": 2} for k in range(5)],
        "edges": [{"src": f"t{k}", "dst": f"t{k + 1}", "size": 1} for k in range(4)]
        + [{"src": "t0", "dst": "t4", "size": 7}]})   # made 6 before t4 needs it: 1 late
    classes = device_classes(p)
    matrix = _CutMatrix(CutCosts(p, classes, True), len(classes))
    units = _units(p, [0, 1, 2, 3, 4])
    assert [float(d[0, 0]) for d in cut_delays(p, units, matrix, "max")] == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert [float(d[0, 0]) for d in cut_delays(p, units, matrix, "sum")] == [0.0, 2.0, 2.0, 2.0, 2.0]
    # (the plain charge of a cut is its largest tensor: 7 wherever the skip edge crosses)
    assert solve(p, "chain_split").makespan <= 10.0 + 1e-9
