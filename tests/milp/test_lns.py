"""MILP local search: never worse, often better, always valid."""

import pytest

import schedkit
from schedkit.generators import erdos_renyi
from schedkit.milp.lns import improve
from schedkit.milp import Milp


def random_problem(seed, tasks=24):
    return schedkit.Problem.from_dict(erdos_renyi(tasks=tasks, edge_prob=0.2, devices=4, seed=seed))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_search_improves_a_poor_start_and_stays_valid(seed):
    problem = random_problem(seed)
    poor = schedkit.solve(problem, "hash+fifo")
    # the poor schedule sets the horizon itself (the kernel's list schedules would beat it)
    built = Milp().formulation.build(problem, horizon=poor.makespan, warm=poor)
    better = improve(built, poor, seconds=1.5)
    assert better.makespan < 0.8 * poor.makespan  # hash+fifo is far from optimal on these
    assert better.violations(problem, built.blocks) == []


def test_local_search_without_any_choice_of_device_returns_the_start():
    problem = schedkit.Problem.load("examples/ft06.json")   # a job shop: every task is fixed
    built = Milp(formulation="jssp").build(problem)
    assert improve(built, built.warm, seconds=1) is built.warm


def test_budget_defaults_scale_with_tasks_and_respect_the_time_limit():
    problem = random_problem(0, tasks=40)
    assert Milp().lns_budget(problem) == pytest.approx(0.15 * 40)
    assert Milp(time_limit=6).lns_budget(problem) == pytest.approx(2.0)
    assert Milp(lns_seconds=0).lns_budget(problem) == 0
    assert Milp(lns_seconds=100).lns_budget(problem) == 100
    assert Milp().lns_budget(random_problem(0, tasks=20)) == 0   # small: straight to the exact solve


def test_time_limit_covers_the_whole_method():
    problem = random_problem(3, tasks=40)
    schedule = schedkit.solve(problem, "milp", time_limit=3)
    assert schedule.solve_seconds < 3 + 1.5   # start, search and solve share the limit
    assert schedule.status in ("optimal", "feasible")
