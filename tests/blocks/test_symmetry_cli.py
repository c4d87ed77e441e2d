"""The ``symmetry`` block and ``generate platform nodes`` from the command line: an RWNN on identical
servers end to end, and one-line errors for a problem the block cannot order."""

import json
from pathlib import Path

import pytest
import yaml

from schedkit import Problem, Schedule
from schedkit.blocks import Symmetry
from schedkit.blocks.interchangeable import device_groups
from schedkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")


def formulation_file(folder: Path, by: str | None) -> Path:
    blocks = ["assignment", "placement", "precedence", "no_overlap", "memory"]
    path = folder / f"sym_{by}.yaml"
    path.write_text(yaml.safe_dump({"name": f"sym_{by}", "blocks": blocks + ([{"symmetry": {"by": by}}] if by else [])}))
    return path


def one_line_error(capfd, code, out: Path) -> str:
    captured = capfd.readouterr()
    assert code != 0
    lines = captured.err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{captured.err}"
    assert lines[0].startswith("schedkit: error: ") and "Traceback" not in captured.err + captured.out
    assert not out.exists()
    return lines[0]


def test_an_rwnn_on_identical_servers_with_each_ordering(tmp_path, capsys):
    devices, net = tmp_path / "nodes.yaml", tmp_path / "rwnn.json"
    assert main(["generate", "platform", "nodes", "--nodes", "2", "--gpus", "2", "-o", str(devices)]) == 0
    assert main(["generate", "rwnn", "--modules", "1", "--nodes", "6", "--seed", "1", "--platform", str(devices),
                 "-o", str(net)]) == 0
    problem = Problem.load(net)
    assert problem.devices == ["n0_gpu0", "n0_gpu1", "n1_gpu0", "n1_gpu1", "switch"]   # (the switch runs no task)
    assert device_groups(problem) == {"n0": [0, 1], "n1": [2, 3]}
    makespans = {}
    for by in (None, "tasks", "batches", "busy_time"):
        out = tmp_path / f"s_{by}.json"
        assert main(["solve", str(net), "-f", str(formulation_file(tmp_path, by)), "--threads", "1",
                     "--solver", "highs", "-o", str(out)]) == 0
        schedule = Schedule.model_validate(json.loads(out.read_text()))
        assert schedule.status == "optimal"
        makespans[by] = schedule.makespan
        if by:
            measure = Symmetry(by=by).measures(problem, schedule)
            assert measure[0] >= measure[1] and measure[2] >= measure[3]
        assert main(["validate", str(net), str(out)]) == 0
    capsys.readouterr()
    assert len({round(m, 9) for m in makespans.values()}) == 1, makespans


def test_platform_without_a_kind_is_unchanged(tmp_path):
    out = tmp_path / "d.yaml"
    assert main(["generate", "platform", "--gpus", "2", "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert [d["name"] for d in data["devices"]] == ["cpu", "gpu0", "gpu1"]


def test_a_problem_without_a_group_is_one_line(tmp_path, capfd):
    out = tmp_path / "s.json"
    line = one_line_error(capfd, main(["solve", TINY, "-f", str(formulation_file(tmp_path, "tasks")),
                                       "-o", str(out)]), out)
    assert "block 'symmetry'" in line and "share a 'group'" in line


@pytest.mark.parametrize("method", ["milp", "heft"])
def test_group_members_that_differ_are_one_line(tmp_path, capfd, method):
    data = yaml.safe_load(Path(TINY).read_text())
    for device in data["devices"]:
        device["group"] = "all"   # a GPU and a CPU are no twins
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    out = tmp_path / "s.json"
    line = one_line_error(capfd, main(["solve", str(bad), "-m", method, "-f", str(formulation_file(tmp_path, "busy_time")),
                                       "-o", str(out)]), out)
    names = [d["name"] for d in data["devices"]]
    assert f"devices {names[0]} and {names[1]} are not interchangeable" in line
    # Without the block the same file solves.
    assert main(["solve", str(bad), "-m", "heft", "-o", str(out)]) == 0


@pytest.mark.parametrize("args, words", [
    (["generate", "platform", "nodes", "--cpus", "2"], "--cpus does not apply to 'platform nodes'"),
    (["generate", "platform", "--nodes", "2"], "--nodes does not apply to 'platform' without a kind"),
    (["generate", "platform", "nodes", "--gpus", "0"], "gpus: needs an integer >= 1"),
    (["generate", "platform", "nodes", "--gpu-model", "a100,t4"], "identical servers have one GPU model"),
    (["generate", "platform", "nodes", "--network-bandwidth", "0"], "network_bandwidth: needs a finite number > 0"),
])
def test_bad_platform_flags_are_one_line(tmp_path, capfd, args, words):
    out = tmp_path / "d.yaml"
    assert words in one_line_error(capfd, main([*args, "-o", str(out)]), out)


def test_rwnn_on_a_platform_in_seconds_is_refused(tmp_path, capfd):
    devices = tmp_path / "nodes.yaml"
    assert main(["generate", "platform", "nodes", "--time-unit", "s", "-o", str(devices)]) == 0
    out = tmp_path / "r.json"
    line = one_line_error(capfd, main(["generate", "rwnn", "--platform", str(devices), "-o", str(out)]), out)
    assert "an rwnn counts time in ms" in line


@pytest.mark.parametrize("change, words", [
    (lambda d: d["tasks"][0].update(pin=["gpu0"]), "its pin names devices of the problem"),
    (lambda d: d["tasks"][0].update(durations={"gpu0": {1: 1.0, 2: 1.5}}), "per-batch durations cannot be moved"),
    (lambda d: d["edges"][0].update(transfer_times={"gpu0->cpu": 1.0}), "its transfer_times name devices"),
])
def test_retarget_refuses_data_that_names_the_old_devices(change, words):
    from schedkit.errors import ProblemError
    from schedkit.generators import rwnn
    from schedkit.generators.platform import nodes
    from schedkit.importers.platform import parse_platform

    data = rwnn(modules=1, nodes=3)
    change(data)
    with pytest.raises(ProblemError, match=words):
        parse_platform(nodes(1, 2)).retarget(data)


def test_retarget_keeps_the_fastest_time_and_scales_by_peak_flops():
    from schedkit.generators import rwnn
    from schedkit.generators.platform import platform
    from schedkit.importers.platform import parse_platform

    data = rwnn(modules=1, nodes=3)
    moved = parse_platform(platform(cpus=1, gpus=2, gpu_model="a100,t4")).retarget(data)
    for old, new in zip(data["tasks"], moved["tasks"]):
        fastest = min(old["durations"].values())
        assert new["durations"]["gpu0"] == fastest                      # the A100: the fastest device
        assert new["durations"]["gpu1"] == pytest.approx(fastest * 19.5 / 8.1, rel=1e-5)   # a T4
    assert moved["edges"] == data["edges"] and Problem.from_dict(moved).devices == ["cpu", "gpu0", "gpu1"]
