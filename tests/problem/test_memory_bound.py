"""The memory-aware bound: never above the proven optimum, stronger where memory splits a path."""

import contextlib
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Problem, ProblemError
from schedkit.problem.bounds import critical_path_bound, device_bound, load_bound, lower_bound
from schedkit.problem import path_split
from schedkit.problem.memory_bound import memory_bound
from schedkit.testing.strategies import problems


@st.composite
def tight_chains(draw) -> dict:
    """A chain of 3-6 tasks, with side chains of 1-2 tasks from one of its tasks to a later
    one and edges that skip some, some tasks colocated, on 2-3 devices whose memory holds only part of it: the
    instances the bound is for."""
    n = draw(st.integers(3, 6))
    m = draw(st.integers(2, 3))
    devices = [{"name": f"d{k}", "memory": draw(st.sampled_from([2, 3, 4, None]))} for k in range(m)]
    devices[0]["memory"] = draw(st.sampled_from([2, 3]))
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": draw(st.sampled_from([0.5, 1, 4])),
              "latency": draw(st.sampled_from([0, 0.5]))} for u in range(m) for v in range(u + 1, m)]
    names = [f"t{k}" for k in range(n)]
    sizes = st.sampled_from([0, 1, 2, 4])
    edges = [{"src": a, "dst": b, "size": draw(sizes)} for a, b in zip(names, names[1:])]
    tasks = [{"name": name} for name in names]
    for k in range(draw(st.integers(0, 2))):  # side chains from t_i to a later t_j
        i = draw(st.integers(0, n - 2))
        chain = [f"s{k}{q}" for q in range(draw(st.integers(1, 2)))]
        tasks += [{"name": name} for name in chain]
        ends = [names[i]] + chain + [names[draw(st.integers(i + 1, n - 1))]]
        edges += [{"src": a, "dst": b, "size": draw(sizes)} for a, b in zip(ends, ends[1:])]
    for _ in range(draw(st.integers(0, 2))):  # edges that skip some of the chain
        i = draw(st.integers(0, n - 3))
        edges.append({"src": names[i], "dst": names[draw(st.integers(i + 2, n - 1))], "size": draw(sizes)})
    for task in tasks:
        task["durations"] = {f"d{d}": draw(st.sampled_from([1, 2, 5])) for d in range(m) if d == 0 or draw(st.booleans())}
        task["memory"] = draw(st.sampled_from([0, 1, 1, 2]))
        if draw(st.integers(0, 5)) == 0:
            task["colocate"] = "g"
    return {"name": "tight", "devices": devices, "links": links, "tasks": tasks, "edges": edges}


def _optimum(data):
    """The MILP's proven optimum of ``data``, or None (infeasible, or not built)."""
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        return None, None
    s = schedkit.solve(p, "milp", threads=1, time_limit=30)
    if s.status == "infeasible":
        return p, None
    assert s.status == "optimal"
    return p, s.makespan


#: No split fits (the group's memory exceeds every device): the bound was inf, which the
#: MILP took as its makespan's lower bound and failed to build.
NO_SPLIT_FITS = {
    "name": "tight", "devices": [{"name": "d0", "memory": 2}, {"name": "d1", "memory": 2}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 0.5, "latency": 0}],
    "tasks": [{"name": "t0", "durations": {"d0": 1}, "memory": 1, "colocate": "g"},
              {"name": "t1", "durations": {"d0": 1}, "memory": 0, "colocate": "g"},
              {"name": "s", "durations": {"d0": 1, "d1": 1}, "memory": 2, "colocate": "g"}],
    "edges": [{"src": "t0", "dst": "t1", "size": 0}, {"src": "t0", "dst": "s", "size": 0},
              {"src": "s", "dst": "t1", "size": 0}]}


@example(data=NO_SPLIT_FITS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tight_chains())
def test_never_above_the_optimum_of_tight_chains(data):
    p, best = _optimum(data)
    if best is not None:
        assert memory_bound(p) <= best * (1 + 1e-6) + 1e-9
        assert memory_bound(p, communication=False) <= memory_bound(p) + 1e-9
        with _near(1):  # every run but the shortest weighed as a plain split
            assert memory_bound(p) <= best * (1 + 1e-6) + 1e-9


@contextlib.contextmanager
def _near(starts):
    """Weigh only ``starts`` starts of each run exactly (the others: the plain split)."""
    saved = path_split._WORK, path_split._NEAR_LEAST
    path_split._WORK, path_split._NEAR_LEAST = 1, starts
    try:
        yield
    finally:
        path_split._WORK, path_split._NEAR_LEAST = saved


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=6, min_devices=2, max_devices=3, transfer_times=True))
def test_never_above_the_optimum_of_random_problems(data):
    p, best = _optimum(data)
    if best is not None:
        assert lower_bound(p) <= best * (1 + 1e-6) + 1e-9


def _chain(capacity, sizes, side=None, skip=None):
    """Four unit tasks of memory 1 in a chain on two devices of ``capacity``."""
    tasks = [{"name": f"t{k}", "work": 1, "memory": 1} for k in range(4)]
    edges = [{"src": f"t{k}", "dst": f"t{k + 1}", "size": s} for k, s in enumerate(sizes)]
    if skip is not None:  # an edge from t0 to t3
        edges.append({"src": "t0", "dst": "t3", "size": skip})
    if side is not None:  # a task beside the chain, from t0 to t2
        tasks.append({"name": "s", "work": 1, "memory": side})
        edges += [{"src": "t0", "dst": "s", "size": 8}, {"src": "s", "dst": "t2", "size": 8}]
    return Problem.from_dict({"name": "chain", "devices": [{"name": "a", "memory": capacity},
                                                            {"name": "b", "memory": capacity}],
                              "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                              "tasks": tasks, "edges": edges})


def _old(p):
    return max(critical_path_bound(p), load_bound(p), device_bound(p))


def test_a_chain_that_no_device_holds_pays_its_cheapest_cut():
    p = _chain(2, [5, 1, 5])
    assert _old(p) == 4.0
    assert memory_bound(p) == lower_bound(p) == 5.0 == schedkit.solve(p, "milp", threads=1).makespan


def test_a_detour_counts_the_memory_beside_the_path():
    # t0..t3 fit one device (capacity 5); with s beside them (memory 2) they do not: either s
    # runs elsewhere (two transfers of 8 on its way from t0 to t2) or the chain is cut once.
    p = _chain(5, [3, 3, 3], side=2)
    assert _old(p) == 4.0
    assert memory_bound(p) == 7.0
    assert memory_bound(_chain(5, [3, 3, 3])) == 0.0  # (without s, one device holds them all)
    assert schedkit.solve(p, "milp", threads=1).makespan == 8.0


def test_an_edge_that_skips_part_of_the_path_pays_at_a_single_cut():
    # Three tasks per device: one cut between t0 and t3 makes the skip edge (6) a transfer;
    # the optimum cuts twice (t0 and t3 on one device, t1 and t2 on the other).
    p = _chain(3, [1, 1, 1], skip=6)
    assert _old(p) == 4.0
    assert memory_bound(p) == 6.0 == schedkit.solve(p, "milp", threads=1).makespan


def test_no_split_is_no_bound():
    p = Problem.from_dict(NO_SPLIT_FITS)
    assert lower_bound(p) < math.inf and schedkit.solve(p, "milp", threads=1).status == "infeasible"


def test_unlimited_memory_adds_nothing_and_flags_drop_it():
    p = Problem.load("examples/topcuoglu2002.json")
    assert memory_bound(p) == 0.0
    q = _chain(2, [5, 1, 5])
    assert lower_bound(q, memory=False) == lower_bound(q, communication=True, memory=False) == 4.0
    assert lower_bound(q, communication=False) == 4.0


@pytest.mark.parametrize("graph, old, new", [("resnet50", 187.4, 700.0), ("inceptionv3", 195.2, 740.0)])
def test_msr_layer_graphs(graph, old, new):
    from schedkit.importers.msr import load_msr

    p = Problem.from_dict(load_msr(f"data/msr-dnn/layer/{graph}_inference.json"))
    assert old < _old(p) < old + 0.1
    assert lower_bound(p) >= new


@pytest.mark.parametrize("method", ["heft", "greedy", "annealing", "critical_path+pct", "milp", "auto"])
def test_every_method_reports_the_bound_of_the_formulation_it_solves(method):
    # jssp drops memory and transfers: its optimum (4) lies below the problem's bound (5)
    p = _chain(2, [5, 1, 5])
    options = {"threads": 1} if method in ("milp", "auto") else {}
    schedule = schedkit.solve(p, method, formulation="jssp", **options)
    assert schedule.bound is not None and schedule.bound <= 4.0 + 1e-9
