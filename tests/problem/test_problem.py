"""schedkit.problem: derived data (communication times, heads, tails, order) and load errors."""

import math

import pytest

from helpers.bad_inputs import CASES
from schedkit import Problem, ProblemError


def chain_network(wide_bw=10.0, narrow_bw=1.0, direct=True):
    """Devices a - b - c (wide, latency 1 and 2) and a direct narrow link a - c (latency 0.5)."""
    links = [{"src": "a", "dst": "b", "bandwidth": wide_bw, "latency": 1.0},
             {"src": "b", "dst": "c", "bandwidth": wide_bw, "latency": 2.0}]
    if direct:
        links.append({"src": "a", "dst": "c", "bandwidth": narrow_bw, "latency": 0.5})
    return Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "links": links,
        "tasks": [{"name": "t", "work": 1}],
    })


def test_comm_time_direct_link():
    p = chain_network()
    # A direct link is used as is, even when a 2-hop path is wider.
    assert p.comm_time(10, 0, 2) == pytest.approx(10 / 1.0 + 0.5)
    assert p.comm_time(10, 0, 1) == pytest.approx(10 / 10 + 1.0)
    assert p.comm_time(10, 2, 1) == pytest.approx(10 / 10 + 2.0)  # bidirectional


def test_comm_time_widest_path_without_direct_link():
    p = chain_network(direct=False)
    # a -> c goes through b: bottleneck 10, latencies add up.
    assert p.linked[0][2] and p.linked[2][0]
    assert p.comm_time(20, 0, 2) == pytest.approx(20 / 10 + 1.0 + 2.0)


def test_widest_path_prefers_wider_two_hop_route():
    # a-b-c wide (10), a-d-c narrow (1) but with no latency: the widest path wins.
    p = Problem.from_dict({
        "devices": [{"name": n} for n in "abcd"],
        "links": [{"src": "a", "dst": "b", "bandwidth": 10, "latency": 1},
                  {"src": "b", "dst": "c", "bandwidth": 10, "latency": 1},
                  {"src": "a", "dst": "d", "bandwidth": 1},
                  {"src": "d", "dst": "c", "bandwidth": 1}],
        "tasks": [{"name": "t", "work": 1}],
    })
    a, c = p.device_index["a"], p.device_index["c"]
    assert p.inv_bandwidth[a][c] == pytest.approx(1 / 10)
    assert p.comm_time(100, a, c) == pytest.approx(100 / 10 + 2)


def test_widest_path_bottleneck_is_the_narrowest_hop():
    p = Problem.from_dict({
        "devices": [{"name": n} for n in "abc"],
        "links": [{"src": "a", "dst": "b", "bandwidth": 8},
                  {"src": "b", "dst": "c", "bandwidth": 2}],
        "tasks": [{"name": "t", "work": 1}],
    })
    assert p.comm_time(8, 0, 2) == pytest.approx(4.0)


def test_comm_time_zero_on_same_device_or_no_data_and_unlinked_raises():
    p = Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "links": [{"src": "a", "dst": "b", "bandwidth": 2, "bidirectional": False}],
        "tasks": [{"name": "t", "work": 1}],
    })
    assert p.comm_time(5, 1, 1) == 0.0
    assert p.comm_time(0, 0, 2) == 0.0
    assert p.comm_time(4, 0, 1) == pytest.approx(2.0)
    assert not p.linked[1][0]
    with pytest.raises(ProblemError, match="no link path from b to a"):
        p.comm_time(4, 1, 0)
    with pytest.raises(ProblemError, match="no link path from a to c"):
        p.comm_time(4, 0, 2)


def test_edge_between_unconnected_devices_is_an_error():
    with pytest.raises(ProblemError, match="edge s->t"):
        Problem.from_dict({
            "devices": [{"name": "a"}, {"name": "b"}],
            "tasks": [{"name": "s", "durations": {"a": 1}}, {"name": "t", "durations": {"b": 1}}],
            "edges": [{"src": "s", "dst": "t", "size": 1}],
        })


def fork_join():
    #    s -> l -> t
    #    s -> r -> t      plus an isolated task z
    return Problem.from_dict({
        "devices": [{"name": "fast"}, {"name": "slow"}],
        "links": [{"src": "fast", "dst": "slow", "bandwidth": 1}],
        "tasks": [{"name": "s", "durations": {"fast": 1, "slow": 2}},
                  {"name": "l", "durations": {"fast": 3, "slow": 5}},
                  {"name": "r", "durations": {"fast": 2, "slow": 4}},
                  {"name": "t", "durations": {"slow": 1}, "memory": 1},
                  {"name": "z", "durations": {"fast": 7}}],
        "edges": [{"src": "s", "dst": "l"}, {"src": "s", "dst": "r"},
                  {"src": "l", "dst": "t"}, {"src": "r", "dst": "t"}],
    })


def test_indexing_and_allowed():
    p = fork_join()
    assert p.tasks == ["s", "l", "r", "t", "z"]
    assert p.devices == ["fast", "slow"]
    assert p.allowed[3] == (1,) and p.allowed[4] == (0,) and p.allowed[0] == (0, 1)
    assert p.durations[1] == {0: 3.0, 1: 5.0}
    assert p.device_memory == [math.inf, math.inf]
    assert sorted(p.preds[3]) == [(1, 0.0), (2, 0.0)]


def test_heads_and_tails():
    p = fork_join()
    # min durations: s 1, l 3, r 2, t 1, z 7
    assert p.min_duration == [1, 3, 2, 1, 7]
    assert p.heads == [0, 1, 1, 4, 0]
    assert p.tails == [4, 1, 1, 0, 0]


def test_descendants_and_ordered():
    p = fork_join()
    s, l, r, t, z = range(5)
    assert p.descendants[s] == (1 << l) | (1 << r) | (1 << t)
    assert p.descendants[l] == 1 << t
    assert p.descendants[t] == 0
    assert p.ordered(s, t) and p.ordered(t, s)
    assert p.ordered(l, t)
    assert not p.ordered(l, r)
    assert not p.ordered(z, s)
    assert p.topological_order.index(s) < p.topological_order.index(l) < p.topological_order.index(t)


def test_pin_and_memory_restrict_allowed_devices():
    p = Problem.from_dict({
        "devices": [{"name": "gpu", "memory": 4}, {"name": "cpu"}, {"name": "tpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}, {"src": "cpu", "dst": "tpu", "bandwidth": 1}],
        "tasks": [{"name": "big", "work": 1, "memory": 5},
                  {"name": "pinned", "work": 1, "pin": ["tpu", "gpu"]}],
    })
    assert p.allowed == [(1, 2), (0, 2)]


def test_colocate_groups():
    p = Problem.from_dict({
        "devices": [{"name": "d"}],
        "tasks": [{"name": "a", "work": 1, "colocate": "g"}, {"name": "b", "work": 1},
                  {"name": "c", "work": 1, "colocate": "g"}],
    })
    assert p.colocate_groups == {"g": [0, 2]}


def test_load_from_examples_and_as_problem():
    from schedkit.problem import as_problem

    p = Problem.load("examples/tiny.yaml")
    assert p.device_memory == [16e9, 64e9]
    assert as_problem(p) is p
    assert as_problem("examples/tiny.yaml").tasks == p.tasks
    assert as_problem(p.spec).tasks == p.tasks
    assert "6 tasks" in repr(p)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_problem_load_rejects_bad_files(tmp_path, case):
    name, suffix, text, words = case
    path = tmp_path / f"{name}{suffix}"
    path.write_text(text)
    with pytest.raises(ProblemError) as info:
        Problem.load(path)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_fixed_memory_within_capacity_is_accepted():
    p = Problem.from_dict({
        "devices": [{"name": "gpu", "memory": 12}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
        "tasks": [{"name": "a", "durations": {"gpu": 1}, "memory": 6},
                  {"name": "b", "durations": {"gpu": 1}, "memory": 6}],
    })
    assert p.allowed == [(0,), (0,)]


def two_gpus(links, edge=None):
    return Problem.from_dict({
        "devices": [{"name": "g0"}, {"name": "g1"}, {"name": "cpu"}],
        "links": links,
        "tasks": [{"name": "a", "work": 1}, {"name": "b", "work": 1}],
        "edges": [edge or {"src": "a", "dst": "b", "size": 6}]})


def test_route_of_a_direct_link_widest_then_least_latency_then_first():
    p = two_gpus([{"src": "g0", "dst": "g1", "bandwidth": 2, "channel": "slow"},
                  {"src": "g0", "dst": "g1", "bandwidth": 3, "latency": 1, "channel": "nvlink"},
                  {"src": "g0", "dst": "g1", "bandwidth": 3, "latency": 0.5, "channel": "pcie"},
                  {"src": "g0", "dst": "g1", "bandwidth": 3, "latency": 0.5, "channel": "later"}])
    assert p.route[0][1] == ("pcie",) and p.route[1][0] == ("pcie",)  # both directions share it
    assert p.comm_time(6.0, 0, 1) == 6 / 3 + 0.5
    assert p.route[0][2] == () and p.route[0][0] == ()                 # no path; one device


def test_route_without_a_direct_link_is_the_widest_path_with_its_channels():
    p = two_gpus([{"src": "g0", "dst": "cpu", "bandwidth": 4, "latency": 1},
                  {"src": "cpu", "dst": "g1", "bandwidth": 8, "latency": 2, "bidirectional": False}])
    assert p.route[0][1] == ("g0->cpu", "cpu->g1")
    assert p.comm_time(6.0, 0, 1) == 6 / 4 + 3
    assert p.channels == ["g0->cpu", "cpu->g0", "cpu->g1"]
    assert not p.linked[1][0] and p.route[1][0] == ()


def test_named_channels_are_shared_between_links():
    p = two_gpus([{"src": "g0", "dst": "cpu", "bandwidth": 4, "channel": "pcie"},
                  {"src": "g1", "dst": "cpu", "bandwidth": 4, "channel": "pcie"}])
    assert p.channels == ["pcie"]
    assert p.route[0][2] == p.route[2][1] == ("pcie",)
    assert p.occupies(0, 2, "channel") == ("pcie",)
    assert p.occupies(0, 2, "port") == ("g0:send", "cpu:receive")
    assert p.route[0][1] == ("pcie", "pcie")                                # g0 -> cpu -> g1
    assert p.occupies(0, 1, "both") == ("pcie", "g0:send", "g1:receive")    # held once


def test_transfer_times_win_for_the_pairs_they_list():
    p = two_gpus([{"src": "g0", "dst": "g1", "bandwidth": 2}, {"src": "g1", "dst": "cpu", "bandwidth": 3}],
                 {"src": "a", "dst": "b", "size": 6, "transfer_times": {"g0->g1": 0.25, "g1->g0": 0}})
    size = p.edges[0][2]
    assert size == 6.0 and p.preds[1][0][1] is size
    assert p.comm_time(size, 0, 1) == 0.25                 # listed
    assert p.comm_time(size, 1, 2) == 6 / 3                # not listed: size / bandwidth
    assert p.moves(size, 0, 1) and not p.moves(size, 1, 0)  # a zero time is no transfer
    assert not p.moves(size, 0, 0)


def test_a_payload_pickles_with_its_times():
    import pickle

    p = two_gpus([{"src": "g0", "dst": "g1", "bandwidth": 2}],
                 {"src": "a", "dst": "b", "size": 6, "transfer_times": {"g0->g1": 0.25}})
    again = pickle.loads(pickle.dumps(p))
    assert again.comm_time(again.edges[0][2], 0, 1) == 0.25
