"""Simulated annealing: never worse than its start, deterministic per seed, the method contract."""

import time

import pytest
from hypothesis import HealthCheck, given, settings

from helpers.method_contract import check_deterministic, check_examples, check_random, example
from schedkit.testing.strategies import problems as problem_data
from schedkit import SchedkitError, solve


def test_examples():
    check_examples("annealing", iterations=300)


def test_deterministic():
    check_deterministic("annealing", iterations=300, seed=7)


def test_finds_the_optimum_of_the_heft_paper_graph():
    # HEFT gives 80; the exact optimum is 73 (see examples/topcuoglu2002.json's source).
    assert solve(example("topcuoglu2002.json"), "annealing", iterations=2000).makespan == 73.0


def test_zero_iterations_return_the_start():
    p = example("topcuoglu2002.json")
    s = solve(p, "annealing", iterations=0)
    heft = solve(p, "heft")
    assert s.makespan == heft.makespan
    assert s.placement() == heft.placement()
    assert s.method == "annealing"


def test_other_start_methods():
    p = example("topcuoglu2002.json")
    for start in ("met", "greedy", None):
        s = solve(p, "annealing", iterations=200, start=start)
        if start is not None:
            assert s.makespan <= solve(p, start).makespan


def test_bad_start():
    p = example("tiny.yaml")
    with pytest.raises(SchedkitError, match="itself"):
        solve(p, "annealing", start="annealing")
    with pytest.raises(SchedkitError, match="unknown method"):
        solve(p, "annealing", start="nope")


def test_time_limit_stops_the_search():
    began = time.perf_counter()
    solve(example("topcuoglu2002.json"), "annealing", iterations=10**9, time_limit=0.2)
    assert time.perf_counter() - began < 5


def test_options_are_checked():
    with pytest.raises(SchedkitError, match="iterations"):
        solve(example("tiny.yaml"), "annealing", iterations=-1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3))
def test_random_problems_valid_and_never_worse_than_heft(data):
    s = check_random(data, "annealing", iterations=100, seed=1)
    if s is not None:
        heft = solve(data, "heft")
        assert s.makespan <= heft.makespan
