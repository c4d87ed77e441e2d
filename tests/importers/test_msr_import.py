"""The MSR importer on every shipped graph (HEFT schedules validate, transfer times are the
files' costs) and on small hand-made graphs (colour classes, CPU-only nodes, backward nodes,
inconsistent costs, bad files)."""

import glob
import json
from pathlib import Path

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.cli.main import main
from schedkit.importers import IMPORTERS, convert
from schedkit.importers.msr import Msr, parse_msr

DATA = Path(__file__).resolve().parents[2] / "data" / "msr-dnn"
FILES = sorted(glob.glob(str(DATA / "*" / "*.json")))


def toy(**extra):
    data = {"maxCPUs": 1, "maxFPGAs": 2, "maxSizePerFPGA": 100,
            "nodes": [{"id": 1, "name": "in", "cpuLatency": 0, "fpgaLatency": 0, "size": 0,
                       "supportedOnFpga": 1, "colorClass": 7},
                      {"id": 2, "name": "conv", "cpuLatency": 10, "fpgaLatency": 1, "size": 60,
                       "supportedOnFpga": 1, "colorClass": 7},
                      {"id": 3, "name": "argmax", "cpuLatency": 2, "fpgaLatency": 1, "size": 0,
                       "supportedOnFpga": 0, "colorClass": 8},
                      {"id": 4, "name": "conv_grad", "cpuLatency": 20, "fpgaLatency": 2, "size": 60,
                       "supportedOnFpga": 1, "colorClass": 9, "isBackwardNode": True}],
            "edges": [{"sourceId": 1, "destId": 2, "size": 40, "cost": 10},
                      {"sourceId": 2, "destId": 3, "size": 8, "cost": 2},
                      {"sourceId": 2, "destId": 4, "size": 4, "cost": 1}]}
    data.update(extra)
    return data


def test_registered():
    assert IMPORTERS.get("msr") is Msr


def test_shipped_files_are_there():
    names = {Path(f).relative_to(DATA).as_posix() for f in FILES}
    assert {"layer/bert24_inference.json", "layer/gnmt_inference.json", "layer/inceptionv3_inference.json",
            "layer/resnet50_inference.json", "operator/bert_l-3_inference.json",
            "operator/bert_l-6_inference.json", "operator/bert_l-12_inference.json",
            "operator/resnet50_inference.json"} <= names


@pytest.mark.parametrize("path", FILES, ids=[Path(f).relative_to(DATA).as_posix() for f in FILES])
def test_shipped_graph_converts_and_heft_validates(path):
    raw = json.loads(Path(path).read_text())
    data = convert("msr", path)
    problem = Problem.from_dict(data)
    assert len(problem.tasks) == len(raw["nodes"]) and len(problem.edges) == len(raw["edges"])
    assert len(problem.devices) == raw["maxCPUs"] + raw["maxFPGAs"]
    # Every transfer time is the file's cost, exactly (cpu0 -> acc0 and acc0 -> acc1).
    names = {n["id"]: str(n["name"]) for n in raw["nodes"]}
    for edge in raw["edges"][:50]:
        for u, v in ((0, raw["maxCPUs"]), (raw["maxCPUs"], raw["maxCPUs"] + 1)):
            assert problem.comm_time(edge["size"], u, v) == pytest.approx(edge["cost"], rel=1e-12)
        assert names[edge["sourceId"]] in problem.task_index
    schedule = solve(problem, "heft")
    assert schedule.violations(problem) == []
    assert schedule.makespan >= schedule.bound > 0


def test_toy_by_hand():
    data = parse_msr(toy(), name="toy")
    assert [d["name"] for d in data["devices"]] == ["cpu0", "acc0", "acc1"]
    assert data["devices"][1] == {"name": "acc0", "group": "accelerator", "memory": 100}
    assert data["devices"][0] == {"name": "cpu0", "group": "cpu"}
    tasks = {t["name"]: t for t in data["tasks"]}
    assert tasks["conv"] == {"name": "conv", "durations": {"cpu0": 10, "acc0": 1, "acc1": 1},
                             "memory": 60, "colocate": "color7"}
    assert tasks["in"]["colocate"] == "color7"           # a class of two: placed together
    assert "colocate" not in tasks["argmax"]              # a class of one constrains nothing
    assert tasks["argmax"]["durations"] == {"cpu0": 2}    # supportedOnFpga 0: CPUs only
    assert data["links"] == [{"src": a, "dst": b, "bandwidth": 4.0}
                             for a, b in (("cpu0", "acc0"), ("cpu0", "acc1"), ("acc0", "acc1"))]
    assert data["edges"][0] == {"src": "in", "dst": "conv", "size": 40}
    problem = Problem.from_dict(data)
    schedule = solve(problem, "heft")
    assert schedule.violations(problem) == []
    placement = schedule.placement()
    assert placement["in"] == placement["conv"] and placement["argmax"] == "cpu0"


def test_forward_only_and_device_counts():
    data = parse_msr(toy(), name="toy", forward_only=True, cpus=2, accelerators=1)
    assert [t["name"] for t in data["tasks"]] == ["in", "conv", "argmax"]
    assert len(data["edges"]) == 2
    assert [d["name"] for d in data["devices"]] == ["cpu0", "cpu1", "acc0"]


def test_inconsistent_costs_keep_transfer_times_exact():
    raw = toy()
    raw["edges"][1]["cost"] = 5  # size 8, cost 5: another bandwidth than 40 / 10
    data = parse_msr(raw, name="toy")
    assert {link["bandwidth"] for link in data["links"]} == {1.0}
    problem = Problem.from_dict(data)
    for edge in raw["edges"]:
        assert problem.comm_time([e["size"] for e in data["edges"]][raw["edges"].index(edge)], 0, 1) \
            == edge["cost"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d["nodes"][0].pop("cpuLatency"), "toy: node 1: missing 'cpuLatency'"),
    (lambda d: d["nodes"][1].update(fpgaLatency=-1), "toy: node 2 fpgaLatency: expected a finite number >= 0"),
    (lambda d: d["edges"].append({"sourceId": 1, "destId": 99}), "toy: edge #3: unknown node id 99"),
    (lambda d: d.update(maxCPUs="eight"), "toy: 'maxCPUs' must be an integer >= 0"),
    (lambda d: d.update(nodes={}), "toy: not an MSR graph"),
    # values of the wrong type: one line naming the node, not a TypeError
    (lambda d: d["nodes"][0].update(id=[1]), "toy: node #0: 'id' must be an integer or a string, got [1]"),
    (lambda d: d["nodes"][1].update(colorClass={"a": 1}), "toy: node #1: 'colorClass' must be an integer"),
    (lambda d: d["nodes"][1].update(colorClass=[7]), "toy: node #1: 'colorClass' must be an integer"),
    (lambda d: d["nodes"][2].update(name=["argmax"]), "toy: node #2: 'name' must be an integer or a string"),
    (lambda d: d["nodes"][2].update(supportedOnFpga="yes"), "toy: node #2: 'supportedOnFpga' must be 0 or 1"),
    (lambda d: d["edges"].append({"sourceId": [1], "destId": 2}), "toy: edge #3: unknown node id [1]"),
    # counts that would make billions of devices (and links between every two)
    (lambda d: d.update(maxFPGAs=10**12), "toy: 'maxFPGAs' 1000000000000: at most 1024 devices in all"),
    (lambda d: d.update(maxCPUs=2000), "toy: 'maxCPUs' 2000: at most 1024 devices in all"),
])
def test_bad_data_is_one_line(change, message):
    data = toy()
    change(data)
    with pytest.raises(SchedkitError) as info:
        parse_msr(data, name="toy")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_cli(tmp_path, capfd):
    src = tmp_path / "toy.json"
    src.write_text(json.dumps(toy()))
    out = tmp_path / "p.yaml"
    assert main(["convert", "msr", str(src), "--cpus", "2", "--forward-only", "-o", str(out)]) == 0
    assert capfd.readouterr().out.startswith(f"wrote {out}: 3 tasks on 4 devices")
    assert Problem.load(out).devices == ["cpu0", "cpu1", "acc0", "acc1"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["convert", "msr", str(bad), "-o", str(tmp_path / "q.json")]) == 1
    err = capfd.readouterr().err
    assert err.startswith("schedkit: error: ") and "malformed JSON" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "q.json").exists()
    assert main(["convert", "msr", str(src), "--platform", "x.yaml", "-o", str(tmp_path / "q.json")]) == 1
    assert "convert msr does not take --platform" in capfd.readouterr().err
