"""merge: at most N nodes, never a cycle, members back to back; a restriction."""

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.decompositions.merge import Merge, merge_groups
from schedkit.generators import layered
from schedkit.testing import instance


def layered_problem(seed=4, levels=6, width=5):
    return Problem.from_dict(layered(levels=levels, width=width, edge_prob=0.3, long_range_prob=0.1,
                                     devices=3, seed=seed))


@pytest.mark.parametrize("nodes", [1, 4, 12, 29, 30, 100])
def test_at_most_n_nodes_and_never_a_cycle(nodes):
    p = layered_problem()
    coarse, _ = Merge(nodes=nodes).apply(p)  # a cycle would fail the coarse problem's own check
    assert len(coarse.tasks) == min(nodes, len(p.tasks))
    groups = merge_groups(p, nodes)
    assert sorted(i for g in groups for i in g) == list(range(len(p.tasks)))
    position = {i: k for k, i in enumerate(p.topological_order)}
    assert all([position[i] for i in g] == sorted(position[i] for i in g) for g in groups)


def test_a_merged_node_sums_durations_on_the_shared_devices():
    p = Problem.load("examples/tiny.yaml")
    groups = merge_groups(p, 3)
    coarse, _ = Merge(nodes=3).apply(p)
    for k, members in enumerate(groups):
        shared = set.intersection(*(set(p.allowed[i]) for i in members))
        assert set(coarse.allowed[k]) == shared
        for d in shared:
            assert coarse.durations[k][d] == pytest.approx(sum(p.durations[i][d] for i in members))
        assert coarse.task_memory[k] == pytest.approx(sum(p.task_memory[i] for i in members))


def test_the_expanded_schedule_is_valid_and_no_better_than_the_optimum():
    p = layered_problem(levels=4, width=4)
    best = solve(p, "milp", threads=1).makespan
    s = solve(p, "merge", nodes=6, inner="milp", executor="serial", refine=0)
    s.validate(p)
    assert s.status == "feasible" and s.bound is None and s.makespan >= best - 1e-9
    groups = merge_groups(p, 6)
    where = s.placement()
    assert all(len({where[p.tasks[i]] for i in g}) == 1 for g in groups)


def test_refinement_moves_devices_to_a_local_optimum_of_group_and_task_moves():
    from schedkit.reductions.refine import refined

    gains = []
    for seed in range(3):
        p = layered_problem(seed=seed, levels=8, width=6)
        expanded = solve(p, "merge", nodes=4, inner="heft", executor="serial", refine=0)
        better = solve(p, "merge", nodes=4, inner="heft", executor="serial")
        better.validate(p)
        assert better.status == "heuristic" and better.makespan <= expanded.makespan + 1e-9  # heft's word
        # a local optimum: no group of the coarsening, no part of one, no task is better elsewhere
        assert refined(p, better, merge_groups(p, 4), 30, "again") is better
        gains.append(expanded.makespan - better.makespan)
    assert max(gains) > 1.0


def test_collocation_groups_and_pins_are_kept():
    p = instance("fork_join").problem()
    data = p.spec.model_dump(mode="json", exclude_none=True)
    data["tasks"][1]["colocate"], data["tasks"][2]["colocate"] = "left", "right"
    data["tasks"][3]["pin"] = ["slow"]
    p = Problem.from_dict(data)
    groups = merge_groups(p, 3)
    assert not any({1, 2} <= set(g) for g in groups)
    s = solve(p, "merge", nodes=3, inner="heft", executor="serial")
    s.validate(p)
    # Two groups are joined only when nothing else merges: at 2 nodes left and right stay
    # apart; at 1 both groups share the pinned device.
    assert not any({1, 2} <= set(g) for g in merge_groups(p, 2))
    assert merge_groups(p, 1) == [[0, 1, 2, 3]]
    s = solve(p, "merge", nodes=1, inner="milp", executor="serial", refine=0)
    s.validate(p)
    assert set(s.placement().values()) == {"slow"}
    refined = solve(p, "merge", nodes=1, inner="milp", executor="serial")  # the pin stays; l, r may part
    refined.validate(p)
    assert refined.placement()["t"] == "slow" and refined.makespan <= s.makespan + 1e-9


def alternating_groups(capacity=None):
    """A chain a1 -> b1 -> a2 -> b2 whose a's and b's are two collocation groups: below four
    nodes, merging must join the groups."""
    tasks = [{"name": n, "work": 1.0, "memory": 1.5, "colocate": n[0]} for n in ("a1", "b1", "a2", "b2")]
    devices = [{"name": f"d{k}", **({"memory": capacity} if capacity else {})} for k in range(2)]
    return Problem.from_dict({"devices": devices, "tasks": tasks,
                              "edges": [{"src": s, "dst": d, "size": 1.0} for s, d in
                                        (("a1", "b1"), ("b1", "a2"), ("a2", "b2"))],
                              "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}]})


def test_two_collocation_groups_are_joined_when_nothing_else_merges():
    p = alternating_groups()
    coarse, _ = Merge(nodes=2).apply(p)
    assert len(coarse.tasks) == 2 and len(coarse.colocate_groups) == 1
    s = solve(p, "merge", nodes=2, inner="milp", executor="serial")
    s.validate(p)
    assert len(set(s.placement().values())) == 1 and s.makespan == pytest.approx(4.0)


def test_groups_that_do_not_fit_on_one_device_are_not_joined():
    p = alternating_groups(capacity=4.0)  # each group needs 3, both 6
    with pytest.raises(SchedkitError, match="cannot be merged below 4 nodes"):
        merge_groups(p, 2)


def test_nodes_below_one_is_an_error():
    with pytest.raises(SchedkitError, match="nodes: Input should be greater than or equal to 1"):
        solve(layered_problem(), "merge", nodes=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_deep_narrow_graph_keeps_its_parallelism(seed):
    """Merges that lengthen the critical path least: 120 tasks in 30 levels of 4 become 12
    nodes whose lower bound stays near the fine one (merging level by level made a chain,
    about twice as long)."""
    from schedkit.problem.bounds import lower_bound

    p = Problem.from_dict(layered(30, 4, edge_prob=0.1, long_range_prob=0.1, devices=3, seed=seed))
    coarse, _ = Merge(nodes=12).apply(p)
    assert lower_bound(coarse) <= 1.25 * lower_bound(p)


def test_the_inverse_reorders_members_that_wait_behind_their_node():
    """Slow links: the list schedule on the expanded schedule's devices is shorter, and kept."""
    from schedkit.reductions.coarsen import expand

    p = Problem.from_dict(layered(12, 4, edge_prob=0.1, long_range_prob=0.1, devices=4, seed=1,
                                  bandwidth=(0.1, 1.0)))
    coarse, inverse = Merge(nodes=6).apply(p)
    expanded = expand(p, inverse.payload["groups"], solve(coarse, "heft"), "expanded")
    s = solve(p, "merge", nodes=6, inner="heft", executor="serial", refine=0)
    s.validate(p)
    assert s.makespan < expanded.makespan - 1.0
    assert s.placement() == expanded.placement()


@pytest.mark.parametrize("levels, width, better", [(2, 20, "links"), (12, 3, "all")])
def test_auto_keeps_the_rule_whose_coarse_problem_has_the_smaller_bound(levels, width, better):
    # On a wide graph, contracting edges whose head has other inputs chains the levels; on
    # a narrow one it keeps the critical path short.
    from schedkit.problem.bounds import lower_bound
    p = Problem.from_dict(layered(levels, width, edge_prob=0.3, long_range_prob=0.1, devices=3, seed=0))
    bound = {edges: lower_bound(Merge(nodes=6, edges=edges).apply(p)[0]) for edges in ("all", "links", "auto")}
    worse = "all" if better == "links" else "links"
    assert bound["auto"] == bound[better] < bound[worse]
    s = solve(p, "merge", nodes=6, inner="heft", executor="serial")
    s.validate(p)


def test_links_only_still_contracts_edges_when_nothing_else_merges():
    p = Problem.load("examples/tiny.yaml")  # a chain at the end, a fork-join before it
    assert merge_groups(p, 1, edges="links") == [list(p.topological_order)]


def test_an_unknown_edge_rule_is_an_error():
    with pytest.raises(SchedkitError, match="edges"):
        solve(layered_problem(), "merge", nodes=4, edges="some")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_never_worse_than_heft_when_the_refinement_has_no_time(seed):
    """A deep graph at 2 nodes is a chain of two level ranges: its schedule runs on one
    device, about 3x HEFT's; with no time to refine it, HEFT's start is returned."""
    p = Problem.from_dict(layered(20, 6, edge_prob=0.3, long_range_prob=0.1, devices=6, seed=seed))
    heft = solve(p, "heft")
    expanded = solve(p, "merge", nodes=2, inner="heft", executor="serial", refine=0)
    assert len(set(expanded.placement().values())) == 1 and expanded.makespan > 2 * heft.makespan
    s = solve(p, "merge", nodes=2, inner="heft", executor="serial", refine=1e-9)
    s.validate(p)
    assert s.makespan == pytest.approx(heft.makespan, rel=1e-12) and s.placement() == heft.placement()
    refined = solve(p, "merge", nodes=2, inner="heft", executor="serial")
    assert refined.makespan <= heft.makespan + 1e-9


def test_the_heft_start_is_made_only_for_a_refinement_and_in_time():
    import time

    p = layered_problem()
    device_of, start = Merge(nodes=4).heft_start(p)
    assert max(start[i] + p.durations[i][d] for i, d in enumerate(device_of)) == \
        pytest.approx(solve(p, "heft").makespan)
    assert Merge(nodes=4, refine=0).heft_start(p) is None
    assert Merge(nodes=4).apply(p)[1].payload["start"] is None  # (no time limit: invert makes it)
    timed = Merge(nodes=4)
    timed.deadline = time.perf_counter() + 60.0
    assert timed.apply(p)[1].payload["start"] == (device_of, start)  # (the floor before the coarsening)
    late = Merge(nodes=4)
    late.deadline = time.perf_counter() - 1.0  # (the method's time limit has passed)
    assert late.heft_start(p) is None and late.apply(p)[1].payload["start"] is None


def test_the_runs_are_fewer_on_more_devices_and_on_a_slower_machine():
    import time
    from types import SimpleNamespace

    from schedkit.decompositions.merge import GREEDY_TASKS

    merge = Merge(nodes=40)
    merge.deadline = time.perf_counter() + 30.0
    graph = lambda devices: SimpleNamespace(tasks=range(10_000), devices=range(devices))  # noqa: E731
    few, many = merge.greedy_tasks(graph(4)), merge.greedy_tasks(graph(1025))
    merge.slowdown = 2.0
    slower = merge.greedy_tasks(graph(1025))
    assert 40 < slower < many < few <= GREEDY_TASKS


def test_the_heft_start_measures_how_much_slower_than_its_cpu_time_the_machine_runs(monkeypatch):
    import time

    p = layered_problem()
    merge = Merge(nodes=4)
    merge.deadline = time.perf_counter() + 60.0
    monkeypatch.setattr(time, "process_time", lambda: time.perf_counter() / 3)  # a third of the wall time
    merge.heft_start(p)
    assert merge.slowdown == pytest.approx(3.0, rel=0.05)
    unlimited = Merge(nodes=4)  # (no time limit: nothing is budgeted, nothing measured)
    unlimited.heft_start(p)
    assert unlimited.slowdown == 1.0


def test_with_heft_in_hand_and_no_time_left_the_expanded_schedule_is_not_timed(monkeypatch):
    import time

    import schedkit.decompositions.merge as merge_module
    from schedkit.methods import METHODS

    p = layered_problem()
    late = Merge(nodes=4)
    coarse, inverse = late.apply(p)
    results = [METHODS.get("heft")().result(coarse)]
    inverse.payload["start"] = Merge(nodes=4).heft_start(p)
    late.deadline = time.perf_counter() - 1.0

    def untimed(*args):
        raise AssertionError("the expanded schedule was timed")

    monkeypatch.setattr(merge_module, "expanded", untimed)
    s = late.invert(results, inverse).schedule
    assert s.makespan == pytest.approx(solve(p, "heft").makespan) and s.validate(p) is not None
    inverse.payload["start"] = None  # (no floor in hand: the expanded schedule, however late)
    with pytest.raises(AssertionError, match="was timed"):
        late.invert(results, inverse)



@pytest.mark.parametrize("inner, status", [("milp", "feasible"), ("heft", "heuristic")])
def test_a_merge_that_merged_something_proves_nothing(inner, status):
    coarse = solve(Problem.load("examples/hetero20.yaml"), "merge", inner=inner, executor="serial", nodes=5)
    assert coarse.status == status and coarse.bound is None
