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


def test_without_communication_data_still_needs_a_link_path():
    # Two devices without a link: the check refuses data across them with or without transfer
    # times, and so does the MILP now (without communication it built no row for it, and its
    # schedule failed: "no link path from c to g").
    import schedkit
    from schedkit import Problem

    fork = Problem.from_dict({
        "devices": [{"name": "g"}, {"name": "c"}],
        "tasks": [{"name": n, "durations": {"g": 1, "c": 1}, "output_size": 10} for n in ("a", "b", "c1", "d")],
        "edges": [{"src": "a", "dst": "b"}, {"src": "a", "dst": "c1"}, {"src": "b", "dst": "d"},
                  {"src": "c1", "dst": "d"}]})
    for solver in ("highs", "cpsat"):
        found = schedkit.solve(fork, "milp", formulation="jssp", solver=solver)
        assert found.status == "optimal" and found.makespan == 4 and found.violations(fork) == []
        assert len(set(found.placement().values())) == 1
