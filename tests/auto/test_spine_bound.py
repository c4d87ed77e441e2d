"""The spine's bound: never above a proven optimum, whatever the formulation's transfers;
above the whole problem's bounds where windows in series each pay their own transfers."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit.auto.spine_bound import spine_bound, spine_phase, window_part
from schedkit.auto.state import Incumbent
from schedkit.problem.bounds import formulation_bound
from schedkit.problem.spine import spine
from schedkit.semantics import get_formulation
from schedkit.testing.strategies import problems

from helpers.optima import FORMULATIONS, built, proven_optimum
from helpers.spine_cases import layers


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=8, max_devices=3, channels=True, transfer_times=True), st.sampled_from(FORMULATIONS))
def test_never_above_the_proven_optimum(data, name):
    problem = built(data)
    formulation = get_formulation(name)
    bound = spine_bound(problem, list(formulation.blocks), formulation.timing_rules(problem), 30)
    assume(bound is not None)
    optimum = proven_optimum(problem, name)
    assume(optimum is not None)
    assert bound <= optimum + 1e-6 * max(1.0, optimum)


def test_windows_in_series_each_pay_their_transfers():
    problem = layers()
    formulation = get_formulation("latency")
    rules, blocks = formulation.timing_rules(problem), list(formulation.blocks)
    # (each layer on one device: 3 x 2 + 1 = 7; a task of a wide layer moved to the other
    # device ends its join at 3 + 2 + 3 + 1 = 9 after the fork)
    assert proven_optimum(problem, "latency") == pytest.approx(22.0)
    assert formulation_bound(problem, blocks) == pytest.approx(14.0)     # (the critical path)
    s = spine(problem)
    assert [[problem.tasks[i] for i in w] for w in s.windows][1:] == [
        ["x0", "y0", "z0", "join0"], ["x1", "y1", "z1", "join1"], ["x2", "y2", "z2", "join2"]]
    assert window_part(problem, s, 1).tasks[-1] == "in~twin"            # (the fork's data to x0, y0, z0)
    # (the fork 1, the chained layer 7, each wide layer 6: its relaxation lets the two tasks
    # on one device overlap, then the join waits for the third's data, 3 + 2 + 1 after the fork)
    assert spine_bound(problem, blocks, rules, 30) == pytest.approx(20.0)


@pytest.mark.parametrize("skip_edge", [True, False])
def test_the_phase_bounds_where_no_chain_of_small_modules_does(skip_edge):
    problem = layers(skip=skip_edge)
    formulation = get_formulation("latency")
    state = Incumbent(problem, list(formulation.blocks))
    spine_phase(problem, state, 30, list(formulation.blocks), formulation.timing_rules(problem))
    record = state.records()[-1]
    if skip_edge:     # (no chain cut: the windows bound the whole)
        assert state.bound == record["bound"] == pytest.approx(20.0) and state.bound_from == "spine"
        assert record["note"] == "4 windows between 3 pivots hold 13 of 13 tasks"
    else:             # (chain cuts split the layers: the series phase's work)
        assert state.bound is None and record["note"].startswith("skipped: chain cuts split the graph")
