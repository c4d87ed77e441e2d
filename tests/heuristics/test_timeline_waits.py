"""Under ``memory_timeline`` the searches and the PARTITIONER+SCHEDULER methods wait for a
release rather than overflow a device, and say so when they find no schedule."""

import math

import pytest

from schedkit import Problem, ProblemError, solve
from schedkit.blocks import MemoryTimeline
from schedkit.timing import TimingRules, bfs_order
from schedkit.heuristics.search import LevelledTiming


def timeline(mode: str = "deltas") -> dict:
    return {"blocks": ["assignment", "precedence", "no_overlap", {"memory_timeline": {"mode": mode}}]}


def violations(p: Problem, schedule, mode: str = "deltas") -> list[str]:
    return MemoryTimeline(mode=mode).violations(p, schedule)


def pipeline_step() -> Problem:
    # On 'fast' (capacity 3) f1 takes 2 units and w1 gives them back: f2 fits only after w1.
    # In breadth-first order f2 (a source) comes before w1; 'slow' is 10 times slower.
    fast_slow = {"fast": 1.0, "slow": 10.0}
    return Problem.from_dict({
        "name": "step", "devices": [{"name": "fast", "memory": 3}, {"name": "slow", "memory": 3}],
        "tasks": [{"name": "f1", "durations": fast_slow, "activation_memory": 2},
                  {"name": "w1", "durations": fast_slow, "activation_memory": -2},
                  {"name": "f2", "durations": fast_slow, "activation_memory": 2}],
        "edges": [{"src": "f1", "dst": "w1"}]})


def starts(schedule) -> dict[str, tuple[str, float]]:
    return {r.task: (r.device, r.start) for r in schedule.tasks}


@pytest.mark.parametrize("method", ["annealing", "evolution"])
def test_searches_wait_for_a_release(method):
    p = pipeline_step()
    # Ignoring the timeline, the breadth-first timing runs f2 right after f1: 4 units at 1.
    blind = solve(p, method, iterations=20, start=None)
    assert starts(blind)["f2"] == ("fast", 1.0)
    assert violations(p, blind) == ["device fast: memory level 4 at time 1 exceeds its capacity 3"]
    s = solve(p, method, iterations=20, start=None, formulation=timeline())
    assert starts(s) == {"f1": ("fast", 0.0), "w1": ("fast", 1.0), "f2": ("fast", 2.0)}
    assert s.makespan == 3.0 and violations(p, s) == []


def test_levelled_timing_values_a_string_that_never_fits_inf():
    p = Problem.from_dict({
        "name": "weights", "devices": [{"name": "fast", "memory": 3}, {"name": "slow", "memory": 3}],
        "tasks": [{"name": "a", "durations": {"fast": 1, "slow": 5}, "weight_memory": 2},
                  {"name": "b", "durations": {"fast": 1, "slow": 5}, "weight_memory": 2}]})
    timing = LevelledTiming(p, bfs_order(p), rules=TimingRules(memory="deltas"))
    assert timing([0, 0]) == math.inf       # 4 units of weights on 'fast' for ever
    assert timing([0, 1]) == 5.0
    # evolution's fastest string is that inf one: it starts from MET's mapping instead
    s = solve(p, "evolution", iterations=5, formulation=timeline())
    assert sorted(r.device for r in s.tasks) == ["fast", "slow"] and violations(p, s) == []


@pytest.mark.parametrize("method", ["annealing", "evolution"])
def test_searches_say_when_no_string_fits(method):
    # a's activations are never released: b fits nowhere after it, and no string helps.
    p = Problem.from_dict({
        "name": "full", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "a", "work": 1, "activation_memory": 2},
                  {"name": "b", "work": 1, "activation_memory": 2}]})
    with pytest.raises(ProblemError, match="not a proof"):
        solve(p, method, iterations=5, formulation=timeline())


def waiting_device() -> Problem:
    # 'a' (capacity 3) runs f (+2), then must run w (-2) before g (+2); but w waits for x
    # on 'b' until 3, while g is ready at 1: 'a' must idle from 1 to 3.
    on_a = {"a": 1.0}
    return Problem.from_dict({
        "name": "idle", "devices": [{"name": "a", "memory": 3}, {"name": "b"}],
        "tasks": [{"name": "f", "durations": on_a, "activation_memory": 2},
                  {"name": "w", "durations": on_a, "activation_memory": -2},
                  {"name": "g", "durations": {"a": 5.0}, "activation_memory": 2},
                  {"name": "x", "durations": {"b": 3.0}},
                  {"name": "y", "durations": {"b": 10.0}}],
        "edges": [{"src": "f", "dst": "w"}, {"src": "x", "dst": "w"}, {"src": "w", "dst": "y"}]})


@pytest.mark.parametrize("method", ["critical_path+pct", "hash+msr", "dfs+fifo"])
def test_a_device_idles_until_a_release(method):
    p = waiting_device()
    blind = solve(p, method)
    assert starts(blind)["g"] == ("a", 1.0)                 # 4 units on 'a' from 1
    assert violations(p, blind) == ["device a: memory level 4 at time 1 exceeds its capacity 3"]
    s = solve(p, method, formulation=timeline())
    assert [starts(s)[t] for t in ("f", "w", "g")] == [("a", 0.0), ("a", 3.0), ("a", 4.0)]
    assert violations(p, s) == []


def test_lifetime_a_device_runs_the_task_that_fits():
    # a's output (2) lives until c ends; b (2) ranks above c by PCT but fits only after c.
    p = Problem.from_dict({
        "name": "life", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "a", "work": 1, "activation_memory": 2},
                  {"name": "b", "work": 1.5, "activation_memory": 2},
                  {"name": "c", "work": 1}],
        "edges": [{"src": "a", "dst": "c"}]})
    blind = solve(p, "critical_path+pct")
    assert violations(p, blind, "lifetime") != []
    s = solve(p, "critical_path+pct", formulation=timeline("lifetime"))
    assert [starts(s)[t][1] for t in ("a", "c", "b")] == [0.0, 1.0, 2.0]
    assert violations(p, s, "lifetime") == []


def test_partition_schedule_says_when_its_mapping_never_fits():
    p = Problem.from_dict({
        "name": "full", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "a", "work": 1, "activation_memory": 2},
                  {"name": "b", "work": 1, "activation_memory": 2}]})
    with pytest.raises(ProblemError, match=r"task 'b': .*not a proof"):
        solve(p, "critical_path+msr", formulation=timeline())
