"""Resources that tasks hold: every timing engine keeps at most ``capacity`` holders running at once.

The engines (the list scheduler, its fixed-order copy, the event simulation, the read-back)
book holders on :class:`~schedkit.timing.holds.Holds`; their schedules must pass
:func:`~schedkit.blocks.holding.resource_violations`, on hand-made instances with a known
makespan and on random DAGs.
"""

import importlib

import pytest
from helpers.holding_block import holding
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError, solve
from schedkit.blocks.holding import resource_violations
from schedkit.testing.strategies import problems as problem_data
from schedkit.timing import (Holds, OrderedTiming, Resource, TimingRules, device_orders, fixed_order_times,
                             list_schedule, simulate, to_schedule)
from schedkit.validate import violations

list_schedule_module = importlib.import_module("schedkit.timing.list_schedule")  # (the package names the function so)

#: Three independent MatMuls of 2 on three devices: side by side 2, two units 4, one unit 6.
THREE = Problem.from_dict({
    "name": "three", "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
    "tasks": [{"name": f"mm{k}", "work": 2} for k in range(3)]})
MATMULS = ("mm0", "mm1", "mm2")
SCHEDULERS = ["heft", "greedy", "met", "annealing", "evolution", "hash+fifo", "mite+msr", "dfs+pct",
              "critical_path+fifo"]


def rules_of(*resources):
    return TimingRules(resources=tuple(resources))


def makespan(problem, device_of, start):
    return max(t + problem.durations[i][device_of[i]] for i, t in enumerate(start))


@pytest.mark.parametrize("capacity, expected", [(1, 6.0), (2, 4.0), (3, 2.0)])
def test_the_list_scheduler_and_the_simulation_keep_the_capacity(capacity, expected):
    rules = rules_of(Resource("engine", frozenset(MATMULS), capacity))
    device_of, start = list_schedule(THREE, [3.0, 2.0, 1.0], transfers=rules.transfers(THREE))
    assert makespan(THREE, device_of, start) == expected
    start = simulate(THREE, [0, 1, 2], transfers=rules.transfers(THREE))
    assert makespan(THREE, [0, 1, 2], start) == expected
    timing = OrderedTiming(THREE, [0, 1, 2], rules=rules)
    assert timing([0, 1, 2]) == expected


@pytest.mark.parametrize("method", SCHEDULERS)
@pytest.mark.parametrize("capacity, expected", [(1, 6.0), (2, 4.0)])
def test_every_scheduler_honours_the_resource(method, capacity, expected):
    s = solve(THREE, method, formulation=holding(MATMULS, capacity))
    assert s.makespan == expected
    assert resource_violations(s, Resource("engine", frozenset(MATMULS), capacity)) == []


def test_a_heuristic_without_the_rule_runs_the_holders_side_by_side():
    # (the same instance, nothing held: the figures above are the resource's doing)
    assert solve(THREE, "heft").makespan == 2.0


def test_the_read_back_keeps_the_solvers_order_on_a_unit():
    rules = rules_of(Resource("engine", frozenset(MATMULS)))
    starts = [4.0, 0.0, 2.0]                       # the solver's order: mm1, mm2, mm0
    device_of = [0, 1, 2]
    exact = fixed_order_times(THREE, device_of, device_orders(THREE, device_of, starts), rules.transfers(THREE),
                              starts=starts)
    assert exact == [4.0, 0.0, 2.0]
    late = [9.0, 1.0, 5.0]                         # left-shifted, in the same order
    assert fixed_order_times(THREE, device_of, device_orders(THREE, device_of, late), rules.transfers(THREE),
                             starts=late) == [4.0, 0.0, 2.0]
    # without the solver's starts, each holder takes the first free unit as it is timed
    free = fixed_order_times(THREE, device_of, [[0], [1], [2]], rules.transfers(THREE))
    assert sorted(free) == [0.0, 2.0, 4.0]


def test_the_array_fast_path_is_not_taken_with_held_resources(monkeypatch):
    calls = []
    real = list_schedule_module.EarliestFinish

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(list_schedule_module, "EarliestFinish", counted)
    list_schedule(THREE, [3.0, 2.0, 1.0], transfers=TimingRules().transfers(THREE))
    assert calls == [1]                            # no resource: the fast path
    rules = rules_of(Resource("engine", frozenset(MATMULS)))
    _, start = list_schedule(THREE, [3.0, 2.0, 1.0], transfers=rules.transfers(THREE))
    assert calls == [1] and sorted(start) == [0.0, 2.0, 4.0]


def test_bad_resources_are_named():
    with pytest.raises(ValueError, match="resource 'engine': capacity 0"):
        Resource("engine", frozenset({"mm0"}), 0)
    with pytest.raises(ValueError, match="resource 'engine' is given twice"):
        rules_of(Resource("engine", frozenset()), Resource("engine", frozenset()))
    with pytest.raises(ProblemError, match="resource 'engine': task 'conv' is not in problem 'three'"):
        Holds(THREE, [Resource("engine", frozenset({"conv"}))])


@st.composite
def held_problems(draw):
    data = draw(problem_data(max_tasks=8, max_devices=3, memory=False, colocate=False))
    try:
        problem = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    assume(len(problem.tasks) >= 2)
    tasks = draw(st.lists(st.sampled_from(problem.tasks), unique=True, min_size=2))
    resource = Resource("engine", frozenset(tasks), draw(st.sampled_from([1, 2])))
    priority = draw(st.lists(st.floats(0, 10), min_size=len(problem.tasks), max_size=len(problem.tasks)))
    return problem, resource, priority


def valid(problem, device_of, start, resource, transfers=None):
    schedule = to_schedule(problem, device_of, start, "engine", transfers)
    assert violations(problem, schedule) == []
    assert resource_violations(schedule, resource) == []
    return schedule


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(held_problems(), st.sampled_from([None, "port"]))
def test_every_engine_keeps_the_capacity_on_random_dags(case, congestion):
    problem, resource, priority = case
    rules = TimingRules(congestion=congestion, resources=(resource,))
    try:
        device_of, start = list_schedule(problem, priority, transfers=(moves := rules.transfers(problem)))
    except ProblemError:
        assume(False)  # (no device linked to a task's inputs: not a question of resources)
    listed = valid(problem, device_of, start, resource, moves)
    for insertion in (True, False):
        timing = OrderedTiming(problem, problem.topological_order, insertion=insertion, rules=rules)
        timing(device_of)
        valid(problem, device_of, timing.start, resource, timing.transfers)
    start = simulate(problem, device_of, priority, transfers=(moves := rules.transfers(problem)))
    valid(problem, device_of, start, resource, moves)
    # The read-back of a schedule that ignored the resource, in its order, and of a valid one.
    for source in ([r.start for r in to_schedule(problem, device_of, start, "free").tasks],
                   [r.start for r in listed.tasks]):
        order = [source[problem.task_index[t]] for t in problem.tasks]
        moves = rules.transfers(problem)
        exact = fixed_order_times(problem, device_of, device_orders(problem, device_of, order), moves,
                                  starts=order)
        valid(problem, device_of, exact, resource, moves)
