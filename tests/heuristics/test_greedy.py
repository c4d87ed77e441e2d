"""Greedy: earliest finish in breadth-first order without insertion, and the method contract."""

from hypothesis import HealthCheck, given, settings

from helpers.method_contract import check_deterministic, check_examples, check_random
from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, solve


def test_spreads_independent_tasks_by_earliest_finish():
    p = Problem.from_dict({
        "name": "spread", "devices": [{"name": "a"}, {"name": "b", "speed": 0.5}],
        "tasks": [{"name": f"t{i}", "work": 1.0} for i in range(3)]})
    s = solve(p, "greedy")
    # t0 on a [0,1], t1 on a [1,2] (finish 2 = b's finish, the lower index wins), t2 on b [0,2].
    assert [(r.device, r.start) for r in s.tasks] == [("a", 0.0), ("a", 1.0), ("b", 0.0)]
    assert s.makespan == 2.0


def test_no_insertion_by_default():
    # BFS order: head, mid, late, short. 'late' waits for 'head' on b and runs at 10 on a;
    # 'short' is ready at 1 but comes after 'late': greedy queues it behind 'late', with
    # insertion it fills the idle gap [1, 2] on a.
    p = Problem.from_dict({
        "name": "gap", "devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "tasks": [{"name": "head", "durations": {"b": 10.0}},
                  {"name": "mid", "durations": {"c": 1.0}},
                  {"name": "late", "durations": {"a": 1.0}},
                  {"name": "short", "durations": {"a": 1.0}}],
        "edges": [{"src": "head", "dst": "late", "size": 0},
                  {"src": "mid", "dst": "short", "size": 0}]})
    start = {r.task: r.start for r in solve(p, "greedy").tasks}
    assert (start["late"], start["short"]) == (10.0, 11.0)
    start = {r.task: r.start for r in solve(p, "greedy", insertion=True).tasks}
    assert (start["late"], start["short"]) == (10.0, 1.0)


def test_examples():
    check_examples("greedy")


def test_deterministic():
    check_deterministic("greedy")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3))
def test_random_problems(data):
    check_random(data, "greedy")
    check_random(data, "greedy", insertion=True)
