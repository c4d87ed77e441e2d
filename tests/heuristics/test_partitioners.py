"""Partitioners (Mayer et al. 2017): feasibility, determinism and their defining choices."""

import pytest
from hypothesis import HealthCheck, given, settings

from random_problems import problem_data
from schedkit import Problem, ProblemError
from schedkit.problem.mapping import check_mapping
from schedkit.generators import erdos_renyi, layered
from schedkit.heuristics.partitioners import (PARTITIONERS, batch_split, critical_path,
                                              critical_path_tasks, device_speeds, dfs,
                                              hash_partition, mite, ranks)

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
    up, down = ranks(p)
    top = max(range(len(p.tasks)), key=lambda i: up[i] + down[i])
    speeds = device_speeds(p)
    assert mapping[top] == max(range(len(p.devices)), key=lambda d: speeds[d])


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
