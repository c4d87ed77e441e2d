"""Block ``memory``: golden LP, and its violations on hand-written schedules."""

from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule


def test_golden_lp(tmp_path):
    text = check_golden("memory", tmp_path)
    # gpu: capacity 10 minus the pinned c (3) for the flexible a and b.
    assert "memory.capacity(gpu)" in text
    assert "memory.capacity(cpu)" not in text  # unlimited


def test_feasible_schedule_has_no_violation():
    assert block("memory").violations(problem(), schedule(OPTIMAL)) == []


def test_overfull_device_is_named():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "gpu", 2, 4)]
    found = block("memory").violations(problem(), schedule(rows))
    assert found == ["device gpu holds 15 of memory, capacity 10"]
