"""Block ``assignment``: golden LP, and its violations on hand-written schedules."""

from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule


def test_golden_lp(tmp_path):
    text = check_golden("assignment", tmp_path)
    assert "assignment.one_device(a)" in text and "assignment.one_device(b)" in text
    assert "assignment.one_device(c)" not in text  # c is pinned: no choice, no row


def test_feasible_schedule_has_no_violation():
    assert block("assignment").violations(problem(), schedule(OPTIMAL)) == []


def test_wrong_duration_is_reported():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 3.5, 6)]
    found = block("assignment").violations(problem(), schedule(rows))
    assert found == ["task 'b' lasts 2.5 on cpu, needs 4"]


def test_disallowed_device_is_reported():
    rows = [("a", "gpu", 0, 1), ("c", "cpu", 1, 3), ("b", "cpu", 3.5, 7.5)]
    found = block("assignment").violations(problem(), schedule(rows))
    assert found == ["task 'c' may not run on cpu"]
