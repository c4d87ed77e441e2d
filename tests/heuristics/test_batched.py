"""Batched heuristics: every heuristic splits the inputs into batches and returns a valid
schedule; one input is today's problem; the best split beats running the inputs one by one."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers.batched_cases import CHAIN

from schedkit import Problem, solve
from schedkit.errors import NoScheduleError, SchedkitError
from schedkit.methods import METHODS
from schedkit.schedule.unrolled import Unrolled
from schedkit.testing.strategies import problems

FAST = {"annealing": {"iterations": 200}, "evolution": {"iterations": 200}}
HEURISTICS = ["met", "greedy", "heft", "annealing", "evolution", "critical_path+pct", "hash+fifo"]


@pytest.mark.parametrize("name", HEURISTICS)
def test_every_heuristic_returns_valid_batches_better_than_one_by_one(name):
    p = Problem.from_dict(CHAIN)
    s = solve(p, name, **FAST.get(name, {}))   # validated by solve
    assert {len(r.inputs) for r in s.tasks} != {1}
    # DiviML's naive baseline: the best single device (a GPU) running the 8 inputs one at a time
    assert s.makespan < 8 * 3 * 1.0
    assert s.bound == pytest.approx(p.batches.lower_bound(p)) and s.bound <= s.makespan


def test_one_input_is_the_unbatched_schedule():
    data = {**CHAIN, "workload": {"inputs": 1}}
    batched = solve(Problem.from_dict(data), "heft")
    plain = solve(Problem.from_dict({k: v for k, v in data.items() if k != "workload"}), "heft")
    assert batched.makespan == pytest.approx(plain.makespan)
    assert all(r.inputs is None for r in batched.tasks)


def test_the_splits_are_divimls_and_the_devices_sizes():
    p = Problem.from_dict(CHAIN)
    assert p.batches.splits(p) == [1, 2, 4, 6, 8]
    u = Unrolled.uniform(p, 6)   # batches of 6 and 2: only the cpu runs 6
    assert [inputs for _, inputs, _ in u.batches][::3] == [[0, 1, 2, 3, 4, 5], [6, 7]]
    assert u.problem.allowed[0] == (2,)


def test_blocks_undefined_under_batching_are_refused_in_one_line():
    with pytest.raises(SchedkitError, match="block 'channels' does not combine with batching yet"):
        solve(Problem.from_dict(CHAIN), "heft", formulation="moirai")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=5, max_devices=3, memory=False, colocate=False), st.integers(1, 6),
       st.sampled_from(["met", "greedy", "heft"]))
def test_random_batched_problems_give_valid_schedules(data, inputs, name):
    try:
        p = Problem.from_dict({**data, "workload": {"inputs": inputs}})
    except SchedkitError:
        return
    try:
        s = solve(p, name)   # raises when the schedule is invalid
    except NoScheduleError:  # (a heuristic that finds none says so: then none exists, proven)
        exact = solve(p, "milp", solver="highs", formulation="throughput" if inputs > 1 else "latency")
        assert exact.status == "infeasible"
        return
    covered = sorted((r.task, l) for r in s.tasks for l in (r.inputs or [0]))
    assert covered == sorted((t, l) for t in p.tasks for l in range(inputs))
