"""merge on large graphs: runs of the level order first (linear, never a cycle), then greedy merging."""

import time

import networkx as nx
import pytest

from schedkit import Problem, solve
from schedkit.reductions.coarsen import coarse_problem
from schedkit.reductions.subproblem import heavier
from schedkit.decompositions import merge as merge_module
from schedkit.decompositions.merge import Merge, MergeOptions, _coarsened
from schedkit.decompositions.merge_levels import level_runs, task_levels
from schedkit.reductions.budget import finish_seconds
from schedkit.generators import layered
from schedkit.problem.network import Payload


def layered_problem(seed=4, levels=8, width=6, memory_slack=None):
    data = layered(levels=levels, width=width, edge_prob=0.3, long_range_prob=0.2, devices=3, seed=seed,
                   **({"memory_slack": memory_slack} if memory_slack else {}))
    return Problem.from_dict(data)


def quotient_is_acyclic(p, groups):
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    q = nx.DiGraph()
    q.add_nodes_from(range(len(groups)))
    q.add_edges_from((group_of[i], group_of[j]) for i, j, _ in p.edges if group_of[i] != group_of[j])
    return nx.is_directed_acyclic_graph(q)


def test_levels_are_longest_paths_from_the_sources():
    p = layered_problem()
    level = task_levels(p)
    for i, j, _ in p.edges:
        assert level[j] > level[i]
    assert all(level[j] == 0 or any(level[i] == level[j] - 1 for i, _ in p.preds[j]) for j in range(len(p.tasks)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("target", [1, 3, 8, 20, 100])
def test_runs_partition_the_tasks_and_never_make_a_cycle(seed, target):
    p = layered_problem(seed=seed, memory_slack=1.5 if seed % 2 else None)
    groups = level_runs(p, target)
    assert sorted(i for g in groups for i in g) == list(range(len(p.tasks)))
    assert quotient_is_acyclic(p, groups)
    position = {i: k for k, i in enumerate(p.topological_order)}
    for g in groups:
        assert [position[i] for i in g] == sorted(position[i] for i in g)
        assert set.intersection(*(set(p.allowed[i]) for i in g))
    coarse_problem(p, groups, "runs")  # shared devices, memory and collocation: a valid problem


def test_runs_stay_within_a_level_when_levels_are_few():
    p = layered_problem(levels=4, width=10)
    level = task_levels(p)
    groups = level_runs(p, 12)
    assert all(len({int(level[i]) for i in g}) == 1 for g in groups)
    assert len(groups) >= 4


def test_runs_keep_one_collocation_group_each():
    p = layered_problem(levels=3, width=4)
    data = p.spec.model_dump(mode="json", exclude_none=True)
    for k, row in enumerate(data["tasks"]):
        row["colocate"] = "ab"[k % 2]
    p = Problem.from_dict(data)
    for g in level_runs(p, 2):
        assert len({p.spec.tasks[i].colocate for i in g}) == 1


def test_a_large_graph_is_merged_from_runs_and_its_schedule_is_valid(monkeypatch):
    p = layered_problem(levels=10, width=8)
    monkeypatch.setattr(merge_module, "GREEDY_TASKS", 30)  # 80 tasks: "large"
    assert Merge(nodes=6).greedy_tasks(p) == 30
    groups, coarse = _coarsened(p, MergeOptions(nodes=6), first=30)
    assert len(coarse.tasks) == len(groups) <= 6
    assert quotient_is_acyclic(p, groups)
    s = solve(p, "merge", nodes=6, inner="heft", executor="serial", refine=0.5)
    s.validate(p)
    assert len(s.tasks) == len(p.tasks)


def test_under_a_limit_merge_keeps_back_the_finish_of_a_large_graph_scaled_by_the_machine_s_slowdown():
    p = layered_problem(levels=40, width=60)
    step = Merge(nodes=6)
    step.deadline = time.perf_counter() + 60.0
    step.size = len(p.edges) + len(p.tasks)
    step.finish = finish_seconds(p)          # the end of the solve, every method's
    quiet = step.greedy_tasks(p)
    refine = step.invert_seconds(60.0)
    step.slowdown = 4.0                     # a machine shared four ways
    assert step.finish_seconds() == pytest.approx(step.finish + 4.0 * step.size * merge_module.TIMING_SECONDS)
    assert step.finish_seconds(timing=False) == step.finish
    # (invert keeps the timing of the expanded schedule; the method keeps the end of the solve)
    assert step.invert_seconds(60.0) == pytest.approx(refine + 3.0 * step.size * merge_module.TIMING_SECONDS)
    step.size = 10**8                       # a finish longer than the time left: the fewest runs
    assert step.greedy_tasks(p) == 6 < quiet


def test_small_graphs_start_from_their_tasks_as_before():
    p = layered_problem()
    step = Merge(nodes=8)
    assert step.greedy_tasks(p) >= len(p.tasks)
    assert _coarsened(p, MergeOptions(nodes=8), step.greedy_tasks(p))[0] == _coarsened(p, MergeOptions(nodes=8))[0]


def test_coarse_edges_keep_the_heaviest_edge_and_own_transfer_times():
    p = layered_problem(levels=4, width=4)
    data = p.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["edges"][0]["transfer_times"] = {"dev0->dev1": 123.0}
    p = Problem.from_dict(data)
    groups = level_runs(p, 4)
    coarse = coarse_problem(p, groups, "c")
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    expected = {}
    for i, j, size in p.edges:  # the rule edge by edge
        a, b = group_of[i], group_of[j]
        if a != b:
            expected[a, b] = heavier(p, expected.get((a, b), 0.0), size)
    assert [(a, b) for a, b, _ in coarse.edges] == sorted(expected)
    for a, b, size in coarse.edges:
        assert float(size) == float(expected[a, b])
        assert isinstance(size, Payload) == isinstance(expected[a, b], Payload)


def test_the_inverse_times_match_the_schedules_it_no_longer_makes():
    import time

    from schedkit.reductions.coarsen import expand, expanded, makespan_of, reordered, reordered_times
    from schedkit.timing import fixed_order_times

    p = layered_problem(levels=6, width=5)
    groups = level_runs(p, 6)
    coarse = solve(coarse_problem(p, groups, "c"), "heft")
    device_of, orders = expanded(p, groups, coarse)
    whole = reordered(p, expand(p, groups, coarse, "x"), "x")
    start = reordered_times(p, device_of, orders)
    assert makespan_of(p, device_of, start) == whole.makespan
    # no time left: the left-shifted times, without HEFT's re-ordering
    assert reordered_times(p, device_of, orders, deadline=time.perf_counter() - 1) == \
        fixed_order_times(p, device_of, orders)
