"""Block ``precedence``: golden LP, and its violations on hand-written schedules."""

from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule
from schedkit.blocks import Precedence


def test_golden_lp(tmp_path):
    text = check_golden("precedence", tmp_path)
    for row in ("precedence.delay(a_b_data)", "precedence.delay(a_b_from_gpu)",
                "precedence.delay(a_c_from_cpu)"):
        assert row in text


def test_feasible_schedule_has_no_violation():
    assert block("precedence").violations(problem(), schedule(OPTIMAL)) == []


def test_transfer_time_is_required_across_devices():
    # b starts when a ends, but a's data needs 4 / 2 + 0.5 = 2.5 to reach the cpu.
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 1, 5)]
    found = block("precedence").violations(problem(), schedule(rows))
    assert len(found) == 1
    assert found[0].startswith("edge a->b: 'b' starts at 1, before 3.5")


def test_without_communication_only_the_order_counts():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 1, 5)]
    assert Precedence(communication=False).violations(problem(), schedule(rows)) == []
    early = [("a", "gpu", 0, 1), ("c", "gpu", 0.5, 1.5), ("b", "cpu", 1, 5)]
    found = Precedence(communication=False).violations(problem(), schedule(early))
    assert len(found) == 1 and found[0].startswith("edge a->c: 'c' starts at 0.5")
