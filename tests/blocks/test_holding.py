"""The kernel's MILP rows of a held resource (:func:`~schedkit.blocks.holding.resource_rows`) reach
the optima worked out by hand, never cut off a valid schedule, and refuse a capacity above 1."""

import pytest
from helpers.holding_block import holding

from schedkit import Problem, solve
from schedkit.errors import FormulationError
from schedkit.testing import check_block

#: a (2) feeds b (1); c (1) is free. Side by side: a on one device, c on the other, b after a: 3.
FORK = Problem.from_dict({
    "name": "fork", "devices": [{"name": "d0"}, {"name": "d1"}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}],
    "tasks": [{"name": "a", "work": 2}, {"name": "b", "work": 1}, {"name": "c", "work": 1}],
    "edges": [{"src": "a", "dst": "b", "size": 0}]})
THREE = Problem.from_dict({
    "name": "three", "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
    "tasks": [{"name": f"mm{k}", "work": 2} for k in range(3)]})


@pytest.mark.parametrize("problem, tasks, optimum, free", [
    # a and c take turns: a [0, 2), then c [2, 3) beside b [2, 3): still 3 (c first would give 4)
    (FORK, ("a", "c"), 3.0, 3.0),
    # a, b and c all take turns: 2 + 1 + 1
    (FORK, ("a", "b", "c"), 4.0, 3.0),
    # three MatMuls of 2 in turn, on three devices: 6 (side by side: 2)
    (THREE, ("mm0", "mm1", "mm2"), 6.0, 2.0),
    # two of them in turn, the third beside: 4
    (THREE, ("mm0", "mm1"), 4.0, 2.0),
])
def test_the_milp_reaches_the_optimum_worked_out_by_hand(problem, tasks, optimum, free):
    s = solve(problem, "milp", formulation=holding(tasks))
    assert s.status == "optimal" and s.makespan == pytest.approx(optimum, rel=1e-9)
    assert solve(problem, "milp", formulation=holding(())).makespan == pytest.approx(free, rel=1e-9)


def test_the_rows_never_cut_off_a_valid_schedule_and_the_check_rejects_an_overlap():
    block = {"test_holds": {"tasks": ["mm0", "mm1", "mm2"]}}
    feasible = solve(THREE, "heft", formulation=holding(("mm0", "mm1", "mm2")))
    side_by_side = solve(THREE, "heft")
    check_block(block, THREE, feasible=feasible, infeasible=side_by_side)


def test_a_capacity_above_one_is_refused_by_the_rows_and_honoured_by_the_heuristics():
    with pytest.raises(FormulationError, match="resource 'unit': the MILP rows hold capacity 1 only, not 2"):
        solve(THREE, "milp", formulation=holding(("mm0", "mm1", "mm2"), capacity=2))
    assert solve(THREE, "heft", formulation=holding(("mm0", "mm1", "mm2"), capacity=2)).makespan == 4.0


@pytest.mark.parametrize("capacity, optimum", [(1, 6.0), (2, 4.0)])
def test_cp_sat_reaches_the_same_optimum_with_the_cumulative_form(capacity, optimum):
    pytest.importorskip("ortools")
    s = solve(THREE, "milp", formulation=holding(("mm0", "mm1", "mm2"), capacity), solver="cpsat")
    assert s.status == "optimal" and s.makespan == pytest.approx(optimum, rel=1e-9)
