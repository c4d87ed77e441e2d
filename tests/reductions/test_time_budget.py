"""The end of a solve: what every method with a time limit keeps back for a schedule of this size."""

import pytest

from schedkit import Problem
from schedkit.generators import layered
from schedkit.reductions import budget as budget_module
from schedkit.reductions.budget import FINISH_MEASURED, finish_seconds, slowdown


def layered_problem(levels, width, seed=0):
    return Problem.from_dict(layered(levels=levels, width=width, edge_prob=0.3, long_range_prob=0.2, devices=3, seed=seed))


def test_the_reserve_is_about_zero_on_a_small_schedule_and_grows_with_its_edges_and_tasks():
    tiny = Problem.load("examples/tiny.yaml")
    small, larger = layered_problem(10, 10), layered_problem(40, 60)
    assert slowdown(small) == slowdown(larger) == 1.0   # (below FINISH_MEASURED: not measured)
    assert finish_seconds(tiny) < finish_seconds(small) < 0.01 < finish_seconds(larger) < 0.1
    size = len(larger.edges) + len(larger.tasks)
    assert finish_seconds(larger) == pytest.approx(budget_module.FINISH_SECONDS * size)


def test_on_a_large_schedule_the_reserve_is_scaled_by_the_machine_s_slowdown_measured_once(monkeypatch):
    p = layered_problem(40, 60)
    size = len(p.edges) + len(p.tasks)
    monkeypatch.setattr(budget_module, "FINISH_MEASURED", size)  # (this graph counts as large)
    measured = slowdown(p)
    assert 1.0 <= measured <= 8.0
    assert finish_seconds(p) == pytest.approx(measured * budget_module.FINISH_SECONDS * size)
    p.arrays.__dict__["_slowdown"] = 4.0                         # a machine shared four ways
    assert finish_seconds(p) == pytest.approx(4.0 * budget_module.FINISH_SECONDS * size)
    # 100,000 tasks and 3 M edges on an unshared machine: seconds, not milliseconds
    assert budget_module.FINISH_SECONDS * 3.1e6 > 1.0 and FINISH_MEASURED < 3.1e6
