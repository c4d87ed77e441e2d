"""The space of device strings: units, feasibility and moves."""

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, ProblemError
from schedkit.heuristics.components import order_priority
from schedkit.timing import bfs_order
from schedkit.problem.space import PlacementSpace
from schedkit.timing import list_schedule, to_schedule


def grouped():
    return Problem.from_dict({
        "name": "grouped",
        "devices": [{"name": "a", "memory": 3.0}, {"name": "b"}, {"name": "c"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1.0}],   # c is isolated
        "tasks": [{"name": "x", "work": 1.0, "memory": 2.0, "colocate": "g", "output_size": 1.0},
                  {"name": "y", "durations": {"a": 1.0, "b": 1.0}, "colocate": "g"},
                  {"name": "z", "work": 1.0, "memory": 2.0, "output_size": 1.0},
                  {"name": "solo", "durations": {"c": 1.0}}],
        "edges": [{"src": "x", "dst": "z"}]})


def test_units_and_devices():
    space = PlacementSpace(grouped())
    assert space.units == [[0, 1], [2], [3]]
    assert space.devices == [(0, 1), (0, 1, 2), (2,)]
    assert space.movable == [0, 1]
    assert space.memory == [2.0, 2.0, 0.0]


def test_moves_respect_memory_and_links():
    p = grouped()
    space = PlacementSpace(p)
    string = [1, 1, 1, 2]
    assert space.feasible(string)
    loads = space.loads(string)
    assert space.move(string, loads, [(0, 0)]) == ([0, 0, 1, 2], [2.0, 2.0, 0.0])
    assert space.move(string, loads, [(0, 0), (1, 0)]) is None       # 4 > 3 on a
    assert space.move(string, loads, [(1, 2)]) is None               # x on b, z on c: no link
    assert space.move([1, 1, 2, 2], [0, 2, 2, 0], [(0, 0)]) is None  # x on a, z on c: no link
    assert not space.feasible([0, 1, 1, 2])                          # the group split


def test_group_without_common_device():
    data = {"name": "apart", "devices": [{"name": "a"}, {"name": "b"}],
            "tasks": [{"name": "x", "durations": {"a": 1.0}, "colocate": "g"},
                      {"name": "y", "durations": {"b": 1.0}, "colocate": "g"}]}
    with pytest.raises(ProblemError, match="collocation group 'g'"):  # on load, before any search
        PlacementSpace(Problem.from_dict(data))


def test_other_device_is_uniform_over_the_others():
    space = PlacementSpace(grouped())
    rng = random.Random(0)
    drawn = {space.other_device(1, 1, rng) for _ in range(50)}
    assert drawn == {0, 2}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=3), st.integers(0, 10**6))
def test_feasible_means_valid(data, seed):
    # A string the space calls feasible schedules without error and validates.
    try:
        p = Problem.from_dict(data)
        space = PlacementSpace(p)
    except ProblemError:
        assume(False)
    rng = random.Random(seed)
    for _ in range(10):
        unit_device = [rng.choice(devices) for devices in space.devices]
        string = [unit_device[space.unit_of[i]] for i in range(len(p.tasks))]
        if space.feasible(string):
            device_of, start = list_schedule(p, order_priority(bfs_order(p)), device_of=string)
            assert not to_schedule(p, device_of, start, "check").violations(p)
        else:
            with pytest.raises(ProblemError):
                list_schedule(p, order_priority(bfs_order(p)), device_of=string)
