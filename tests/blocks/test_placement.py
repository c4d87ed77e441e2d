"""Block ``placement``: golden LP, and its violations on hand-written schedules."""

from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule


def test_golden_lp(tmp_path):
    text = check_golden("placement", tmp_path)
    # c is pinned to the gpu, so its collocated partner a must be there too.
    assert "placement.colocate(c_gpu)" in text and "placement.colocate(c_cpu)" in text


def test_feasible_schedule_has_no_violation():
    assert block("placement").violations(problem(), schedule(OPTIMAL)) == []


def test_pin_violation_names_the_task():
    rows = [("a", "cpu", 0, 3), ("c", "cpu", 3, 5), ("b", "cpu", 5, 9)]
    found = block("placement").violations(problem(), schedule(rows))
    assert found == ["task 'c' is on cpu, pinned to gpu"]


def test_split_collocation_group_is_reported():
    rows = [("a", "cpu", 0, 3), ("c", "gpu", 4.5, 5.5), ("b", "cpu", 3, 7)]
    found = block("placement").violations(problem(), schedule(rows))
    assert found == ["collocation group 'g' is split over cpu, gpu"]


def test_golden_solution_keeps_the_group_together():
    from schedkit import Formulation
    from schedkit.milp.context import ModelContext  # noqa: F401  (kernel import sanity)

    f = Formulation.from_data({"blocks": ["assignment", "placement", "precedence", "no_overlap", "memory"]})
    from schedkit.milp import Milp

    s = Milp(formulation=f).solve(problem())
    assert s.placement()["a"] == s.placement()["c"] == "gpu"
