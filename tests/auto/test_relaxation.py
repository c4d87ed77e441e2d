"""The placement relaxation: never above a proven optimum, whatever the formulation's transfers;
stronger than the combinatorial bounds where a split pays transfers or a port queues them."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem
from schedkit.auto.relaxation import MAX_TASKS, relaxation_bound
from schedkit.problem.bounds import formulation_bound, lower_bound
from schedkit.semantics import get_formulation
from schedkit.testing.strategies import problems
from schedkit.timing import TimingRules

from helpers.optima import FORMULATIONS, built, proven_optimum


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=7, max_devices=3, channels=True, transfer_times=True), st.sampled_from(FORMULATIONS))
def test_never_above_the_proven_optimum(data, name):
    problem = built(data)
    formulation = get_formulation(name)
    optimum = proven_optimum(problem, name)
    assume(optimum is not None)
    rules = formulation.timing_rules(problem)
    bound = relaxation_bound(problem, rules, 30)
    assert bound <= optimum + 1e-6 * max(1.0, optimum)
    # (the floor given is kept, and never lowers the bound: up to HiGHS's gap tolerance, 1e-6
    # between two solves of one model)
    floor = formulation_bound(problem, formulation.blocks)
    with_floor = relaxation_bound(problem, rules, 30, floor)
    assert with_floor >= floor and with_floor >= bound - 1e-6 * max(1.0, bound)


def _fan_out(k: int = 4) -> Problem:
    """A source on d0 feeding ``k`` tasks that run only on d1: ``k`` transfers of 1 leave d0."""
    return Problem.from_dict({
        "devices": [{"name": "d0"}, {"name": "d1"}],
        "links": [{"src": "d0", "dst": "d1", "bandwidth": 1}],
        "tasks": [{"name": "a", "durations": {"d0": 0.1}}]
                 + [{"name": f"b{j}", "durations": {"d1": 0.1}} for j in range(k)],
        "edges": [{"src": "a", "dst": f"b{j}", "size": 1} for j in range(k)]})


def test_ports_queue_the_transfers_that_leave_one_device():
    problem = _fan_out()
    ports = get_formulation("moirai").timing_rules(problem)
    delays = ports.replace(congestion=None)
    optimum = proven_optimum(problem, "moirai")
    assert optimum == pytest.approx(4.2)        # a, four transfers one after another, the last b
    assert relaxation_bound(problem, delays, 10) == pytest.approx(1.2)     # one transfer on a path
    assert relaxation_bound(problem, ports, 10) == pytest.approx(4.0)      # d0's send port: 4 transfers
    assert lower_bound(problem) < 1.0


def test_a_split_pays_its_transfers():
    # (two devices of equal speed: the load bound halves the work; a split pays a transfer
    # of 3 on a path, so the relaxation keeps both tasks after t0 on its device)
    problem = Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
        "tasks": [{"name": f"t{k}", "work": 2} for k in range(3)],
        "edges": [{"src": "t0", "dst": "t1", "size": 3}, {"src": "t0", "dst": "t2", "size": 3}]})
    rules = get_formulation("latency").timing_rules(problem)
    assert lower_bound(problem) == pytest.approx(4.0)
    assert relaxation_bound(problem, rules, 10) == pytest.approx(6.0) == proven_optimum(problem, "latency")


def test_where_it_does_not_apply_the_floor_is_returned():
    problem = _fan_out()
    assert relaxation_bound(problem, TimingRules(), 10, 0.5) == 0.5            # edges not ordered
    rules = get_formulation("moirai").timing_rules(problem)
    assert relaxation_bound(problem, rules, 0, 0.5) == 0.5                     # no time
    large = _fan_out(MAX_TASKS)
    assert relaxation_bound(large, rules, 10, 0.5) == 0.5                      # too many tasks
