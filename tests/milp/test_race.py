"""The bound search beside the exact solve: shared state, stopping, errors, same optima."""

import pytest

import schedkit
from schedkit.milp.race import Shared
from schedkit.generators import erdos_renyi


def test_bound_and_incumbent_meet_only_with_an_incumbent():
    shared = Shared(tolerance=1e-6)
    shared.proved(50.0)
    assert not shared.closed() and not shared.stop.is_set()
    shared.found(50.001)
    assert not shared.closed()
    shared.found(50.0)
    assert shared.closed() and shared.stop.is_set()


def test_an_offer_is_taken_once_and_only_when_better():
    shared = Shared()
    shared.found(10.0)
    shared.offer(11.0, [1.0, None])          # worse than the incumbent: dropped
    assert shared.take_offer(10.0) is None
    shared.offer(9.0, [1.0, None, 2.0])
    objective, index, values = shared.take_offer(10.0)
    assert objective == 9.0 and list(index) == [0, 2] and list(values) == [1.0, 2.0]
    assert shared.take_offer(10.0) is None


@pytest.mark.parametrize("seed", [1, 3])
def test_one_and_two_threads_prove_the_same_optimum(seed):
    problem = schedkit.Problem.from_dict(erdos_renyi(tasks=14, edge_prob=0.25, devices=3, seed=seed))
    alone = schedkit.solve(problem, "milp", threads=1)
    beside = schedkit.solve(problem, "milp", threads=2, solver="highs")
    assert alone.status == beside.status == "optimal"
    assert beside.makespan == pytest.approx(alone.makespan, rel=1e-4)
    assert beside.bound <= beside.makespan + 1e-9


def test_an_error_in_the_helper_reaches_the_caller(monkeypatch):
    import schedkit.milp.subsets

    def broken(*args, **kwargs):
        raise RuntimeError("helper broke")

    monkeypatch.setattr(schedkit.milp.subsets, "subset_bounds", broken)
    problem = schedkit.Problem.from_dict(erdos_renyi(tasks=12, edge_prob=0.25, devices=3, seed=0))
    with pytest.raises(RuntimeError, match="helper broke"):
        schedkit.solve(problem, "milp", threads=2, solver="highs")


def test_threads_must_be_positive():
    problem = schedkit.Problem.load("examples/tiny.yaml")
    with pytest.raises(schedkit.SchedkitError, match="threads"):
        schedkit.solve(problem, "milp", threads=0)
