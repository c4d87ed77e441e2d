"""MET: fastest device that fits, and the method contract."""

from hypothesis import HealthCheck, given, settings

from helpers.method_contract import check_deterministic, check_examples, check_random, example
from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, solve


def two_devices(memory=None):
    devices = [{"name": "fast"}, {"name": "slow"}]
    if memory is not None:
        devices[0]["memory"] = memory
    return Problem.from_dict({
        "name": "pair", "devices": devices,
        "links": [{"src": "fast", "dst": "slow", "bandwidth": 1.0}],
        "tasks": [{"name": f"t{i}", "durations": {"fast": 1.0, "slow": 5.0}, "memory": 1.0}
                  for i in range(3)]})


def test_every_task_on_its_fastest_device():
    s = solve(two_devices(), "met")
    assert {r.device for r in s.tasks} == {"fast"}
    assert s.makespan == 3.0          # one after another: load is ignored


def test_memory_sends_tasks_elsewhere():
    s = solve(two_devices(memory=2.0), "met")
    assert sorted(r.device for r in s.tasks) == ["fast", "fast", "slow"]


def test_tiny_uses_the_gpu():
    s = solve(example("tiny.yaml"), "met")
    assert {r.device for r in s.tasks if r.task != "sample"} == {"gpu0"}


def test_examples():
    check_examples("met")


def test_deterministic():
    check_deterministic("met")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3))
def test_random_problems(data):
    check_random(data, "met")
