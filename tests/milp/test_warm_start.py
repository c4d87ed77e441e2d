"""The MILP started from a heuristic schedule is never worse than that schedule."""

import pytest

import schedkit
from schedkit.generators import erdos_renyi

from helpers.no_precedence import NO_PRECEDENCE


@pytest.mark.parametrize("method", ["heft", "critical_path+pct", "annealing"])
@pytest.mark.parametrize("seed", [0, 1])
def test_warm_started_milp_is_never_worse(method, seed):
    problem = schedkit.Problem.from_dict(erdos_renyi(tasks=16, edge_prob=0.2, devices=3, seed=seed))
    start = schedkit.solve(problem, method)
    # A time limit far too short for a proof: the answer must still be at least as good.
    schedule = schedkit.solve(problem, "milp", warm_start=method, time_limit=0.05)
    assert schedule.status in ("optimal", "feasible")
    assert schedule.makespan <= start.makespan + 1e-6 * start.makespan
    schedule.validate(problem)


def test_warm_start_cannot_be_the_milp_itself():
    with pytest.raises(schedkit.SchedkitError, match="cannot be 'milp'"):
        schedkit.solve("examples/tiny.yaml", "milp", warm_start="milp")


def test_unknown_warm_start_method_is_a_clear_error():
    with pytest.raises(schedkit.SchedkitError, match="unknown method 'nosuch'"):
        schedkit.solve("examples/tiny.yaml", "milp", warm_start="nosuch")


@pytest.mark.parametrize("formulation,path", [("latency", "examples/hetero20.yaml"),
                                              ("jssp", "examples/ft06.json")])
def test_warm_start_values_satisfy_every_row(formulation, path):
    # A starting solution that breaks one row is dropped by HiGHS without a word.
    from schedkit.milp import Milp
    from schedkit.milp.readback import warm_values

    built = Milp(formulation=formulation).build(schedkit.Problem.load(path))
    values = warm_values(built, built.warm)
    assert None not in values
    assert built.linear.violated_rows(values) == []


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_a_read_back_longer_than_the_start_returns_the_start(solver):
    # (without 'precedence' the solver's solution is still timed along the edges, longer than
    # its objective: HiGHS returned 6.88 where its start took 6.75, and CP-SAT's answer, the
    # start with the read-back's objective, failed validation, 'objective 7.09 differs from
    # the makespan 6.75')
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    start = schedkit.solve(problem, "heft", formulation=NO_PRECEDENCE)
    schedule = schedkit.solve(problem, "milp", formulation=NO_PRECEDENCE, solver=solver, threads=1)
    assert schedule.makespan <= start.makespan + 1e-9 and schedule.objective == schedule.makespan
    assert schedule.violations(problem, schedkit.get_formulation(NO_PRECEDENCE).blocks) == []
    assert schedule.bound <= schedule.makespan
