"""What Method.result does around every method: the problem it solves, and the schedule it validates."""

import pytest

import schedkit
from schedkit import Problem

# A fork of two tasks between a source and a sink, each edge 10 time units of data. With the
# transfers, one device is best (4); without them (jssp), the two middle tasks run at once (3).
FORK = {"name": "fork", "devices": [{"name": "g"}, {"name": "c"}], "links": [{"src": "g", "dst": "c", "bandwidth": 1}],
        "tasks": [{"name": n, "durations": {"g": 1, "c": 1}, "output_size": 10} for n in ("a", "b", "c1", "d")],
        "edges": [{"src": "a", "dst": "b"}, {"src": "a", "dst": "c1"}, {"src": "b", "dst": "d"}, {"src": "c1", "dst": "d"}]}


@pytest.mark.parametrize("method", ["milp", "auto", "heft", "annealing"])
def test_a_formulation_without_transfer_times_gets_schedules_timed_without_them(method):
    # (every method timed its schedules with the transfers: milp -f jssp found the fork's
    # optimum, 3, and returned it timed at 13; auto claimed 4.51625 optimal on tiny.yaml,
    # where the optimum is 4.5)
    problem = Problem.from_dict(FORK)
    options = {"time_limit": 10} if method in ("milp", "auto") else {}
    schedule = schedkit.solve(problem, method, formulation="jssp", **options)
    assert schedule.makespan == pytest.approx(3.0)
    assert schedule.violations(problem) == [] and schedule.formulation["name"] == "jssp"
    if method in ("milp", "auto"):
        assert schedule.status == "optimal" and schedule.bound == pytest.approx(3.0)
    assert schedkit.solve(problem, "milp", time_limit=10).makespan == pytest.approx(4.0)   # with the transfers


def test_tiny_under_jssp_is_proven_at_its_optimum():
    problem = Problem.load("examples/tiny.yaml")
    schedule = schedkit.solve(problem, "auto", formulation="jssp", time_limit=10)
    assert schedule.status == "optimal" and schedule.makespan == pytest.approx(4.5)


# Four tasks of one collocation group after a common source, on two devices: together they
# take 8.1; a formulation without 'placement' ignores the group, and two per device take 4.11.
GROUPED = {"devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": 100}],
           "tasks": [{"name": "s", "durations": {"a": 0.1, "b": 0.1}}] +
                    [{"name": n, "durations": {"a": 2, "b": 2}, "colocate": "g"} for n in "xyzw"],
           "edges": [{"src": "s", "dst": n, "size": 1} for n in "xyzw"]}
NO_PLACEMENT = {"name": "noplace", "blocks": ["assignment", "precedence", "no_overlap", "memory"]}


@pytest.mark.parametrize("method", ["heft", "greedy", "annealing", "auto"])
def test_a_formulation_without_placement_gets_schedules_that_split_the_groups(method):
    # (the heuristics kept the group on one device, 8.1, where the formulation allows 4.11)
    problem = Problem.from_dict(GROUPED)
    schedule = schedkit.solve(problem, method, formulation=NO_PLACEMENT)
    assert schedule.makespan == pytest.approx(4.11)
    assert schedule.violations(problem, schedkit.get_formulation(NO_PLACEMENT).blocks) == []
    assert schedkit.solve(problem, method).makespan == pytest.approx(8.1)      # (with the group)


# Three chained tasks of memory 3 on a fast device of memory 5: within the memory, two run on
# the slow device (11.1); a formulation without 'memory' ignores the capacity (3).
TIGHT = {"devices": [{"name": "fast", "memory": 5}, {"name": "slow"}], "links": [{"src": "fast", "dst": "slow", "bandwidth": 10}],
         "tasks": [{"name": n, "durations": {"fast": 1, "slow": 5}, "memory": 3} for n in "abc"],
         "edges": [{"src": "a", "dst": "b", "size": 1}, {"src": "b", "dst": "c", "size": 1}]}
NO_MEMORY = {"name": "nomem", "blocks": ["assignment", "placement", "precedence", "no_overlap"]}


@pytest.mark.parametrize("method", ["heft", "greedy", "annealing", "chain_split", "auto"])
def test_a_formulation_without_memory_gets_schedules_that_ignore_the_capacities(method):
    # (the heuristics kept every device within its memory, 11.1, where the formulation allows 3)
    problem = Problem.from_dict(TIGHT)
    schedule = schedkit.solve(problem, method, formulation=NO_MEMORY)
    assert schedule.makespan == pytest.approx(3.0)
    assert schedule.violations(problem, schedkit.get_formulation(NO_MEMORY).blocks) == []
    assert schedkit.solve(problem, method).makespan >= 11.1      # (within the memory: two on the slow device)
