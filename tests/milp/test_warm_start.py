"""The MILP started from a heuristic schedule is never worse than that schedule."""

import pytest

import schedkit
from schedkit.generators import erdos_renyi


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
