"""Block ``channels``: golden LP, and its violations on hand-written schedules."""

from helpers.block_cases import OPTIMAL, block, check_golden, problem, schedule


def test_golden_lp(tmp_path):
    text = check_golden("channels", tmp_path)
    # Both edges may move data (no placement block keeps a with c). a -> b has a presence
    # column per moving device pair; c is pinned to the gpu, so a -> c moves exactly when a
    # sits on the cpu: x[a, cpu] itself, no column.
    for edge in ("a_b", "a_c"):
        assert f"channels.arrive({edge})" in text
        assert f"transfer_leave({edge})" in text and f"transfer_def({edge})" in text
    assert "presence_def(a_b_gpu_cpu)" in text and "presence_def(a_b_cpu_gpu)" in text
    assert "transfer_def(a_c): +1 tend(a_c) -1 tstart(a_c) -1.5 x(a_cpu) >= 0" in text


def test_feasible_schedule_has_no_violation():
    assert block("channels").violations(problem(), schedule(OPTIMAL)) == []


def test_a_consumer_that_starts_before_its_transfer_ends_is_named():
    rows = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 1, 5)]
    found = block("channels").violations(problem(), schedule(rows))
    assert found == ["edge a->b: the transfer ends at 3.5, after 'b' starts at 1"]


def test_a_short_or_missing_transfer_row_is_named():
    s = schedule(OPTIMAL)
    (row,) = s.transfers
    short = s.model_copy(update={"transfers": [row.model_copy(update={"start": 2.0})]})
    assert block("channels").violations(problem(), short) == [
        "edge a->b: the transfer lasts 1.5, needs 2.5"]
    early = s.model_copy(update={"transfers": [row.model_copy(update={"start": 0.5, "end": 3.0})]})
    assert block("channels").violations(problem(), early) == [
        "edge a->b: the transfer starts at 0.5, before 'a' ends at 1"]
    missing = s.model_copy(update={"transfers": []})
    assert block("channels").violations(problem(), missing) == [
        "edge a->b: data moves gpu->cpu but the schedule has no transfer row"]


def test_a_transfer_may_wait():
    # The transfer leaves at 2 instead of 1; b starts at 4.5, when it arrives.
    s = schedule([("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 4.5, 8.5)])
    (row,) = s.transfers
    late = s.model_copy(update={"transfers": [row.model_copy(update={"start": 2.0, "end": 4.5})]})
    assert block("channels").violations(problem(), late) == []
