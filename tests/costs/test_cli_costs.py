"""profile, costs import, calibrate and convert onnx --costs on the command line, and their bad inputs."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("scipy")

from onnx import TensorProto, helper  # noqa: E402

from schedkit.cli.main import main  # noqa: E402
from schedkit.costs import read_cost_table  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
PLATFORM = """# two CPU workers and a GPU
format: schedkit-platform/v1
name: box
time_unit: ms
devices:
  - {name: cpu0, peak_flops: 1.5e12, memory_bandwidth: 1.0e11, launch_overhead: 2.0e-6}
  - {name: cpu1, peak_flops: 1.5e12, memory_bandwidth: 1.0e11, launch_overhead: 2.0e-6}
  - {name: gpu0, peak_flops: 2.0e13, memory_bandwidth: 1.5e12, launch_overhead: 8.0e-6}
links:
  - {src: cpu0, dst: cpu1, bandwidth: 1.0e10}
  - {src: cpu0, dst: gpu0, bandwidth: 1.6e10}
"""


def chain(names=("a", "b", "c"), ops=("Relu", "Sigmoid", "Tanh")):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])
    tensors = ["x"] + [f"t{k}" for k in range(len(names) - 1)] + ["y"]
    nodes = [helper.make_node(op, [tensors[k]], [tensors[k + 1]], name=name)
             for k, (name, op) in enumerate(zip(names, ops))]
    graph = helper.make_graph(nodes, "chain", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("costs")
    model = folder / "chain.onnx"
    onnx.save(chain(), model)
    platform = folder / "box.yaml"
    platform.write_text(PLATFORM)
    table = folder / "chain.json"
    assert main(["profile", str(model), "--runs", "3", "--warmup", "1", "--threads", "1", "-q",
                 "-o", str(table)]) == 0
    return folder, model, platform, table


def run(args, capsys):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(status, err, *words):
    assert status == 1 and err.count("\n") == 1 and err.startswith("schedkit: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


def test_profile_writes_a_table_and_says_so(setup, capsys, tmp_path):
    folder, model, _, _ = setup
    out = tmp_path / "t.json"
    status, stdout, stderr = run(["profile", model, "--runs", "2", "--warmup", "0", "--threads", "1",
                                  "-o", out], capsys)
    assert status == 0 and stderr == ""       # not a terminal: no progress line
    assert stdout.startswith(f"wrote {out}: 3 nodes of chain, 2 runs on cpu (CPUExecutionProvider, 1 thread")
    table = read_cost_table(out)
    assert [n.name for n in table.nodes] == ["a", "b", "c"] and table.runs == 2


def test_convert_with_costs_uses_measured_times_on_that_type(setup, capsys, tmp_path):
    folder, model, platform, table = setup
    out = tmp_path / "p.json"
    status, stdout, _ = run(["convert", "onnx", model, "--platform", platform, "--costs", table, "-o", out],
                            capsys)
    assert status == 0 and "(measured durations: 3 on cpu0, 3 on cpu1)" in stdout
    data = json.loads(out.read_text())
    measured = read_cost_table(table)
    share = measured.overhead() * 1e3 / len(measured.ran())     # ms per node that ran
    medians = {n.name: n.median for n in measured.nodes}
    assert data["measured"] == {"cpu0": 3, "cpu1": 3} and data["time_unit"] == "ms"
    assert data["measured_overhead"] == pytest.approx({"cpu0": share, "cpu1": share}, rel=1e-5)
    for task in data["tasks"]:
        assert task["durations"]["cpu0"] == task["durations"]["cpu1"] == \
            pytest.approx(medians[task["name"]] + share, rel=1e-5)
        assert task["durations"]["gpu0"] < 0.01          # the roofline, not a measurement
    # On one device the durations add up to the table's latency: nodes and time outside them.
    assert sum(t["durations"]["cpu0"] for t in data["tasks"]) == pytest.approx(measured.latency() * 1e3,
                                                                               rel=1e-4)
    status, _, _ = run(["convert", "onnx", model, "--platform", platform, "--costs", f"{table}:cpu1",
                        "-o", out], capsys)
    data = json.loads(out.read_text())
    assert status == 0 and data["measured"] == {"cpu1": 3}
    status, _, _ = run(["convert", "onnx", model, "--platform", platform, "--costs", f"{table}:gpu",
                        "-o", out], capsys)
    assert status == 0 and json.loads(out.read_text())["measured"] == {"gpu0": 3}


def test_calibrate_changes_one_device_and_prints_the_errors(setup, capsys, tmp_path):
    folder, model, platform, table = setup
    out = tmp_path / "cal.yaml"
    status, stdout, _ = run(["calibrate", "--costs", table, "--platform", platform, "--device", "cpu1",
                             "-o", out], capsys)
    assert status == 0
    assert "calibrated cpu1 on chain (3 measured nodes):" in stdout
    assert "|log(predicted/measured)| per node: median" in stdout and "whole model: predicted" in stdout
    status, stdout, _ = run(["calibrate", "--costs", table, "--costs", table, "--platform", platform,
                             "--device", "cpu1", "-o", out], capsys)
    assert status == 0 and "calibrated cpu1 on chain, chain (6 measured nodes):" in stdout
    assert stdout.count("  chain: whole model: predicted") == 2
    text = out.read_text()
    assert text.startswith("# two CPU workers and a GPU\n# cpu1 calibrated by 'schedkit calibrate'")
    before, after = yaml.safe_load(PLATFORM), yaml.safe_load(text)
    assert after["devices"][0] == before["devices"][0] and after["devices"][2] == before["devices"][2]
    assert after["links"] == before["links"] and after["devices"][1] != before["devices"][1]
    # The same fit written as JSON (three nodes underdetermine three parameters: compare the
    # same one-table fit, not the two-table one, whose optimiser may stop elsewhere on the valley).
    json_out, yaml_out = tmp_path / "cal.json", tmp_path / "one.yaml"
    for path in (json_out, yaml_out):
        assert main(["calibrate", "--costs", str(table), "--platform", str(platform), "--device", "cpu1",
                     "-o", str(path)]) == 0
    assert json.loads(json_out.read_text())["devices"][1] == yaml.safe_load(yaml_out.read_text())["devices"][1]


def ort_profile(model, folder, runs=3):
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(folder / "ort")
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    for _ in range(runs):
        session.run(None, {"x": np.ones((1, 4096), np.float32)})
    return Path(session.end_profiling())


def test_costs_import_reads_onnxruntimes_profile(setup, capsys, tmp_path):
    folder, model, _, _ = setup
    profile = ort_profile(model, tmp_path)
    out = tmp_path / "t.json"
    status, stdout, _ = run(["costs", "import", profile, "--model", model, "--warmup", "1", "-o", out], capsys)
    assert status == 0 and stdout.startswith(f"wrote {out}: 3 nodes of chain, 2 run(s) on cpu")
    table = read_cost_table(out)
    assert [n.name for n in table.nodes] == ["a", "b", "c"] and table.nodes[0].bytes == 2 * 4096 * 4
    assert table.model.sha256 and table.total is None
    status, _, _ = run(["costs", "import", profile, "--device-type", "npu", "-o", out], capsys)
    assert status == 0 and read_cost_table(out).device.type == "npu"


def test_bad_inputs_are_one_line_and_write_nothing(setup, capsys, tmp_path):
    folder, model, platform, table = setup
    out = tmp_path / "out.json"
    other = tmp_path / "other.onnx"
    onnx.save(chain(names=("a", "b", "c"), ops=("Tanh", "Relu", "Sigmoid")), other)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps([{"cat": "Session", "name": "model_run", "ts": 0, "dur": 5}]))
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    cases = [
        (["profile", model, "--runs", "0", "-o", out], ["--runs 0"]),
        (["profile", garbage, "-o", out], ["garbage.onnx", "not an ONNX model"]),
        (["profile", tmp_path / "missing.onnx", "-o", out], ["missing.onnx: no such file"]),
        (["calibrate", "--costs", table, "--platform", platform, "--device", "tpu", "-o", tmp_path / "c.yaml"],
         ["--device 'tpu'", "devices: cpu0, cpu1, gpu0"]),
        (["convert", "onnx", other, "--platform", platform, "--costs", table, "-o", out],
         ["3 of its 3 nodes do not match model 'other'", "'a' (a Relu in the table, a Tanh in the model)",
          "measured on model 'chain'"]),
        (["convert", "onnx", model, "--platform", platform, "--costs", f"{table}:tpu", "-o", out],
         ["no device or device type 'tpu' on platform 'box'"]),
        (["costs", "import", empty, "-o", out], ["empty.json: no node kernel events"]),
        (["costs", "import", tmp_path / "missing.json", "-o", out], ["missing.json: no such file"]),
        (["costs", "import", table, "-o", out], ["not a profile schedkit can import"]),
        (["calibrate", "--costs", table, "--platform", platform, "--device", "cpu0", "-o", table],
         ["the output would overwrite an input file"]),
        (["calibrate", "--costs", tmp_path / "none.json", "--platform", platform, "--device", "cpu0",
          "-o", tmp_path / "c.yaml"], ["none.json: no such file"]),
    ]
    for args, words in cases:
        status, _, err = run(args, capsys)
        one_line_error(status, err, *words)
        assert not out.exists() and not (tmp_path / "c.yaml").exists(), args


def test_the_time_unit_travels_from_convert_to_summaries(setup, capsys, tmp_path):
    folder, model, platform, table = setup
    problem = tmp_path / "p.json"
    assert main(["convert", "onnx", str(model), "--platform", str(platform), "-o", str(problem)]) == 0
    assert json.loads(problem.read_text())["time_unit"] == "ms"
    assert "measured" not in json.loads(problem.read_text())
    capsys.readouterr()
    schedule = tmp_path / "s.json"
    status, out, _ = run(["solve", problem, "-m", "heft", "-o", schedule], capsys)
    assert status == 0 and "ms bound=" in out and "makespan=" in out
    status, out, _ = run(["validate", problem, schedule], capsys)
    assert status == 0 and "ms bound=" in out
    status, out, _ = run(["solve", "examples/tiny.yaml", "-m", "heft"], capsys)   # unit-free: unchanged
    assert status == 0 and "makespan=4.51625 bound=" in out
