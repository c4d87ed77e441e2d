"""Device types and group links (``schedkit.problem.cluster``): how they resolve, that a file
using them is the same problem as its expansion per device, and their bad inputs (issue 29)."""

import copy
import json
from pathlib import Path

import pytest

from schedkit import Problem, solve
from schedkit.cli.main import main
from schedkit.errors import ProblemError
from schedkit.generators.platform import nodes
from schedkit.importers.platform import parse_platform
from schedkit.problem.cluster import expanded


def cluster() -> dict:
    """A CPU and two servers of two A100s: types, group links inside and between the servers,
    a link from the CPU to a server (the other server is reached through it)."""
    gpus = [{"name": f"n{s}_g{k}", "type": "a100", "group": f"n{s}", "memory": 40} for s in range(2) for k in range(2)]
    return {
        "format": "schedkit/v1", "name": "cluster",
        "devices": [{"name": "cpu"}] + gpus,
        "links": [{"src": "n0", "dst": "n0", "bandwidth": 50, "latency": 0.1},
                  {"src": "n1", "dst": "n1", "bandwidth": 50, "latency": 0.1},
                  {"src": "n0", "dst": "n1", "bandwidth": 10, "latency": 0.5, "channel": "net"},
                  {"src": "cpu", "dst": "n0", "bandwidth": 5, "latency": 1}],
        "tasks": [{"name": "load", "durations": {"cpu": 1}, "output_size": 20},
                  {"name": "a", "durations": {"cpu": 8, "a100": 3}, "memory": 30},
                  {"name": "b", "durations": {"a100": 4, "n1_g1": 2}, "memory": 30},
                  {"name": "c", "durations": {"a100": 4}, "memory": 30},
                  {"name": "d", "durations": {"a100": 5, "cpu": 9}}],
        "edges": [{"src": "load", "dst": "a"}, {"src": "load", "dst": "b"}, {"src": "a", "dst": "c", "size": 40},
                  {"src": "b", "dst": "d", "size": 30}, {"src": "c", "dst": "d", "size": 30}],
    }


def names(problem: Problem, table: dict) -> dict:
    return {problem.devices[d]: value for d, value in table.items()}


# ----------------------------------------------------------------------------- types
def test_a_device_takes_its_own_entry_before_its_type():
    p = Problem.from_dict(cluster())
    b = p.task_index["b"]
    assert names(p, p.durations[b]) == {"n0_g0": 4, "n0_g1": 4, "n1_g0": 4, "n1_g1": 2}


def test_a_task_runs_only_where_its_keys_name_the_device_or_its_type():
    p = Problem.from_dict(cluster())
    assert [p.devices[d] for d in p.allowed[p.task_index["load"]]] == ["cpu"]
    assert [p.devices[d] for d in p.allowed[p.task_index["c"]]] == ["n0_g0", "n0_g1", "n1_g0", "n1_g1"]
    assert names(p, p.durations[p.task_index["d"]])["cpu"] == 9


def test_pins_and_work_are_unchanged_by_types():
    data = cluster()
    data["tasks"][2]["pin"] = ["n0_g1", "n1_g1"]
    data["tasks"][0] = {"name": "load", "work": 2}
    p = Problem.from_dict(data)
    assert names(p, p.durations[p.task_index["b"]]) == {"n0_g1": 4, "n1_g1": 2}
    assert len(p.allowed[p.task_index["load"]]) == 5


def test_a_per_batch_map_by_type_times_every_batch_size_of_its_devices():
    data = cluster()
    data["devices"][3]["batch_sizes"] = [1, 4]
    data["tasks"][3]["durations"] = {"a100": {1: 4, 2: 7}}
    with pytest.raises(ProblemError, match=r"task 'c': its durations on 'a100' \(device n1_g0\) give no time "
                                           r"for batch size 4"):
        Problem.from_dict(data)


# ----------------------------------------------------------------------------- group links
def test_a_group_linked_to_itself_joins_every_two_distinct_devices():
    p = Problem.from_dict(cluster())
    i = p.device_index
    assert p.route[i["n0_g0"]][i["n0_g1"]] == ("n0_g0->n0_g1",)
    assert p.route[i["n0_g1"]][i["n0_g0"]] == ("n0_g1->n0_g0",)
    assert 1 / p.inv_bandwidth[i["n1_g1"]][i["n1_g0"]] == 50 and p.latency[i["n1_g1"]][i["n1_g0"]] == 0.1


def test_a_link_between_groups_joins_each_device_of_one_to_each_of_the_other_on_its_one_channel():
    p = Problem.from_dict(cluster())
    i = p.device_index
    for a in ("n0_g0", "n0_g1"):
        for b in ("n1_g0", "n1_g1"):
            assert p.route[i[a]][i[b]] == p.route[i[b]][i[a]] == ("net",)
            assert p.latency[i[a]][i[b]] == 0.5
    # The CPU is linked to server n0 only: n1 through the first n0 GPU of the widest path.
    assert p.route[i["cpu"]][i["n0_g1"]] == ("cpu->n0_g1",)
    assert p.route[i["cpu"]][i["n1_g0"]] == ("cpu->n0_g0", "net")
    assert p.channels[:2] == ["n0_g0->n0_g1", "n0_g1->n0_g0"] and "net" in p.channels


def test_a_device_pair_link_wins_its_direction_over_group_links():
    data = cluster()
    data["links"].append({"src": "n0_g1", "dst": "n0_g0", "bandwidth": 1, "bidirectional": False})
    p = Problem.from_dict(data)
    i = p.device_index
    assert p.route[i["n0_g1"]][i["n0_g0"]] == ("n0_g1->n0_g0",) and p.inv_bandwidth[i["n0_g1"]][i["n0_g0"]] == 1.0
    assert p.inv_bandwidth[i["n0_g0"]][i["n0_g1"]] == 1 / 50          # the other direction: the group link


def test_among_group_links_the_widest_then_the_least_latency_then_the_first():
    data = cluster()
    data["links"] += [{"src": "n0", "dst": "n1", "bandwidth": 10, "latency": 0.2, "channel": "fast"},
                      {"src": "n0", "dst": "n1", "bandwidth": 10, "latency": 0.2, "channel": "late"},
                      {"src": "n1_g0", "dst": "n0", "bandwidth": 8, "latency": 0, "channel": "narrow"}]
    p = Problem.from_dict(data)
    i = p.device_index
    assert p.route[i["n1_g0"]][i["n0_g0"]] == ("fast",) and p.latency[i["n1_g0"]][i["n0_g0"]] == 0.2


def test_the_network_makes_no_graph_when_every_pair_is_linked_directly():
    data = parse_platform(nodes(nodes=3, gpus=2, network="pairs")).retarget({"tasks": [{"name": "t", "work": 1}]})
    p = Problem.from_dict(data)
    assert "graph" not in p._network.__dict__
    assert p.network.number_of_edges() == 6 * 5                       # built when asked


# ----------------------------------------------------------------------------- one problem
TABLES = ("devices", "durations", "allowed", "inv_bandwidth", "latency", "linked", "route", "channels")


def test_a_typed_grouped_file_and_its_expansion_are_one_problem():
    data = cluster()
    flat = expanded(data)
    assert all("a100" not in t["durations"] for t in flat["tasks"])
    assert all(link["src"] not in ("n0", "n1") for link in flat["links"])
    a, b = Problem.from_dict(data), Problem.from_dict(flat)
    for table in TABLES:
        assert getattr(a, table) == getattr(b, table), table


@pytest.mark.parametrize("formulation", ["latency", "moirai"])
def test_a_typed_grouped_file_and_its_expansion_export_one_model(tmp_path, formulation):
    texts = []
    for k, data in enumerate((cluster(), expanded(cluster()))):
        path = tmp_path / f"p{k}.json"
        path.write_text(json.dumps(data))
        assert main(["export", str(path), "-f", formulation, "-o", str(tmp_path / f"m{k}.lp")]) == 0
        texts.append((tmp_path / f"m{k}.lp").read_text())
    assert texts[0] == texts[1]


@pytest.mark.parametrize("method, options", [
    ("heft", {}), ("annealing", {"seed": 1}),
    ("milp", {"formulation": "moirai", "time_limit": 60}),
    ("milp", {"formulation": "moirai", "solver": "cpsat", "time_limit": 60}),
], ids=["heft", "annealing", "milp", "cpsat"])
def test_a_typed_grouped_file_and_its_expansion_solve_to_one_makespan(method, options):
    if options.get("solver") == "cpsat":
        pytest.importorskip("ortools")
    a = solve(cluster(), method=method, **options)
    b = solve(expanded(cluster()), method=method, **options)
    assert a.makespan == pytest.approx(b.makespan, rel=1e-9)
    if method == "milp":
        assert a.status == b.status == "optimal" and a.makespan == pytest.approx(22.0)


def _per_gpu_links(data: dict, bandwidth: float, latency: float, network: tuple) -> list:
    """The links ``generate platform nodes`` wrote before group links: one per pair of GPUs."""
    servers: dict[str, list[str]] = {}
    for d in data["devices"]:
        servers.setdefault(d["group"], []).append(d["name"])
    rows, order = [], list(servers.values())
    for k, server in enumerate(order):
        for j, a in enumerate(server):
            rows += [{"src": a, "dst": b, "bandwidth": bandwidth, "latency": latency} for b in server[j + 1:]]
            rows += [{"src": a, "dst": b, "bandwidth": network[0], "latency": network[1], "channel": f"n{k}-n{m}"}
                     for m in range(k + 1, len(order)) for b in order[m]]
    return rows


def test_platform_nodes_with_group_links_solves_as_its_links_per_gpu_did():
    from schedkit.generators import rwnn

    platform = parse_platform(nodes(nodes=2, gpus=2, network="pairs"))
    data = platform.retarget(rwnn(modules=1, nodes=6, seed=3))
    assert {d["type"] for d in data["devices"]} == {"gpu"}
    assert all(list(t["durations"]) == ["gpu"] for t in data["tasks"])
    old = copy.deepcopy(expanded(data))
    old["links"] = [{**row, "bandwidth": row["bandwidth"], "latency": row["latency"]} for row in
                    _per_gpu_links(data, *[data["links"][0][k] for k in ("bandwidth", "latency")],
                                   (data["links"][1]["bandwidth"], data["links"][1]["latency"]))]
    a, b = Problem.from_dict(data), Problem.from_dict(old)
    for table in ("durations", "inv_bandwidth", "latency", "linked", "route"):
        assert getattr(a, table) == getattr(b, table), table
    assert sorted(a.channels) == sorted(b.channels)
    for method, options in (("heft", {}), ("milp", {"formulation": "moirai", "time_limit": 60})):
        assert solve(a, method=method, **options).makespan == \
            pytest.approx(solve(b, method=method, **options).makespan, rel=1e-9), method


def test_convert_onnx_keys_durations_by_type_when_the_platform_states_types(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["h"], name="relu"),
                               helper.make_node("Sigmoid", ["h"], ["y"], name="gate")], "mlp", [x], [y])
    model = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(graph), model)
    typed = nodes(nodes=2, gpus=2, network="pairs")
    untyped = copy.deepcopy(typed)
    for d in untyped["devices"]:
        del d["type"]
    untyped["links"] = expanded({**untyped, "tasks": []})["links"]
    problems = []
    for k, platform in enumerate((typed, untyped)):
        (tmp_path / f"p{k}.json").write_text(json.dumps(platform))
        assert main(["convert", "onnx", str(model), "--platform", str(tmp_path / f"p{k}.json"),
                     "-o", str(tmp_path / f"q{k}.json")]) == 0
        problems.append(json.loads((tmp_path / f"q{k}.json").read_text()))
    assert [list(t["durations"]) for t in problems[0]["tasks"]] == [["gpu"], ["gpu"]]
    assert len(problems[1]["tasks"][0]["durations"]) == 4
    a, b = Problem.from_dict(problems[0]), Problem.from_dict(problems[1])
    for table in ("durations", "inv_bandwidth", "latency", "linked", "route"):
        assert getattr(a, table) == getattr(b, table), table


def test_a_type_shared_by_devices_of_different_times_keeps_their_own_entries():
    platform = parse_platform({"devices": [
        {"name": "g0", "type": "gpu", "peak_flops": 2e13, "memory_bandwidth": 1e12},
        {"name": "g1", "type": "gpu", "peak_flops": 1e13, "memory_bandwidth": 1e12},
        {"name": "cpu", "type": "cpu", "peak_flops": 1e12, "memory_bandwidth": 1e11}]})
    moved = platform.retarget({"tasks": [{"name": "t", "work": 2.0}]})
    assert moved["tasks"][0]["durations"] == {"g0": 2.0, "g1": 4.0, "cpu": 40.0}
    assert [d.get("type") for d in moved["devices"]] == ["gpu", "gpu", None]    # 'cpu' is a device's name


# ----------------------------------------------------------------------------- bad input
def _with(change) -> str:
    data = cluster()
    change(data)
    return json.dumps(data)


BAD = [
    ("type_spelled_like_a_device", lambda d: d["devices"][1].update(type="cpu"),
     ["device 'n0_g0'", "type 'cpu' is spelled like a device name"]),
    ("type_and_device_keyed_alike", lambda d: (d["devices"].append({"name": "a100"}),
                                               d["tasks"][1]["durations"].update(a100=1)),
     ["type 'a100' is spelled like a device name"]),
    ("group_spelled_like_a_device", lambda d: d["devices"][0].update(group="n0_g1"),
     ["device 'cpu'", "group 'n0_g1' is spelled like a device name"]),
    ("group_spelled_like_a_type", lambda d: d["devices"][0].update(group="a100"),
     ["group 'a100' is spelled like a device type"]),
    ("link_to_an_unknown_group", lambda d: d["links"].append({"src": "n0", "dst": "n9", "bandwidth": 1}),
     ["link n0->n9", "unknown device or group 'n9'"]),
    ("duration_of_an_unknown_type", lambda d: d["tasks"][3]["durations"].update(h100=1),
     ["task 'c'", "unknown device or type 'h100'"]),
    ("a_task_that_can_run_nowhere", lambda d: d["tasks"][3].update(pin=["cpu"]),
     ["task 'c'", "no device can run it"]),
    ("a_task_keyed_by_a_type_only_its_pin_excludes", lambda d: (d["devices"].append({"name": "tpu0", "type": "tpu"}),
                                                                d["tasks"][3].update(durations={"tpu": 1.0},
                                                                                     pin=["cpu"])),
     ["task 'c'", "no device can run it"]),
    ("a_task_whose_type_has_no_room_for_it", lambda d: d["tasks"][3].update(memory=50),
     ["task 'c'", "its memory 50 fits no device it may run on"]),
]


def _one_line(capfd, code: int) -> str:
    captured = capfd.readouterr()
    assert code != 0
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedkit: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


@pytest.mark.parametrize("change, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_types_and_groups_are_one_line(tmp_path, capfd, change, words):
    path = tmp_path / "bad.json"
    path.write_text(_with(change))
    out = tmp_path / "out.json"
    line = _one_line(capfd, main(["solve", str(path), "-m", "heft", "-o", str(out)]))
    assert all(word in line for word in words), line
    assert not out.exists()


@pytest.mark.parametrize("platform, words", [
    ({"devices": [{"name": "g", "group": "s", "peak_flops": 1, "memory_bandwidth": 1}],
      "links": [{"src": "s", "dst": "t", "bandwidth": 1}]}, ["link s->t", "unknown device or group 't'"]),
    ({"devices": [{"name": "g", "group": "g", "peak_flops": 1, "memory_bandwidth": 1}]},
     ["group 'g' is spelled like a device name"]),
], ids=["link_to_an_unknown_group", "group_spelled_like_a_device"])
def test_bad_groups_in_a_platform_are_one_line(tmp_path, capfd, platform, words):
    path = tmp_path / "platform.json"
    path.write_text(json.dumps(platform))
    line = _one_line(capfd, main(["convert", "onnx", "model.onnx", "--platform", str(path), "-o",
                                  str(tmp_path / "out.json")]))
    assert all(word in line for word in words), line


@pytest.mark.parametrize("args, words", [
    (["nodes", "--nodes", "100000", "--gpus", "1000"], ["--nodes 100,000 --gpus 1,000", "GB of memory"]),
    (["--gpus", "10000000"], ["--cpus 1 --gpus 10,000,000", "GB of memory"]),
], ids=["nodes", "gpus"])
def test_platform_sizes_beyond_memory_are_refused_before_allocation(tmp_path, capfd, args, words):
    out = tmp_path / "p.yaml"
    line = _one_line(capfd, main(["generate", "platform", *args, "-o", str(out)]))
    assert all(word in line for word in words), line
    assert not out.exists()


def test_a_cluster_too_large_to_route_is_refused_before_its_tables(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr("schedkit.machine.available_memory", lambda: 10**8)
    data = {"devices": [{"name": f"g{k}", "group": "all"} for k in range(2000)],
            "links": [{"src": "all", "dst": "all", "bandwidth": 1}], "tasks": [{"name": "t", "work": 1}]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    line = _one_line(capfd, main(["solve", str(path), "-m", "heft", "-o", str(tmp_path / "out.json")]))
    assert "devices: 2,000 devices are 4,000,000 ordered pairs to route" in line


def test_the_cluster_of_the_user_docs_is_what_it_says():
    import yaml

    text = (Path(__file__).resolve().parents[2] / "docs" / "howto.rst").read_text()
    section = text.split("Describe a large cluster (device types and group links)", 1)[1]
    block = section.split(".. code-block:: yaml\n\n", 1)[1].split("\n\n", 1)[0]
    p = Problem.from_dict(yaml.safe_load("\n".join(line[3:] for line in block.splitlines())))
    i = p.device_index
    assert p.route[i["cpu"]][i["n1_gpu0"]] == ("cpu->n0_gpu0", "n0-n1")
    assert p.durations[p.task_index["attn"]][i["n1_gpu3"]] == 0.9
    assert p.durations[p.task_index["attn"]][i["n1_gpu2"]] == 1.2
