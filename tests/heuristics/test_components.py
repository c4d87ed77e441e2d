"""Priority rules, device rules and the fast timing of device strings."""

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers.method_contract import example
from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, ProblemError
from schedkit.heuristics.components import (fastest_device_rule, fastest_devices, order_priority,
                                            upward_rank_priority)
from schedkit.timing import OrderedTiming, bfs_order, priority_order
from schedkit.problem.space import PlacementSpace
from schedkit.timing import list_schedule, to_schedule


def diamond():
    return Problem.from_dict({
        "name": "diamond", "devices": [{"name": "a"}, {"name": "b", "speed": 2.0}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1.0}],
        "tasks": [{"name": n, "work": 2.0, "output_size": 1.0} for n in "swxyz"],
        "edges": [{"src": "s", "dst": "x"}, {"src": "s", "dst": "w"}, {"src": "x", "dst": "z"},
                  {"src": "w", "dst": "y"}, {"src": "y", "dst": "z"}]})


def test_bfs_order_goes_level_by_level():
    p = diamond()
    assert [p.tasks[i] for i in bfs_order(p)] == ["s", "x", "w", "y", "z"]


def test_order_priority_makes_list_schedule_follow_the_order():
    p = diamond()
    order = bfs_order(p)
    seen = []

    def rule(i, options):
        seen.append(i)
        return options[0][0]

    list_schedule(p, order_priority(order), rule=rule)
    assert seen == order


def test_upward_rank_priority_is_heft_rank():
    ranks = upward_rank_priority(example("topcuoglu2002.json"))
    assert ranks[0] == 108.0


def test_fastest_device_rule_and_string():
    p = diamond()
    assert fastest_devices(p) == [1] * 5
    rule = fastest_device_rule(p)
    assert rule(0, [(0, 0.0, 2.0), (1, 5.0, 6.0)]) == 1
    tie = Problem.from_dict({"name": "tie", "devices": [{"name": "a"}, {"name": "b"}],
                             "tasks": [{"name": "t", "work": 1.0}]})
    assert fastest_device_rule(tie)(0, [(0, 3.0, 4.0), (1, 0.0, 1.0)]) == 1   # then earliest finish
    assert fastest_devices(tie) == [0]                                        # lowest index


def test_ordered_timing_rejects_bad_orders():
    p = diamond()
    with pytest.raises(ValueError, match="every task"):
        OrderedTiming(p, [0, 1])
    with pytest.raises(ValueError, match="topological"):
        OrderedTiming(p, list(reversed(bfs_order(p))))
    with pytest.raises(ValueError, match="kept"):
        OrderedTiming(p)([0] * 5, first=2)


def test_zero_length_task_does_not_open_a_gap():
    # A [0,2] and B [2,3] on d; Z (length 0) fills the "gap" at 2; C, ready at 2.5, must
    # wait for B to end at 3 (the simulator once put C at 2.5, over B).
    p = Problem.from_dict({
        "name": "zero", "devices": [{"name": "d"}, {"name": "h"}],
        "tasks": [{"name": "A", "durations": {"d": 2.0}}, {"name": "B", "durations": {"d": 1.0}},
                  {"name": "Z", "durations": {"d": 0.0}}, {"name": "P", "durations": {"h": 2.5}},
                  {"name": "C", "durations": {"d": 1.0}}],
        "edges": [{"src": "A", "dst": "B", "size": 0}, {"src": "P", "dst": "C", "size": 0}]})
    device_of, start = list_schedule(p, [5.0, 4.0, 3.0, 2.0, 1.0])
    assert start == [0.0, 2.0, 2.0, 0.0, 3.0]
    assert not to_schedule(p, device_of, start, "check").violations(p)
    timing = OrderedTiming(p, [0, 1, 2, 3, 4])
    assert timing(device_of) == 4.0 and timing.start == start


def random_feasible_strings(data, rng, count):
    """The problem of ``data`` and up to ``count`` feasible device strings drawn with ``rng``
    (hypothesis moves on when the problem is invalid or none is found)."""
    try:
        p = Problem.from_dict(data)
        space = PlacementSpace(p)
    except ProblemError:
        assume(False)
    found = []
    for _ in range(count * 20):
        unit_device = [rng.choice(devices) for devices in space.devices]
        string = [unit_device[space.unit_of[i]] for i in range(len(p.tasks))]
        if space.feasible(string):
            found.append(string)
            if len(found) == count:
                break
    assume(found)
    return p, found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3), st.booleans(), st.integers(0, 10**6))
def test_ordered_timing_equals_list_schedule(data, insertion, seed):
    p, strings = random_feasible_strings(data, random.Random(seed), 6)
    order = bfs_order(p)
    timing = OrderedTiming(p, order, insertion=insertion)
    kept = None
    for string in strings:
        device_of, start = list_schedule(p, order_priority(order), device_of=string,
                                         insertion=insertion)
        end = [start[i] + p.durations[i][d] for i, d in enumerate(device_of)]
        assert timing(string) == max(end)
        assert timing.start == start and timing.end == end
        if kept is not None:
            # Incremental: the same times from the first position where the strings differ.
            differ = [timing.position[i] for i in range(len(p.tasks)) if kept[i] != string[i]]
            first = min(differ, default=len(p.tasks))
            assert timing(string, first) == max(end)
            assert timing.start == start
        timing.keep()
        kept = string


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3), st.integers(0, 10**6))
def test_priority_order_times_a_mapping_as_list_schedule_does(data, seed):
    # refine times candidates this way: any priority (ties included), any fixed mapping.
    rng = random.Random(seed)
    p, strings = random_feasible_strings(data, rng, 4)
    priority = [float(rng.randint(0, 3)) for _ in p.tasks]
    timing = OrderedTiming(p, priority_order(p, priority))
    for string in strings:
        device_of, start = list_schedule(p, priority, device_of=string)
        assert timing(string) == max(start[i] + p.durations[i][d] for i, d in enumerate(device_of))
        assert timing.start == start
