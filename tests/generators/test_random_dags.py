"""Random problem generators and the ``generate`` command."""

import argparse
import json

import pytest
import yaml

from schedkit import Problem, ProblemError
from schedkit.cli.generate import add_generate_command, run_generate
from schedkit.generators import dump, erdos_renyi, layered


def level_of(name, width):
    return int(name[1:]) // width


@pytest.mark.parametrize("levels,width,devices", [(1, 1, 1), (3, 4, 2), (6, 10, 5)])
def test_layered_sizes_and_structure(levels, width, devices):
    data = layered(levels, width, 0.3, 0.5, devices=devices, seed=4)
    p = Problem.from_dict(data)
    assert len(p.tasks) == levels * width
    assert len(p.devices) == devices
    assert len(data["links"]) == devices * (devices - 1) // 2
    assert all("work" in t for t in data["tasks"]) and all("speed" in d for d in data["devices"])
    indegree = {t["name"]: 0 for t in data["tasks"]}
    for e in data["edges"]:
        a, b = level_of(e["src"], width), level_of(e["dst"], width)
        assert b == a + 1 or b >= a + 2          # adjacent level, or a long-range edge
        assert e["size"] == data["tasks"][int(e["src"][1:])]["output_size"]
        indegree[e["dst"]] += 1
    # every task past the first level has an input from the level before
    for t in data["tasks"][width:]:
        assert indegree[t["name"]] >= 1


def test_layered_edge_counts_at_the_extremes():
    full = layered(3, 4, 1.0, 0.0, devices=2, seed=0)
    assert len(full["edges"]) == 2 * 4 * 4
    sparse = layered(3, 4, 0.0, 0.0, devices=2, seed=0)
    assert len(sparse["edges"]) == 2 * 4               # one forced input per task
    skip = layered(4, 3, 0.0, 1.0, devices=2, seed=0)
    assert len(skip["edges"]) == 3 * 3 + 2 * 3           # plus one long-range edge per task


def test_benchmark_scale_layered_graph():
    data = layered(40, 100, 0.1, 0.3, devices=50, seed=0)
    assert len(data["tasks"]) == 4000
    assert 38_000 <= len(data["edges"]) <= 42_000
    assert len(data["links"]) == 50 * 49 // 2


def test_erdos_renyi_sizes_and_durations():
    data = erdos_renyi(14, 0.3, devices=3, seed=7)
    p = Problem.from_dict(data)
    assert (len(p.tasks), len(p.devices)) == (14, 3)
    assert all(len(t["durations"]) == 3 for t in data["tasks"])
    assert all(int(e["src"][1:]) < int(e["dst"][1:]) for e in data["edges"])
    assert len(erdos_renyi(6, 1.0, devices=2, seed=0)["edges"]) == 15
    assert erdos_renyi(6, 0.0, devices=2, seed=0)["edges"] == []


def test_seeded_and_deterministic():
    assert layered(3, 3, 0.5, 0.2, devices=3, seed=9) == layered(3, 3, 0.5, 0.2, devices=3, seed=9)
    assert layered(3, 3, 0.5, 0.2, devices=3, seed=9) != layered(3, 3, 0.5, 0.2, devices=3, seed=8)
    assert erdos_renyi(8, 0.4, 2, seed=1) == erdos_renyi(8, 0.4, 2, seed=1)
    assert erdos_renyi(8, 0.4, 2, seed=1) != erdos_renyi(8, 0.4, 2, seed=2)


def test_memory_slack_gives_capacities():
    data = erdos_renyi(10, 0.3, devices=2, seed=0, memory_slack=1.5)
    total = sum(t["memory"] for t in data["tasks"])
    assert all(d["memory"] == pytest.approx(1.5 * total / 2, rel=1e-3) for d in data["devices"])
    Problem.from_dict(data)


@pytest.mark.parametrize("call", [
    lambda: layered(0, 3, 0.5, 0.1, devices=2),
    lambda: layered(3, 3, 1.5, 0.1, devices=2),
    lambda: layered(3, 3, 0.5, -0.1, devices=2),
    lambda: layered(3, 3, 0.5, 0.1, devices=0),
    lambda: layered(3, 3, 0.5, 0.1, devices=2, speed=(0.0, 1.0)),
    lambda: layered(3, 3, 0.5, 0.1, devices=8, group_size=4),               # servers need types
    lambda: layered(3, 3, 0.5, 0.1, devices=8, types=3, group_size=4),      # 2 servers, 3 types
    lambda: layered(3, 3, 0.5, 0.1, devices=8, types=2, group_size=3),      # 8 is no multiple of 3
    lambda: layered(3, 3, 0.5, 0.1, devices=2, types=3),
    lambda: layered(3, 3, 0.5, 0.1, devices=2, types=0),
    lambda: erdos_renyi(0, 0.5, devices=2),
    lambda: erdos_renyi(3, 0.5, devices=2, work=(5.0, 1.0)),
    lambda: erdos_renyi(3, 0.5, devices=2, memory_slack=0.0),
])
def test_bad_parameters(call):
    with pytest.raises(ProblemError):
        call()


def test_typed_cluster_is_small_and_means_its_expansion():
    from schedkit import solve
    from schedkit.problem.cluster import expanded

    data = layered(4, 5, 0.5, 0.2, devices=16, seed=3, types=2, group_size=4)
    assert len(data["links"]) == 4 + 6                  # one link inside each server, one per pair
    assert all(set(t["durations"]) == {"type0", "type1"} for t in data["tasks"])
    p = Problem.from_dict(data)
    assert [p.spec.devices[d].group for d in (0, 3, 4)] == ["g0", "g0", "g1"]
    flat = Problem.from_dict(expanded(data))
    assert p.durations == flat.durations and p.allowed == flat.allowed
    assert solve(p, "heft").makespan == solve(flat, "heft").makespan
    # the servers are interchangeable groups: the symmetry block accepts them
    sym = {"name": "s", "objective": "makespan",
           "blocks": ["assignment", "placement", {"precedence": {"communication": True}},
                      "no_overlap", {"symmetry": {"by": "tasks"}}]}
    assert solve(p, "heft", formulation=sym).tasks


def test_yaml_and_json_round_trip():
    data = layered(3, 3, 0.5, 0.3, devices=3, seed=2, memory_slack=2.0)
    assert yaml.safe_load(dump(data, "p.yaml")) == data
    assert json.loads(dump(data, "p.json")) == data
    with pytest.raises(ProblemError, match="unknown output format"):
        dump(data, "p.txt")


def parser():
    p = argparse.ArgumentParser(prog="schedkit")
    add_generate_command(p.add_subparsers(dest="command"))
    return p


def test_generate_command_writes_files(tmp_path, capsys):
    out = tmp_path / "layered.yaml"
    args = parser().parse_args(["generate", "layered", "--levels", "3", "--width", "4",
                                "--devices", "3", "--seed", "5", "-o", str(out)])
    assert args.handler(args) == 0
    p = Problem.load(out)
    assert len(p.tasks) == 12 and len(p.devices) == 3
    assert Problem.load(out).spec == Problem.from_dict(
        layered(3, 4, 0.3, 0.1, devices=3, seed=5)).spec
    out = tmp_path / "er.json"
    args = parser().parse_args(["generate", "er", "--tasks", "7", "--edge-prob", "0.5",
                                "--devices", "2", "-o", str(out)])
    assert run_generate(args) == 0
    assert len(Problem.load(out).tasks) == 7
    assert not list(tmp_path.glob(".*.tmp"))           # atomic write leaves no temporary file
    args = parser().parse_args(["generate", "er", "--tasks", "3"])
    assert run_generate(args) == 0
    assert len(json.loads(capsys.readouterr().out)["tasks"]) == 3


def test_generate_command_errors(tmp_path, capsys):
    args = parser().parse_args(["generate", "er", "--tasks", "0", "-o", str(tmp_path / "x.json")])
    assert run_generate(args) == 1
    assert "tasks: needs an integer >= 1" in capsys.readouterr().err
    args = parser().parse_args(["generate", "er", "-o", str(tmp_path / "x.txt")])
    assert run_generate(args) == 1
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(SystemExit):
        parser().parse_args(["generate"])           # a kind is required
