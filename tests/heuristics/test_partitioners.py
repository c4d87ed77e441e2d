"""Partitioners (Mayer et al. 2017): feasibility, determinism and their defining choices."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit.testing.strategies import problems as problem_data
from schedkit import Problem, ProblemError
from schedkit.problem.mapping import check_mapping
from schedkit.generators import erdos_renyi, layered
from schedkit.heuristics.measures import critical_path_tasks, device_speeds, total_rank
from schedkit.heuristics.partitioners import (PARTITIONERS, _TrafficRows, batch_split,
                                              critical_path, dfs, hash_partition, mite)
from schedkit.problem.graph import upward_rank
from schedkit.timing import arrival

NAMES = sorted(PARTITIONERS)


def chain(n, speeds, memory=None, task_memory=0.0, size=1.0):
    devices = [{"name": f"d{k}", "speed": s} for k, s in enumerate(speeds)]
    if memory is not None:
        for row in devices:
            row["memory"] = memory
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": 1.0}
             for u in range(len(speeds)) for v in range(u + 1, len(speeds))]
    tasks = [{"name": f"t{i}", "work": 1.0, "memory": task_memory, "output_size": size}
             for i in range(n)]
    edges = [{"src": f"t{i}", "dst": f"t{i + 1}"} for i in range(n - 1)]
    return Problem.from_dict({"name": "chain", "devices": devices, "links": links,
                              "tasks": tasks, "edges": edges})


@pytest.fixture(scope="module")
def tiny():
    return Problem.load("examples/tiny.yaml")


@pytest.fixture(scope="module")
def generated():
    return [Problem.from_dict(layered(5, 6, 0.4, 0.3, devices=4, seed=1)),
            Problem.from_dict(erdos_renyi(20, 0.25, devices=3, seed=2)),
            Problem.from_dict(layered(4, 5, 0.5, 0.2, devices=3, seed=3, memory_slack=1.5))]


@pytest.mark.parametrize("name", NAMES)
def test_feasible_and_deterministic(name, tiny, generated):
    for p in [tiny, *generated]:
        mapping = PARTITIONERS[name](p)
        check_mapping(p, mapping)
        assert mapping == PARTITIONERS[name](p)


def test_tiny_pinned_task_stays_on_cpu(tiny):
    cpu = tiny.device_index["cpu"]
    for name in NAMES:
        assert PARTITIONERS[name](tiny)[tiny.task_index["sample"]] == cpu


def test_device_speeds_of_work_problems():
    p = chain(3, [1.0, 4.0, 2.0])
    assert device_speeds(p) == pytest.approx([0.25, 1.0, 0.5])


def test_hash_seed_and_speed_proportional_spread():
    p = Problem.from_dict({"devices": [{"name": "slow", "speed": 1}, {"name": "fast", "speed": 3}],
                           "tasks": [{"name": f"t{i}", "work": 1} for i in range(2000)]})
    a, b = hash_partition(p, seed=0), hash_partition(p, seed=1)
    assert a != b
    share = sum(a) / len(a)            # fraction on the fast device
    assert 0.70 < share < 0.80         # speed-proportional: 3 / 4


def test_batch_split_gives_highest_ranks_to_fastest_device():
    p = Problem.from_dict(layered(6, 8, 0.4, 0.2, devices=4, seed=5))
    mapping = batch_split(p)
    rank = total_rank(p)
    top = max(range(len(p.tasks)), key=lambda i: rank[i])
    speeds = device_speeds(p)
    assert mapping[top] == max(range(len(p.devices)), key=lambda d: speeds[d])


def test_batch_split_by_hand_on_topcuoglu():
    # Speeds p1 0.778 > p2 0.735 > p3 0.680; quotas of the 133.33 of mean cost: p1 up to
    # 47.32, p2 up to 91.98. Total ranks: n1, n2, n9, n10 108 (the critical path: equal,
    # so in file order), n3 and n7 105, n8 102.33, n4 102, n5 93, n6 90.33. Middles of the
    # running mean costs: n1 6.5, n2 21.3, n9 38.0 -> p1; n10 53.7, n3 68.2, n7 80.8,
    # n8 91.3 -> p2; n4, n5, n6 -> p3.
    p = Problem.load("examples/topcuoglu2002.json")
    mapping = {t: p.devices[d] for t, d in zip(p.tasks, batch_split(p))}
    assert mapping == {"n1": "p1", "n2": "p1", "n9": "p1", "n10": "p2", "n3": "p2", "n7": "p2",
                       "n8": "p2", "n4": "p3", "n5": "p3", "n6": "p3"}


def test_batch_split_on_hetero20():
    # Checked against a re-implementation of batch split on ranks computed by networkx
    # (Bellman-Ford on negated weights) with Topcuoglu's mean transfer times.
    p = Problem.load("examples/hetero20.yaml")
    on = {d: sorted(p.tasks[i] for i, k in enumerate(batch_split(p)) if p.devices[k] == d)
          for d in p.devices}
    assert on == {"cpu": ["decode", "load_image", "t_mlp2", "t_pool", "t_proj", "tokenize", "topk"],
                  "gpu0": ["patch_embed", "v_attn1", "v_attn2", "v_mlp1"],
                  "gpu1": ["scale", "score", "t_attn1", "t_attn2", "t_mlp1", "tok_embed", "v_mlp2",
                           "v_pool", "v_proj"]}


def test_critical_path_on_one_fastest_device():
    p = Problem.from_dict(layered(6, 5, 0.4, 0.2, devices=4, seed=7))
    mapping = critical_path(p)
    path = critical_path_tasks(p)
    assert len({mapping[i] for i in path}) == 1
    d = mapping[path[0]]
    best = min(range(len(p.devices)), key=lambda k: sum(p.durations[i][k] for i in path))
    assert d == best
    # Critical path of tiny: embed, mlp, norm, logits, sample (by mean costs).
    tiny = Problem.load("examples/tiny.yaml")
    assert [tiny.tasks[i] for i in critical_path_tasks(tiny)] == ["embed", "mlp", "norm", "logits", "sample"]


def test_critical_path_uses_topcuoglus_mean_transfer_time():
    # s (on a only) feeds x (b or c) 10 units of data, and y (anywhere) none. The pairs of
    # s -> x are a->b (bandwidth 1) and a->c (100): the mean transfer time is
    # 10 / mean bandwidth = 10 / 50.5 = 0.198, so the path through y (1 + 3) beats the path
    # through x (1 + 0.198 + 1). Averaging 1 / bandwidth instead (10 * 0.505 = 5.05) would
    # pick x, and critical_path would then map s, x, y to a, b, c.
    p = Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 1}, {"src": "a", "dst": "c", "bandwidth": 100},
                  {"src": "b", "dst": "c", "bandwidth": 100}],
        "tasks": [{"name": "s", "durations": {"a": 1}}, {"name": "x", "durations": {"b": 1, "c": 1}},
                  {"name": "y", "work": 3}],
        "edges": [{"src": "s", "dst": "x", "size": 10}, {"src": "s", "dst": "y", "size": 0}]})
    assert upward_rank(p) == pytest.approx([4.0, 1.0, 3.0])
    assert critical_path_tasks(p) == [0, 2]
    # s and y on a, the only device that runs both; x to the least loaded of b and c (a tie: b).
    assert critical_path(p) == [0, 1, 0]


def test_mite_keeps_a_chain_together_on_a_fast_device():
    p = chain(6, [1.0, 1.0], size=5.0)
    assert len(set(mite(p))) == 1


def test_dfs_fills_devices_in_order():
    assert dfs(chain(6, [1.0, 1.0])) == [0, 0, 0, 1, 1, 1]
    assert dfs(chain(8, [3.0, 1.0])) == [0] * 6 + [1] * 2


def test_memory_capacity_respected():
    p = chain(6, [1.0, 4.0], memory=3.0, task_memory=1.0)
    for name in NAMES:
        mapping = PARTITIONERS[name](p)
        check_mapping(p, mapping)
        assert mapping.count(0) == mapping.count(1) == 3


def test_colocation_groups_share_a_device():
    data = layered(3, 4, 0.5, 0.0, devices=3, seed=0)
    for k, task in enumerate(data["tasks"]):
        if k % 3 == 0:
            task["colocate"] = "g"
    p = Problem.from_dict(data)
    members = p.colocate_groups["g"]
    for name in NAMES:
        mapping = PARTITIONERS[name](p)
        assert len({mapping[i] for i in members}) == 1


def test_group_too_big_for_any_device_is_an_error():
    data = {"devices": [{"name": "a", "memory": 10}, {"name": "b", "memory": 10}],
            "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
            "tasks": [{"name": "x", "work": 1, "memory": 6, "colocate": "g"},
                      {"name": "y", "work": 1, "memory": 6, "colocate": "g"}]}
    p = Problem.from_dict(data)
    for name in NAMES:
        with pytest.raises(ProblemError, match="collocation group 'g'"):
            PARTITIONERS[name](p)


def test_group_without_common_device_is_an_error():
    data = {"devices": [{"name": "a"}, {"name": "b"}],
            "tasks": [{"name": "x", "durations": {"a": 1}, "colocate": "g"},
                      {"name": "y", "durations": {"b": 1}, "colocate": "g"}]}
    with pytest.raises(ProblemError, match="share no device"):
        critical_path(Problem.from_dict(data))


def test_units_bound_to_unlinked_devices_are_an_error():
    # The group {x, y} may only use a (x is pinned), z only b, and y sends z data: no
    # placement exists although every task alone has a device (found by hypothesis).
    data = {"devices": [{"name": "a"}, {"name": "b"}],
            "tasks": [{"name": "x", "work": 1, "pin": ["a"], "colocate": "g"},
                      {"name": "y", "work": 1, "colocate": "g"},
                      {"name": "z", "durations": {"b": 1}}],
            "edges": [{"src": "y", "dst": "z", "size": 1}]}
    p = Problem.from_dict(data)
    for name in NAMES:
        with pytest.raises(ProblemError, match="task 'z': device b, the only one it may use, has no link"):
            PARTITIONERS[name](p)


def test_unlinked_devices_are_avoided_for_edges():
    # Two islands {a, b} and {c}; the chain must stay on one island.
    data = {"devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
            "tasks": [{"name": f"t{i}", "work": 1, "output_size": 1} for i in range(6)],
            "edges": [{"src": f"t{i}", "dst": f"t{i + 1}"} for i in range(5)]}
    p = Problem.from_dict(data)
    for name in NAMES:
        check_mapping(p, PARTITIONERS[name](p))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=problem_data())
def test_random_problems_feasible_mapping_or_error(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        return
    failed = []
    for name in NAMES:
        try:
            mapping = PARTITIONERS[name](p)
        except ProblemError:
            failed.append(name)
            continue
        check_mapping(p, mapping)
    assert failed in ([], NAMES)      # only when no feasible placement exists


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=problem_data())
def test_mite_traffic_table_is_the_transfer_rule(data):
    # MITE reads transfer times from a table of rows; every entry between linked devices
    # is the one transfer rule's (arrival() from time 0), in the right direction.
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        return
    rows = _TrafficRows(p)
    m = len(p.devices)
    for _, _, size in p.edges:
        for v in range(m):
            for d in range(m):
                if p.linked[v][d]:
                    assert rows.inbound(size, v)[d] == arrival(p, 0.0, size, v, d)
                if p.linked[d][v]:
                    assert rows.outbound(size, v)[d] == arrival(p, 0.0, size, d, v)


def test_safe_mode_finds_the_packing_greedy_misses():
    # x and y spread over a and b leave no room for z; x and y together on one device do.
    data = {"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
            "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
            "tasks": [{"name": "x", "work": 1, "memory": 2}, {"name": "y", "work": 1, "memory": 2},
                      {"name": "z", "work": 1, "memory": 4}]}
    p = Problem.from_dict(data)
    for name in NAMES:
        mapping = PARTITIONERS[name](p)
        check_mapping(p, mapping)
        assert mapping[0] == mapping[1] != mapping[2]


def test_infeasible_packing_is_an_error():
    data = {"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
            "tasks": [{"name": f"t{i}", "work": 1, "memory": 3} for i in range(3)]}
    p = Problem.from_dict(data)
    for name in NAMES:
        with pytest.raises(ProblemError, match="no placement of the tasks"):
            PARTITIONERS[name](p)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=8, max_devices=5, transfer_times=True), st.data())
def test_traffic_sums_on_arrays_equal_the_rows_summed(data, draw):
    # MITE's traffic per device: the exact sums of the rows inbound() and outbound() give.
    import math

    from schedkit.heuristics.partitioners import _TrafficRows

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    assume(p.edges)
    traffic = _TrafficRows(p)
    devices = st.sampled_from(range(len(p.devices)))
    sizes = st.sampled_from([size for _, _, size in p.edges if size] or [1.0])
    inbound = draw.draw(st.lists(st.tuples(sizes, devices), max_size=4))
    outbound = draw.draw(st.lists(st.tuples(sizes, devices), max_size=4))
    assume(inbound or outbound)
    rows = [traffic.inbound(s, d) for s, d in inbound] + [traffic.outbound(s, d) for s, d in outbound]
    assert traffic.sums(inbound, outbound) == [math.fsum(column) for column in zip(*rows)]
