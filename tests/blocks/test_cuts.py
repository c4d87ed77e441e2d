"""Block ``cuts``: golden LP, switches, and valid inequalities that never change an optimum."""

import pytest
from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule

import schedkit
from schedkit import Formulation
from schedkit.generators import erdos_renyi


def test_golden_lp(tmp_path):
    text = check_golden("cuts", tmp_path)
    assert "cuts.device_load(gpu_head_0)" in text
    assert "cuts.chain_load(a_gpu_after_0)" in text


def test_every_formulation_gets_cuts_unless_it_lists_them():
    f = Formulation.from_data({"blocks": ["assignment", "precedence"]})
    assert [b.kind for b in f.blocks] == ["assignment", "precedence", "cuts"]
    off = Formulation.from_data({"blocks": ["assignment", "precedence", {"cuts": {"load": False, "chain": False}}]})
    assert off.to_data()["blocks"][-1] == {"cuts": {"load": False, "chain": False}}
    built = off.build(problem())
    assert not any(n.startswith("cuts.") for n in built.linear.row_names())


def test_chain_rows_need_a_block_that_orders_the_edges():
    names = Formulation.from_data({"blocks": ["assignment", "no_overlap"]}).build(problem()).linear.row_names()
    assert any(n.startswith("cuts.device_load") for n in names)
    assert not any(n.startswith("cuts.chain_load") for n in names)


def test_a_cut_is_not_part_of_validity():
    cuts = block("cuts")
    assert cuts.role == "cut"
    overlapping = [("a", "gpu", 0, 1), ("c", "gpu", 0.5, 1.5), ("b", "gpu", 0, 2)]
    assert cuts.violations(problem(), schedule(overlapping)) == []
    assert cuts.violations(problem(), schedule(OPTIMAL)) == []
    assert "cuts" not in {b.kind for b in schedkit.validate.semantic_blocks(problem(), [cuts])}


@pytest.mark.parametrize("seed", range(4))
def test_cuts_never_change_the_optimum(seed):
    p = schedkit.Problem.from_dict(erdos_renyi(tasks=9, edge_prob=0.3, devices=3, seed=seed))
    found = []
    for cuts in ({}, {"load": False, "chain": False}):
        f = {"blocks": ["assignment", "precedence", "no_overlap", {"cuts": cuts}]}
        s = schedkit.solve(p, "milp", formulation=f, warm_start="none", threads=1)
        assert s.status == "optimal"
        found.append(s.makespan)
    assert found[0] == pytest.approx(found[1], rel=1e-6)
