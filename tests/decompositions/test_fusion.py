"""fusion: ordered rules on task op, across direct and multi-input connections only."""

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.decompositions.fusion import Fusion, canonical_op, fusion_groups, load_rules


def block(branch_feeds_add=True):
    """conv-bn-relu, then a residual block: conv-bn-add-relu with the first relu feeding the add."""
    edges = [("c1", "b1"), ("b1", "r1"), ("r1", "c2"), ("c2", "b2"), ("b2", "a2"), ("a2", "r2")]
    if branch_feeds_add:
        edges.append(("r1", "a2"))
    return Problem.from_dict({
        "name": "block", "devices": [{"name": "gpu"}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 10}],
        "tasks": [{"name": n, "durations": {"gpu": 1, "cpu": 3}, "op": op, "memory": 1} for n, op in
                  [("c1", "Conv"), ("b1", "BatchNormalization"), ("r1", "Relu"), ("c2", "Conv2d"),
                   ("b2", "batch_norm"), ("a2", "Add"), ("r2", "ReLU")]],
        "edges": [{"src": s, "dst": d, "size": 1} for s, d in edges]})


def names(p, groups):
    return [[p.tasks[i] for i in g] for g in groups]


def test_default_rules_fuse_across_direct_and_multi_input_connections():
    p = block()
    assert names(p, fusion_groups(p)) == [["c1", "b1", "r1"], ["c2", "b2", "a2", "r2"]]
    coarse, _ = Fusion().apply(p)
    assert coarse.spec.tasks[1].op == "Conv2d+batch_norm+Add+ReLU"
    assert coarse.durations[1] == {0: 4.0, 1: 12.0} and coarse.task_memory[1] == 4.0


def test_never_across_a_multi_output_connection():
    p = block()
    # r1 feeds c2 and a2: a rule [relu, conv] must not fuse r1 into c2
    assert names(p, fusion_groups(p, load_rules([["relu", "conv"]])))[2] == ["r1"]
    # b1 -> r1 is direct: fused
    assert ["b1", "r1"] in names(p, fusion_groups(p, load_rules([["bn", "relu"]])))


def test_rules_are_tried_in_order():
    p = block(branch_feeds_add=False)
    short_first = load_rules([["conv", "bn"], ["conv", "bn", "relu"]])
    assert names(p, fusion_groups(p, short_first))[0] == ["c1", "b1"]


def test_user_rules_from_a_yaml_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - [Conv, BatchNormalization]\n  - [add, relu]\n")
    assert load_rules(str(path)) == (("conv", "bn"), ("add", "relu"))
    s = solve(block(), "fusion", rules=str(path), inner="milp", executor="serial")
    s.validate(block())
    assert s.status == "feasible" and s.placement()["a2"] == s.placement()["r2"]


@pytest.mark.parametrize("rules, message", [
    ("[conv, bn]", "rule 1 is not a list of two operator names or more: 'conv'"),
    ([["conv"]], "rule 1 is not a list of two operator names or more"),
    ([["conv", 3]], "rule 1 is not a list of two operator names or more"),
    ("{a: 1}", "expected a list of rules"),
    ("[[conv, bn", "malformed YAML"),
    ("missing.yaml", "missing.yaml: cannot read"),
])
def test_bad_rules_are_one_line_errors(rules, message):
    with pytest.raises(SchedkitError) as error:
        solve(block(), "fusion", rules=rules)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_operator_names_are_compared_with_aliases():
    assert [canonical_op(x) for x in ["Conv2d", "BatchNorm2d", "relu6", "Sum", "MatMul", None]] == \
        ["conv", "bn", "relu", "add", "matmul", ""]


def test_fusion_then_bridge_dp():
    p = block()
    s = solve(p, "fusion", inner="bridge_dp", inner_options={"inner": "milp"}, executor="serial")
    s.validate(p)
    assert s.method == "fusion:bridge_dp" and len(s.tasks) == 7


def test_fusion_reports_the_status_its_inner_method_would():
    from schedkit.methods import METHODS

    p = block()
    s = solve(p, "fusion", inner="heft", executor="serial")
    assert (s.status, solve(p, "heft").status) == ("heuristic", "heuristic")  # it said "feasible"
    result = METHODS.get("fusion")(inner="heft", executor="serial").result(p)
    assert result.message == "fusion: 7 tasks scheduled as 2 (7 fused)"


def test_fusion_that_fuses_nothing_says_so():
    from schedkit.methods import METHODS

    p = block()
    result = METHODS.get("fusion")(inner="heft", executor="serial", rules=[["matmul", "add"]]).result(p)
    assert len(result.schedule.tasks) == 7
    assert result.message == "fusion fused nothing: no rule matched the tasks' op (the problem was solved as it is)"



@pytest.mark.parametrize("inner, status", [("milp", "feasible"), ("heft", "heuristic")])
def test_a_fusion_that_fused_something_proves_nothing(inner, status):
    fused = solve(block(), "fusion", inner=inner, executor="serial")
    assert fused.status == status and fused.bound is None
