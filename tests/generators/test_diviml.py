"""DiviML's batched platform: relative speeds of Table II, documented batch times, the shipped
example from the command line, bad flags in one line."""

import json

import pytest

from schedkit import Problem
from schedkit.cli.main import main
from schedkit.generators.diviml import DIVIML_DEVICES, baselines, batch_time, diviml_workload
from schedkit.generators.rwnn import rwnn


def test_table_two_speeds_and_batch_times():
    data = diviml_workload(rwnn(modules=1, nodes=4, graph="er", seed=2), inputs=16)
    p = Problem.from_dict(data)
    assert [d["batch_sizes"] for d in data["devices"]] == [[4, 8, 12, 16]] * 3
    for task in data["tasks"]:
        one = task["durations"]["a100"][1]
        for name, slowness, share in DIVIML_DEVICES:
            assert task["durations"][name][1] == pytest.approx(one * slowness, rel=1e-5)
            assert task["durations"][name][16] == pytest.approx(batch_time(one * slowness, share, 16), rel=1e-5)
    base = baselines(p)
    a100 = [p.batches.time(i, 0, 1) for i in range(len(p.tasks))]
    assert base["one_by_one"] == pytest.approx(16 * sum(a100))
    assert base["whole_batch"] == pytest.approx(sum(p.batches.time(i, 0, 16) for i in range(len(p.tasks))))


def test_the_shipped_example_is_what_the_command_writes(tmp_path):
    out = tmp_path / "r.json"
    assert main(["generate", "rwnn", "--modules", "1", "--nodes", "8", "--graph", "er", "--edge-prob", "0.2",
                 "--inputs", "16", "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(open("examples/rwnn_diviml16.json").read())


@pytest.mark.parametrize("flags,message", [
    (["--inputs", "16", "--batch-sizes", "4,x"], "--batch-sizes: expected integers separated by commas, got '4,x'"),
    (["--batch-sizes", "4"], "--batch-sizes: needs --inputs (the batches split a workload of inputs)"),
    (["--inputs", "10", "--batch-sizes", "4,8"], "task 'm1_in1': its batch sizes (4, 8) cannot add up to the "
                                                "workload's 10 inputs"),
    (["--inputs", "4", "--batch-sizes", "0"], "batch_sizes: needs integers in 1..4, got [0]"),
])
def test_bad_flags_are_one_line(tmp_path, capfd, flags, message):
    out = tmp_path / "x.json"
    assert main(["generate", "rwnn", *flags, "-o", str(out)]) != 0
    assert capfd.readouterr().err.strip().splitlines() == [f"schedkit: error: {message}"] and not out.exists()


def test_platform_diviml_keeps_table_two_through_rwnn_platform(tmp_path):
    devices, out = tmp_path / "diviml.yaml", tmp_path / "r.json"
    assert main(["generate", "platform", "diviml", "-o", str(devices)]) == 0
    assert main(["generate", "rwnn", "--modules", "1", "--nodes", "4", "--platform", str(devices), "-o", str(out)]) == 0
    for task in json.loads(out.read_text())["tasks"]:
        t = task["durations"]
        assert t["t4"] / t["a100"] == pytest.approx(1.26, rel=1e-3) and t["cpu"] / t["a100"] == pytest.approx(7.10, rel=1e-3)


def test_platform_diviml_takes_no_device_counts(tmp_path, capfd):
    assert main(["generate", "platform", "diviml", "--gpus", "2", "-o", str(tmp_path / "d.yaml")]) != 0
    assert capfd.readouterr().err.strip() == "schedkit: error: --gpus does not apply to 'platform diviml'"


def test_divimls_module_parameters_are_flags(tmp_path):
    out = tmp_path / "ba.json"
    assert main(["generate", "rwnn", "--graph", "ba", "--attach", "5", "--modules", "2", "--nodes", "8",
                 "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == rwnn(modules=2, nodes=8, graph="ba", attach=5)
