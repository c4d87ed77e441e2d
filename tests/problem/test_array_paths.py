"""Heads, tails and ranks level by level on arrays equal the scalar loops, float for float."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError
from schedkit.errors import NoScheduleError
from schedkit.generators import erdos_renyi, layered
from schedkit.problem import bounds, graph
from schedkit.problem.levels import graph_levels
from schedkit.testing.strategies import problems as problem_data


def scalar_and_arrays(p):
    fresh = Problem(p.spec)
    with mock.patch.object(graph, "graph_levels", return_value=None):
        scalar = (graph.heads(fresh), graph.tails(fresh), graph.upward_rank(fresh), graph.downward_rank(fresh),
                  graph.upward_rank(fresh, "min"))
    arrays = (graph.heads(p), graph.tails(p), graph.upward_rank(p), graph.downward_rank(p),
              graph.upward_rank(p, "min"))
    return scalar, arrays


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=14, max_devices=4, transfer_times=True))
def test_paths_on_levels_equal_the_scalar_loops(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    assert graph_levels(p.arrays) is not None
    scalar, arrays = scalar_and_arrays(p)
    assert scalar == arrays


@pytest.mark.parametrize("data", [layered(12, 25, 0.2, 0.3, 6, seed=1), erdos_renyi(200, 0.03, 5, seed=3),
                                  layered(10, 30, 0.1, 0.5, 4, seed=2, latency=0.5, memory_slack=3.0)])
def test_paths_on_levels_equal_the_scalar_loops_on_larger_graphs(data):
    p = Problem.from_dict(data)
    scalar, arrays = scalar_and_arrays(p)
    assert scalar == arrays


def test_a_deep_chain_keeps_the_scalar_loops():
    n = 300
    p = Problem.from_dict({"devices": [{"name": "d"}], "tasks": [{"name": f"t{i}", "work": 1.0} for i in range(n)],
                           "edges": [{"src": f"t{i}", "dst": f"t{i + 1}", "size": 0.0} for i in range(n - 1)]})
    assert graph_levels(p.arrays) is None
    assert p.heads[-1] == n - 1 and p.tails[0] == n - 1


def reference_mean_comm(p):
    """The scalar mean transfer time of each edge (Topcuoglu et al.), pair by pair."""
    comm = []
    for i, j, size in p.edges:
        pairs = [(u, v) for u in p.allowed[i] for v in p.allowed[j] if u != v and p.linked[u][v]]
        if not size or not pairs:
            comm.append(0.0)
            continue
        mean_bandwidth = sum(1.0 / p.inv_bandwidth[u][v] for u, v in pairs) / len(pairs)
        inv, lat = 1.0 / mean_bandwidth, sum(p.latency[u][v] for u, v in pairs) / len(pairs)
        comm.append(size * inv + lat if inv or lat else 0.0)
    return comm


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=14, max_devices=5, transfer_times=True))
def test_mean_transfer_times_on_arrays_equal_the_scalar_rule(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    cost, comm = graph.mean_costs(p)
    assert comm == reference_mean_comm(p)
    assert cost == [sum(t.values()) / len(t) for t in p.durations]


def reference_weighted_load(problem, weights):
    """The load bound for weights ``c_d``, task by task and device by device."""
    used = {d for allowed in problem.allowed for d in allowed if weights[d] > 0}
    if not used:
        return 0.0
    work = 0.0
    for table, least in zip(problem.durations, problem.min_duration):
        if least > 0:
            work += min([weights[d] * t for d, t in table.items() if d in used], default=0.0)
    return work / sum(weights[d] for d in used)


def reference_inverse_slowness(problem):
    ratios = [[] for _ in problem.devices]
    for table, least in zip(problem.durations, problem.min_duration):
        if least > 0:
            for d, t in table.items():
                ratios[d].append(t / least)
    return [1.0 / sorted(values)[len(values) // 2] if values else 0.0 for values in ratios]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=14, max_devices=5), st.lists(st.sampled_from([0.0, 0.5, 1.0, 1 / 3, 3.0]),
                                                             min_size=5, max_size=5))
def test_load_bounds_on_arrays_equal_the_scalar_loops(data, weights):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    weights = weights[:len(p.devices)]
    assert bounds._weighted_load(p, weights) == reference_weighted_load(p, weights)
    slowness = reference_inverse_slowness(p)
    assert bounds._inverse_slowness(p) == slowness
    assert bounds._weighted_load(p, slowness) == reference_weighted_load(p, slowness)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from([1.0, 2.0, 0.5])), min_size=1,
                max_size=5),
       st.dictionaries(st.sampled_from(["a", "b", "c", "d0", "d1"]),
                       st.one_of(st.sampled_from([0.0, 1.0, 1 / 3, 7.5]),
                                 st.fixed_dictionaries({1: st.just(2.0), 4: st.just(5.0)})), max_size=4),
       st.one_of(st.none(), st.sampled_from([1.0, 3.3])))
def test_room_durations_equal_duration_on(devices, durations, work):
    # A task's durations by type (C-level maps) are those TaskSpec.duration_on gives.
    from schedkit.problem.durations import Room
    from schedkit.problem.spec import DeviceSpec, TaskSpec

    specs = [DeviceSpec(name=f"d{k}", type=kind, speed=speed) for k, (kind, speed) in enumerate(devices)]
    if work is None and not durations:
        work = 1.0
    task = TaskSpec(name="t", work=work) if work is not None else TaskSpec(name="t", durations=durations)
    index = {d.name: k for k, d in enumerate(specs)}
    for indices in (range(len(specs)), range(0, len(specs), 2)):
        room = Room(specs, list(indices))
        assert list(room.durations(task, index)) == [task.duration_on(d) for d in room.devices]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([1.0, 2.0]),
                          st.sampled_from([None, 1.0, 5.0])), min_size=1, max_size=6),
       st.lists(st.one_of(st.fixed_dictionaries({"work": st.sampled_from([1.0, 2.5])}),
                          st.fixed_dictionaries({"durations": st.dictionaries(st.sampled_from(["a", "b", "c"]),
                                                                              st.sampled_from([0.5, 1 / 3, 2.0]),
                                                                              min_size=1)})),
                min_size=1, max_size=8),
       st.sampled_from([0.0, 2.0]))
def test_durations_by_device_kind_equal_the_full_table(devices, tasks, memory):
    # Devices of one (type, speed, memory) read from one of them: the durations of the full table.
    from schedkit.problem import arrays

    data = {"devices": [{"name": f"d{k}", "type": kind, "speed": speed, **({"memory": cap} if cap else {})}
                        for k, (kind, speed, cap) in enumerate(devices)],
            "tasks": [{"name": f"t{i}", "memory": memory, **task} for i, task in enumerate(tasks)],
            "edges": []}
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    saved = arrays._KINDS_FROM
    arrays._KINDS_FROM = 1
    try:
        kinds = arrays._spec_kinds(p)
    finally:
        arrays._KINDS_FROM = saved
    device_type, table = arrays._typed_durations(p.durations, len(p.tasks), len(p.devices))
    assert kinds is not None and (kinds[1][:, kinds[0]] == table[:, device_type]).all()


# (many drawn files key durations by a type or a device the platform lacks: filtered out)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from([None, 1.0, 5.0])),
                min_size=1, max_size=7),
       st.lists(st.tuples(st.dictionaries(st.sampled_from(["a", "b", "c", "d0", "d3"]),
                                          st.sampled_from([0.5, 1 / 3, 2.0, 7.0]), min_size=1),
                          st.sampled_from([0.0, 2.0]), st.booleans()), min_size=1, max_size=9),
       st.randoms(use_true_random=False))
def test_durations_by_type_read_as_the_expanded_tables_and_schedule_alike(devices, tasks, rng):
    # A task keyed by types holds a TypeRow: every reading, and HEFT's and greedy's schedules,
    # are those of the same file with every entry written per device.
    from schedkit import solve
    from schedkit.problem.cluster import expanded
    from schedkit.problem.durations import TypeRow

    data = {"devices": [{"name": f"d{k}", **({"type": kind} if kind else {}), **({"memory": cap} if cap else {})}
                        for k, (kind, cap) in enumerate(devices)],
            "links": [{"src": f"d{k}", "dst": f"d{k + 1}", "bandwidth": 2.0 + k} for k in range(len(devices) - 1)],
            "tasks": [{"name": f"t{i}", "durations": table, "memory": memory, "output_size": 1.5,
                       **({"pin": [f"d{len(devices) - 1}"]} if pin and i == 0 else {})}
                      for i, (table, memory, pin) in enumerate(tasks)],
            "edges": [{"src": f"t{i}", "dst": f"t{j}"} for j in range(len(tasks)) for i in range(j)
                      if rng.random() < 0.4]}
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    q = Problem.from_dict(expanded(data))
    assert all(type(t) is dict for t in q.durations)
    assert p.allowed == q.allowed and p.min_duration == q.min_duration
    for mine, full in zip(p.durations, q.durations):
        assert mine == full and dict(mine.items()) == full and list(mine) == list(full)
        for d in range(-1, len(devices) + 1):
            assert mine.get(d) == full.get(d) and (d in mine) == (d in full)
            if d in full:
                assert mine[d] == full[d]
            else:
                with pytest.raises(KeyError):
                    mine[d]  # noqa: B018 - the dict it stands for raises too
    kinds = {kind for kind, _ in devices if kind}
    assert [type(t) is TypeRow for t in p.durations] == [bool(kinds & set(task["durations"])) and "pin" not in task
                                                         for task in data["tasks"]]
    assert graph.mean_costs(p) == graph.mean_costs(q)
    for method in ("heft", "greedy", "met"):
        try:
            a = solve(p, method)
        except NoScheduleError:   # (no placement fits the memory: three tasks of 2 that only
            with pytest.raises(NoScheduleError):  # a device of 5 takes; the file written out alike)
                solve(q, method)
            continue
        b = solve(q, method)
        assert [(r.device, r.start, r.end) for r in a.tasks] == [(r.device, r.start, r.end) for r in b.tasks]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 3), min_size=1, max_size=5), st.randoms(use_true_random=False),
       st.booleans())
def test_arrivals_per_link_class_equal_the_device_pairs(servers, rng, own_link):
    # Servers of 1 to 3 devices joined by group links (and at times a link of two devices of
    # their own, which may break the classes): arrivals per class are those per device pair,
    # and HEFT schedules alike either way.
    from schedkit import solve
    from schedkit.problem import arrays as arrays_module

    devices = [{"name": f"s{s}_{k}", "group": f"s{s}", "type": "ab"[s % 2]}
               for s, count in enumerate(servers) for k in range(count)]
    links = [{"src": f"s{a}", "dst": f"s{b}", "bandwidth": rng.choice([0.5, 1.0, 4.0]),
              "latency": rng.choice([0.0, 0.25])}
             for a in range(len(servers)) for b in range(a, len(servers)) if a != b or servers[a] > 1]
    if own_link and len(devices) > 1:
        links.append({"src": devices[0]["name"], "dst": devices[-1]["name"], "bandwidth": 9.0})
    n = 12
    data = {"devices": devices, "links": links,
            "tasks": [{"name": f"t{i}", "durations": {"a": rng.choice([0.5, 1.0, 2.0]), "b": rng.choice([1.0, 3.0])},
                       "output_size": rng.choice([0.0, 1.0, 3.0])} for i in range(n)],
            "edges": [{"src": f"t{i}", "dst": f"t{j}"} for j in range(n) for i in range(j) if rng.random() < 0.3]}
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    q = Problem(p.spec)
    with mock.patch.object(arrays_module, "_link_classes", return_value=(None, None, None)):
        assert q.arrays.link_class is None
    a, b = p.arrays, q.arrays
    m = len(p.devices)
    with mock.patch.object(arrays_module, "CLASSES_FROM", 0):  # every task by class, however few inputs
        if not own_link and 2 * len(servers) <= m:
            assert a.link_class is not None
        for _ in range(5):
            device = np.array([rng.randrange(m) for _ in range(n)])
            end = np.array([rng.choice([0.0, 1.0, 2.5, 7.0]) for _ in range(n)])
            for i in range(n):
                assert a.arrivals(i, device, end).tolist() == b.arrivals(i, device, end).tolist()
        one, other = solve(p, "heft"), solve(q, "heft")
    assert [(r.device, r.start) for r in one.tasks] == [(r.device, r.start) for r in other.tasks]


def test_edge_columns_read_from_an_edge_table_are_the_edge_lists():
    # A bulk-loaded file's edges reach the arrays from its columns: the floats of Problem.edges,
    # a size not given read as the source's output_size.
    from schedkit.problem.bulk import fast_spec
    from schedkit.problem.edge_table import EdgeTable

    data = layered(20, 30, 0.3, 0.1, 4, seed=5)
    for k, edge in enumerate(data["edges"]):
        if k % 3 == 0:
            edge.pop("size", None)
    spec = fast_spec(data, least=0)
    assert isinstance(spec.edges, EdgeTable) and any(s != s for s in spec.edges.size)
    p = Problem(spec)
    a = p.arrays
    assert a.edge_src.tolist() == [i for i, _, _ in p.edges] and a.edge_dst.tolist() == [j for _, j, _ in p.edges]
    assert a.edge_size.tolist() == [size for _, _, size in p.edges]
    assert a.edge_src.dtype == a.edge_dst.dtype == np.int64
