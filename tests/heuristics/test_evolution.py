"""Biased (1+1) EA: never worse than its start, deterministic per seed, the method contract."""

import pytest
from hypothesis import HealthCheck, given, settings

from helpers.method_contract import check_deterministic, check_examples, check_random, example
from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, SchedkitError, solve
from schedkit.heuristics.components import fastest_devices
from schedkit.timing import OrderedTiming
from schedkit.problem.space import PlacementSpace


def test_examples():
    check_examples("evolution", iterations=300)


def test_deterministic():
    check_deterministic("evolution", iterations=300, seed=3)


def test_seeds_differ_in_their_path():
    p = example("topcuoglu2002.json")
    runs = {solve(p, "evolution", iterations=30, seed=s).to_json(indent=None).split('"tasks"')[1]
            for s in range(6)}
    assert len(runs) > 1


def test_zero_iterations_return_the_fastest_devices():
    p = example("topcuoglu2002.json")
    s = solve(p, "evolution", iterations=0)
    fastest = fastest_devices(p)
    assert [p.device_index[r.device] for r in s.tasks] == fastest
    assert s.makespan == OrderedTiming(p)(fastest)


def test_start_from_heft_is_never_worse_than_heft():
    p = example("topcuoglu2002.json")
    assert solve(p, "evolution", iterations=200, start="heft").makespan <= 80.0


def test_infeasible_fastest_string_starts_from_met():
    # Both tasks are fastest on 'fast', which holds only one of them.
    p = Problem.from_dict({
        "name": "full", "devices": [{"name": "fast", "memory": 1.0}, {"name": "slow"}],
        "tasks": [{"name": f"t{i}", "durations": {"fast": 1.0, "slow": 2.0}, "memory": 1.0}
                  for i in range(2)]})
    assert not PlacementSpace(p).feasible(fastest_devices(p))
    s = solve(p, "evolution", iterations=50)
    s.validate(p)
    assert sorted(r.device for r in s.tasks) == ["fast", "slow"]


def test_bad_start():
    with pytest.raises(SchedkitError, match="itself"):
        solve(example("tiny.yaml"), "evolution", start="evolution")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3))
def test_random_problems_valid_and_never_worse_than_start(data):
    s = check_random(data, "evolution", iterations=100, seed=2)
    if s is None:
        return
    p = Problem.from_dict(data)
    fastest = fastest_devices(p)
    if PlacementSpace(p).feasible(fastest):
        assert s.makespan <= OrderedTiming(p)(fastest)
    else:
        assert s.makespan <= solve(p, "evolution", iterations=0).makespan
