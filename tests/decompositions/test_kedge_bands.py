"""kedge on bands of a topological order: the path it takes when a Gomory-Hu tree would not fit.

Every test forces it on a small graph with ``tree_seconds=0``: the modules cover every task
once, form a DAG, are balanced, the schedule validates and the bound stays below the
optimum.
"""

import re

import numpy as np
import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.validate import violations
from schedkit.decompositions.kedge import Kedge
from schedkit.decompositions.kedge_bands import band_modules, crossings
from schedkit.generators import layered, rwnn
from schedkit.reductions import Chain, DecompositionOutOfTime, DecompositionRefused

from helpers.split_rounds import run_rounds


def _layered(levels=20, width=10, seed=0):
    return Problem.from_dict(layered(levels=levels, width=width, edge_prob=0.2, long_range_prob=0.1,
                                     devices=3, seed=seed))


def _labels(problem, modules):
    label = np.full(len(problem.tasks), -1)
    for t, tasks in enumerate(modules):
        assert (label[tasks] == -1).all(), "a task in two modules"
        label[tasks] = t
    return label


@pytest.mark.parametrize("tasks, share", [(50, 1.0), (30, 0.3), (1000, 0.3), (7, 0.5)])
def test_bands_cover_every_task_once_form_a_dag_and_are_balanced(tasks, share):
    p = _layered()
    modules = band_modules(p, tasks, share)
    label = _labels(p, modules)
    assert (label >= 0).all()
    assert all(m == sorted(m) for m in modules)
    src, dst = p.arrays.edge_src, p.arrays.edge_dst
    assert (label[src] <= label[dst]).all()  # every edge forward: modules in topological order
    n = len(p.tasks)
    even = n / max(2, -(-n // tasks), -(-1 // share))  # (the bands' even size)
    assert max(map(len, modules)) <= min(share * n, -(-1.5 * even // 1))
    assert min(map(len, modules)) >= even / 2


def test_each_cut_is_where_fewest_edges_cross_near_its_place():
    p = _layered()
    cross = crossings(p)
    position = {i: k for k, i in enumerate(p.topological_order)}
    modules = band_modules(p, 50, 1.0)
    cuts = [min(position[i] for i in m) for m in modules[1:]]
    # (bands of 50 tasks: each cut within [25, 75] tasks of the one before it)
    before = 0
    for cut in cuts:
        window = cross[before + 25:min(before + 75, len(p.tasks) - 25) + 1]
        assert cross[cut] == window.min()
        before = cut
    # a cut counts the edges from the tasks before it to those after it
    tail = set(p.topological_order[:cuts[0]])
    assert cross[cuts[0]] == sum(1 for i, j, _ in p.edges if i in tail and j not in tail)


def test_with_k_every_cut_has_fewer_than_k_edges_across_or_the_graph_is_refused():
    p = Problem.from_dict(rwnn(4, 8, channels=2, dependency="sdep", seed=0))
    modules = band_modules(p, 12, 1.0, k=3)
    label = _labels(p, modules)
    across = np.bincount(label[p.arrays.edge_src], minlength=len(modules))
    inner = np.bincount(label[p.arrays.edge_src][label[p.arrays.edge_src] == label[p.arrays.edge_dst]],
                        minlength=len(modules))
    assert len(modules) == 4 and ((across - inner)[:-1] < 3).all()
    with pytest.raises(DecompositionRefused, match="k=1 does not split the task graph"):
        solve(p, "kedge", k=1, tree_seconds=0, inner="heft", executor="serial")


def test_banded_kedge_validates_and_its_bound_stays_below_the_optimum():
    p = Problem.from_dict(rwnn(3, 4, channels=2, seed=1))
    s = solve(p, "kedge", tree_seconds=0, module_tasks=6, inner="milp", executor="serial")
    best = solve(p, "milp", threads=1)
    assert best.status == "optimal"
    assert s.status == "feasible"
    assert s.bound <= best.makespan + 1e-9 <= s.makespan + 1e-9
    s.validate(p)


def test_banded_rounds_are_a_module_and_its_whole_bound_part():
    p = _layered(levels=12, width=5)
    split = Kedge(tree_seconds=0, module_tasks=20)
    chain = Chain.of(split)
    rounds, results, inverse = run_rounds(chain, p)
    assert len(rounds) == len(split._modules(p)[0]) >= 3
    assert all(len(r) == 2 and r[1].name.endswith("/bound:all") for r in rounds)
    assert any(t.startswith("~busy:") for t in rounds[1][0].tasks)
    result = chain.invert(results, inverse, problem=p)
    result.schedule.validate(p)
    assert 0 < result.bound <= result.objective


def test_banded_kedge_with_memory_and_collocation_keeps_both():
    data = layered(levels=8, width=4, edge_prob=0.3, long_range_prob=0.1, devices=3, seed=2)
    for task in data["tasks"]:
        task["memory"] = 1.0
    data["devices"][0]["memory"] = 10.0
    data["tasks"][0]["colocate"] = data["tasks"][-1]["colocate"] = "ends"
    p = Problem.from_dict(data)
    s = solve(p, "kedge", tree_seconds=0, module_tasks=8, inner="heft", executor="serial")
    s.validate(p)
    where = s.placement()
    assert sum(1 for r in s.tasks if r.device == p.devices[0]) <= 10
    assert where[data["tasks"][0]["name"]] == where[data["tasks"][-1]["name"]]


def test_the_tree_is_kept_while_it_fits_and_bands_take_over_beyond():
    p = Problem.from_dict(rwnn(4, 8, channels=2, dependency="sdep", seed=0))
    exact, banded = Kedge(k=3), Kedge(k=3, tree_seconds=0, module_tasks=12)
    assert exact._modules(p)[1] is False and banded._modules(p)[1] is True
    s = solve(p, "kedge", k=3, inner="heft", executor="serial")
    t = solve(p, "kedge", k=3, tree_seconds=1e-9, inner="heft", executor="serial")
    s.validate(p)
    t.validate(p)
    assert s.bound <= s.makespan and t.bound <= t.makespan


@pytest.mark.parametrize("option, value, words", [("module_tasks", 0, "module_tasks: Input should be greater"),
                                                  ("tree_seconds", -1, "tree_seconds: Input should be greater")])
def test_bad_options_are_named(option, value, words):
    p = Problem.from_dict(rwnn(2, 4, channels=2, seed=0))
    with pytest.raises(SchedkitError, match=words):
        solve(p, "kedge", **{option: value})


def test_under_a_short_time_limit_the_bands_left_are_joined_into_fewer_rounds():
    import time

    p = _layered(levels=40, width=10)
    split = Kedge(tree_seconds=0, module_tasks=40, max_share=1.0)
    bands = split._modules(p)[0]
    for seconds, joined in ((3600.0, False), (1e-3, True)):
        split.deadline = time.perf_counter() + seconds
        parts, inverse = split.apply(p)
        modules = inverse.payload["modules"]
        assert (len(modules) < len(bands)) is joined
        assert len(parts) == (1 if joined else 2)  # (joined: no bound part, the modules need the time)
        label = _labels(p, modules)
        assert (label >= 0).all() and (label[p.arrays.edge_src] <= label[p.arrays.edge_dst]).all()
    assert len(modules) == 1 and parts[0].tasks == p.tasks  # (no time for a second round)


def test_banded_kedge_keeps_its_time_limit():
    import time

    p = _layered(levels=60, width=50)  # 3,000 tasks in bands of 300: 10 rounds
    began = time.perf_counter()
    s = solve(p, "kedge", tree_seconds=0, module_tasks=300, time_limit=2.0, executor="serial")
    assert time.perf_counter() - began <= 1.05 * 2.0 + 3.0
    s.validate(p)
    assert len(s.tasks) == len(p.tasks) and s.status in ("feasible", "heuristic")


def test_banded_parts_give_the_same_schedule_on_every_executor():
    import logging

    distributed = pytest.importorskip("distributed")
    p = _layered(levels=12, width=5)
    options = {"tree_seconds": 0, "module_tasks": 20, "inner": "heft"}
    rows = lambda s: s.model_dump(mode="json", by_alias=True, exclude={"solve_seconds"})  # noqa: E731
    serial = solve(p, "kedge", executor="serial", **options)
    assert rows(solve(p, "kedge", executor="process:2", **options)) == rows(serial)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    try:
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        assert rows(solve(p, "kedge", executor=address, **options)) == rows(serial)
    finally:
        cluster.close()


def test_bands_that_cannot_end_in_the_time_left_give_heft_s_whole_schedule_saying_why():
    p = _layered()
    s = solve(p, "kedge", tree_seconds=0, time_limit=0.1, inner="heft", executor="serial")
    assert (s.status, s.method) == ("heuristic", "kedge:heft")
    assert s.makespan == solve(p, "heft").makespan and not violations(p, s)
    assert re.search(r"its modules' rounds need about [0-9.]+ s on 200 tasks and 424 edges, more than the "
                     r"0\.[01] s the time limit leaves .*: heft's schedule of the whole problem instead", s.message)


def test_bands_that_cannot_end_in_time_where_heft_would_not_either_are_refused_in_one_line(monkeypatch):
    import schedkit.reductions.budget as budget

    monkeypatch.setattr(budget, "LIST_SECONDS", 1e3)  # (heft's whole schedule would take hours)
    with pytest.raises(DecompositionOutOfTime, match=r"its modules' rounds need about [0-9.]+ s on 200 tasks and "
                                                     r"424 edges, more than the 0\.[01] s the time limit leaves"):
        solve(_layered(), "kedge", tree_seconds=0, time_limit=0.1, inner="heft", executor="serial")
