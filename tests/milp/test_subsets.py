"""Lower bounds from subsets of tasks: valid (never above an optimum) and strong where it matters."""

from pathlib import Path

import highspy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Problem
from schedkit.milp.race import Shared
from schedkit.generators import erdos_renyi
from schedkit.milp import Milp
from schedkit.milp.solvers.highs import highs_for
from schedkit.milp.subsets import critical_tasks, subset_bounds, subset_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def optimum(lin) -> float:
    h = highs_for(lin, gap=0.0)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def chain_with_a_slow_middle():
    # a -> b -> c on two devices; b takes 5 on either, a and c take 1 on d0 and 2 on d1.
    return Problem.from_dict({
        "name": "chain", "devices": [{"name": "d0"}, {"name": "d1"}],
        "links": [{"src": "d0", "dst": "d1", "bandwidth": 1}],
        "tasks": [{"name": "a", "durations": {"d0": 1, "d1": 2}},
                  {"name": "b", "durations": {"d0": 5, "d1": 5}},
                  {"name": "c", "durations": {"d0": 1, "d1": 2}}],
        "edges": [{"src": "a", "dst": "b", "size": 0}, {"src": "b", "dst": "c", "size": 0}],
    })


def test_critical_path_runs_from_time_zero_to_the_makespan_through_real_waits():
    problem = Problem.load(EXAMPLES / "hetero20.yaml")
    schedule = schedkit.solve(problem, "milp")
    path = critical_tasks(problem, schedule)
    rows = {r.task: r for r in schedule.tasks}
    last, first = rows[problem.tasks[path[0]]], rows[problem.tasks[path[-1]]]
    assert last.end == pytest.approx(schedule.makespan)
    assert first.start == pytest.approx(0.0, abs=1e-9)
    for later, earlier in zip(path, path[1:]):
        a, b = rows[problem.tasks[earlier]], rows[problem.tasks[later]]
        pred = any(k == earlier for k, _ in problem.preds[later])
        assert pred or (a.device == b.device and a.end == pytest.approx(b.start))


def test_distance_rows_keep_the_chain_through_a_left_out_task():
    problem = chain_with_a_slow_middle()
    built = Milp().build(problem)
    a, c = problem.task_index["a"], problem.task_index["c"]
    sub, _ = subset_model(built, [a, c])
    # without b the two ends would need only 1 + 1; the distance row puts b's 5 back
    assert optimum(sub) == pytest.approx(7.0)
    assert any(name.startswith("subset.distance(a_c)") for name in sub.row_names())


def test_the_whole_set_gives_the_whole_optimum():
    problem = Problem.load(EXAMPLES / "hetero20.yaml")
    built = Milp().build(problem)
    sub, _ = subset_model(built, range(len(problem.tasks)))
    assert optimum(sub) == pytest.approx(optimum(built.linear), rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), tasks=st.integers(4, 10), share=st.floats(0.2, 0.9),
       pick=st.randoms(use_true_random=False))
def test_a_subset_never_bounds_above_the_optimum(seed, tasks, share, pick):
    problem = Problem.from_dict(erdos_renyi(tasks=tasks, edge_prob=0.3, devices=3, seed=seed))
    built = Milp().build(problem)
    whole = optimum(built.linear)
    chosen = pick.sample(range(tasks), max(1, round(share * tasks)))
    sub, _ = subset_model(built, chosen)
    assert optimum(sub) <= whole * (1 + 1e-6)


def test_subset_bounds_prove_a_known_optimum():
    problem = Problem.from_dict(erdos_renyi(tasks=20, edge_prob=0.2, devices=4, seed=4))
    best = schedkit.solve(problem, "milp", threads=1)
    assert best.status == "optimal"
    built = Milp().build(problem, warm=best)
    shared = Shared()
    shared.found(best.makespan)
    subset_bounds(built, best, shared)
    assert shared.closed() and shared.stop.is_set()
    assert shared.bound <= best.makespan * (1 + 1e-6)


def test_subset_bounds_stop_when_told():
    problem = Problem.from_dict(erdos_renyi(tasks=20, edge_prob=0.2, devices=4, seed=4))
    built = Milp().build(problem)
    shared = Shared()
    shared.stop.set()
    subset_bounds(built, built.warm, shared)
    assert shared.bound == float("-inf")


def test_without_precedence_no_distance_row_orders_the_tasks():
    problem = chain_with_a_slow_middle()
    built = Milp(formulation={"objective": "makespan", "blocks": ["assignment", "no_overlap"]}).build(problem)
    a, c = problem.task_index["a"], problem.task_index["c"]
    sub, _ = subset_model(built, [a, c])
    assert not any(name.startswith("subset.distance") for name in sub.row_names())
    # a and c may run side by side: the bound stays below the chain's 7 (b alone takes 5)
    assert optimum(sub) <= optimum(built.linear) + 1e-9 < 7
