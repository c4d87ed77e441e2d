"""HEFT: the published result on Topcuoglu et al.'s graph, and the method contract."""

from hypothesis import HealthCheck, given, settings

from helpers.method_contract import check_deterministic, check_examples, check_random, example
from schedkit.testing.strategies import problems as problem_data
from schedkit import solve
from schedkit.problem.graph import upward_rank


def test_topcuoglu_published_makespan_and_schedule():
    p = example("topcuoglu2002.json")
    s = solve(p, "heft")
    assert s.makespan == 80.0
    # The paper's Fig. 4(a): processor and start of every task.
    expected = {"n1": ("p3", 0), "n2": ("p1", 27), "n3": ("p3", 9), "n4": ("p2", 18),
                "n5": ("p3", 28), "n6": ("p2", 26), "n7": ("p3", 38), "n8": ("p1", 57),
                "n9": ("p2", 56), "n10": ("p2", 73)}
    assert {r.task: (r.device, r.start) for r in s.tasks} == expected


def test_topcuoglu_published_ranks():
    p = example("topcuoglu2002.json")
    ranks = [round(r, 3) for r in upward_rank(p, "mean")]
    assert ranks == [108.0, 77.0, 80.0, 80.0, 69.0, 63.333, 42.667, 35.667, 44.333, 14.667]


def test_insertion_option_is_used():
    p = example("topcuoglu2002.json")
    assert solve(p, "heft", insertion=False).makespan >= 80.0


def test_examples():
    check_examples("heft")


def test_deterministic():
    check_deterministic("heft")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=3))
def test_random_problems(data):
    check_random(data, "heft")
