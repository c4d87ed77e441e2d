"""Memory levels in list scheduling and in every heuristic (``memory_timeline``): tasks wait
or move rather than overflow."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedkit
import schedkit.heuristics  # noqa: F401  (registers the heuristics)
from schedkit.blocks import MemoryTimeline
from schedkit.errors import FormulationError, ProblemError
from schedkit.heuristics.formulation import FollowsFormulation
from schedkit.methods import METHODS
from schedkit.generators import erdos_renyi
from schedkit.milp import get_formulation
from schedkit.timing import MemoryLevels, list_schedule, to_schedule


def timeline(mode: str) -> dict:
    return {"blocks": ["assignment", "precedence", "no_overlap", {"memory_timeline": {"mode": mode}}]}


def pipeline_step() -> schedkit.Problem:
    # f1 takes 2 of the 3 units, w1 gives them back; f2 (preferred over w1) must wait for w1.
    return schedkit.Problem.from_dict({
        "name": "step", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "f1", "work": 1, "activation_memory": 2},
                  {"name": "w1", "work": 1, "activation_memory": -2},
                  {"name": "f2", "work": 1, "activation_memory": 2}],
        "edges": [{"src": "f1", "dst": "w1"}]})


def test_deltas_a_task_waits_for_a_release():
    p = pipeline_step()
    device_of, start = list_schedule(p, [3.0, 1.0, 2.0], levels=MemoryLevels(p, "deltas"))
    assert start == [0.0, 1.0, 2.0]          # f2 after w1, though it ranks higher
    schedule = to_schedule(p, device_of, start, "test")
    assert schedule.violations(p, get_formulation(timeline("deltas")).blocks) == []
    # Without the levels the list schedule puts f2 second and holds 4 units.
    _, start = list_schedule(p, [3.0, 1.0, 2.0])
    assert start == [0.0, 2.0, 1.0]


def test_deltas_order_is_time_order():
    # Insertion would put f2 in a gap before w1 and break the level: it is off under deltas.
    p = pipeline_step()
    levels = MemoryLevels(p, "deltas")
    assert levels.keeps_order
    assert not MemoryLevels(p, "lifetime").keeps_order


def test_nothing_fits_says_so_without_claiming_infeasibility():
    p = schedkit.Problem.from_dict({
        "name": "full", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "a", "work": 1, "activation_memory": 2},
                  {"name": "b", "work": 1, "activation_memory": 2}]})
    with pytest.raises(ProblemError, match=r"no device has memory .* not a proof"):
        list_schedule(p, [2.0, 1.0], levels=MemoryLevels(p, "deltas"))
    with pytest.raises(schedkit.SchedkitError, match="not a proof"):
        schedkit.solve(p, "heft", formulation=timeline("deltas"))


def test_lifetime_an_output_lives_until_its_consumer_ends():
    # a's output (2) lives until c ends; b (2) must wait for it on the one device (cap 3),
    # and c needs a first: a, c, b.
    p = schedkit.Problem.from_dict({
        "name": "life", "devices": [{"name": "d", "memory": 3}],
        "tasks": [{"name": "a", "work": 1, "activation_memory": 2},
                  {"name": "b", "work": 1, "activation_memory": 2},
                  {"name": "c", "work": 1}],
        "edges": [{"src": "a", "dst": "c"}]})
    device_of, start = list_schedule(p, [3.0, 2.0, 1.0], levels=MemoryLevels(p, "lifetime"))
    assert start == [0.0, 2.0, 1.0]
    schedule = to_schedule(p, device_of, start, "test")
    assert schedule.violations(p, get_formulation(timeline("lifetime")).blocks) == []


def random_timeline_problem(seed: int, mode: str, tasks: int, capacity: float) -> schedkit.Problem:
    data = erdos_renyi(tasks, 0.25, 3, seed=seed)
    rng = random.Random(seed)
    for task in data["tasks"]:
        task["weight_memory"] = rng.randint(0, 3)
        task["activation_memory"] = rng.randint(-4, 6) if mode == "deltas" else rng.randint(0, 6)
    for device in data["devices"]:
        device["memory"] = capacity
    return schedkit.Problem.from_dict(data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), mode=st.sampled_from(["deltas", "lifetime"]),
       tasks=st.integers(3, 14), capacity=st.integers(8, 30),
       method=st.sampled_from(["heft", "met", "greedy"]))
def test_list_schedules_never_exceed_a_memory_level(seed, mode, tasks, capacity, method):
    problem = random_timeline_problem(seed, mode, tasks, capacity)
    formulation = timeline(mode)
    try:
        schedule = schedkit.solve(problem, method, formulation=formulation)
    except ProblemError as exc:  # nothing found (said so), or a task that fits nowhere at all
        assert "not a proof" in str(exc) or "fit on none of its devices" in str(exc)
        return
    assert schedule.violations(problem, get_formulation(formulation).blocks) == []


#: Every registered heuristic (a method that follows a formulation).
# (the heuristics that honour memory timelines; another says so in one line, e.g. chain_split)
HEURISTICS = sorted(name for name, cls in METHODS.items()
                    if issubclass(cls, FollowsFormulation) and "memory_timeline" in cls.honours)


def test_every_heuristic_is_checked():
    from schedkit.heuristics.partition_schedule import PARTITION_SCHEDULE_METHODS

    assert {"met", "greedy", "heft", "annealing", "evolution", *PARTITION_SCHEDULE_METHODS} <= set(HEURISTICS)


# Capacities from 9 up: every task fits alone (weights <= 3, activations <= 6), so any
# failure is a method's, which must say that it is not a proof.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), mode=st.sampled_from(["deltas", "lifetime"]),
       tasks=st.integers(3, 14), capacity=st.integers(9, 30))
def test_every_heuristic_waits_or_says_it_found_nothing(seed, mode, tasks, capacity):
    problem = random_timeline_problem(seed, mode, tasks, capacity)
    formulation = timeline(mode)
    for name in HEURISTICS:
        options = {"iterations": 15} if name in ("annealing", "evolution") else {}
        try:
            schedule = schedkit.solve(problem, name, formulation=formulation, **options)  # validated
        except ProblemError as exc:
            assert "not a proof" in str(exc), (name, str(exc))
            continue
        assert MemoryTimeline(mode=mode).violations(problem, schedule) == [], name


def test_a_heuristic_that_does_not_honour_timelines_says_so():
    problem = random_timeline_problem(1, "deltas", 5, 12)
    for name, cls in METHODS.items():
        if issubclass(cls, FollowsFormulation) and "memory_timeline" not in cls.honours:
            with pytest.raises(FormulationError, match=f"method '{name}' cannot honour block 'memory_timeline'"):
                schedkit.solve(problem, name, formulation=timeline("deltas"))
