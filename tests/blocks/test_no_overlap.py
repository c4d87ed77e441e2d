"""Block ``no_overlap``: golden LP, and its violations on hand-written schedules."""

import pytest
from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule

import schedkit
from schedkit.generators import erdos_renyi


def test_golden_lp(tmp_path):
    text = check_golden("no_overlap", tmp_path)
    # Only b and c are unordered by the graph and may share the gpu.
    assert "no_overlap.disjunct(b_c_gpu_before)" in text
    assert "no_overlap.disjunct(b_c_gpu_after)" in text
    assert "order(a_" not in text


def test_golden_lp_bigm_encoding(tmp_path):
    text = check_golden("no_overlap_bigm", tmp_path)
    assert "no_overlap.disjunct(b_c_gpu_before)" in text and "end(b)" in text


@pytest.mark.parametrize("seed", range(4))
def test_both_encodings_prove_the_same_optimum(seed):
    problem = schedkit.Problem.from_dict(erdos_renyi(tasks=9, edge_prob=0.25, devices=3, seed=seed))
    found = []
    for encoding in ("device", "bigm"):
        formulation = {"blocks": ["assignment", "precedence", {"no_overlap": {"encoding": encoding}}]}
        s = schedkit.solve(problem, "milp", formulation=formulation, warm_start="none")
        assert s.status == "optimal"
        found.append(s.makespan)
    assert found[0] == pytest.approx(found[1], rel=1e-6)


def test_feasible_schedule_has_no_violation():
    assert block("no_overlap").violations(problem(), schedule(OPTIMAL)) == []


def test_touching_tasks_do_not_overlap():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "gpu", 2, 4)]
    assert block("no_overlap").violations(problem(), schedule(rows)) == []


def test_overlap_names_device_and_tasks():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "gpu", 1.5, 3.5)]
    found = block("no_overlap").violations(problem(), schedule(rows))
    assert found == ["device gpu: 'c' [1, 2) overlaps 'b' [1.5, 3.5)"]


def test_overlap_inside_a_long_task_is_found():
    # b is nested inside a long a: the check must compare with the latest-ending task.
    rows = [("a", "cpu", 0, 3), ("b", "cpu", 0.5, 1), ("c", "cpu", 1.5, 2)]
    found = block("no_overlap").violations(problem(), schedule(rows))
    assert len(found) == 2 and all("device cpu" in f and "'a'" in f for f in found)


@pytest.mark.parametrize("solver,encoding", [("highs", "device"), ("highs", "bigm"), ("cpsat", "device")])
def test_a_task_of_zero_duration_may_sit_inside_another(solver, encoding):
    # z takes no time on d1 while `long` runs there from 0 to 10: the validator lets z run at 1,
    # between p and q on d2, so the makespan is 10 (11 if z had to wait for `long` or go first).
    data = {"name": "zero", "devices": [{"name": "d1"}, {"name": "d2"}],
            "tasks": [{"name": "long", "durations": {"d1": 10}}, {"name": "p", "durations": {"d2": 1}},
                      {"name": "z", "durations": {"d1": 0}}, {"name": "q", "durations": {"d2": 1}}],
            "edges": [{"src": "p", "dst": "z"}, {"src": "z", "dst": "q"}]}
    problem = schedkit.Problem.from_dict(data)
    formulation = {"blocks": ["assignment", "precedence", {"no_overlap": {"encoding": encoding}}]}
    s = schedkit.solve(problem, "milp", formulation=formulation, solver=solver, warm_start="none")
    assert (s.status, s.makespan) == ("optimal", 10)
    assert s.violations(problem) == []
