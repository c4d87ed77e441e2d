"""``schedkit execute`` on the command line: the report, and one-line errors for bad input."""

import json
import sys

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from helpers.execute_models import TASKS, TWO_WORKERS, schedule, tiny_model  # noqa: E402

from schedkit.cli.main import main  # noqa: E402


@pytest.fixture
def files(tmp_path):
    """The tiny model, a two-worker schedule of it, and its problem (durations in us)."""
    model = tmp_path / "tiny.onnx"
    tiny_model(model)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(schedule(TWO_WORKERS)))
    problem = tmp_path / "tiny.json"
    problem.write_text(json.dumps({
        "format": "schedkit/v1", "name": "tiny", "time_unit": "us",
        "devices": [{"name": "cpu0"}, {"name": "cpu1"}, {"name": "gpu0"}],
        "links": [{"src": "cpu0", "dst": "cpu1", "bandwidth": 1e9}, {"src": "cpu0", "dst": "gpu0", "bandwidth": 1e9}],
        "tasks": [{"name": t, "durations": {"cpu0": 1, "cpu1": 1, "gpu0": 1}} for t in TASKS],
        "edges": [{"src": s, "dst": d, "size": 0} for s, d in  # (no transfer rows needed)
                  [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]]}))
    return tmp_path, str(model), str(plan), str(problem)


def test_the_report_puts_measured_times_beside_the_predicted_ones(files, capsys):
    _, model, plan, problem = files
    assert main(["execute", model, plan, "--problem", problem, "--runs", "2", "--warmup", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("tiny on 2 CPU worker(s) (cpu0: 1 thread, 3 segments; cpu1: 1 thread, 1 segment)")
    assert lines[1].startswith("latency: measured ") and "predicted makespan 4 us: measured/predicted " in lines[1]
    assert "cpu0 busy: measured " in lines[2] and "predicted 4 us" in lines[2]
    assert lines[4].startswith("single session (") and "4 tensor(s) (outputs and handed tensors) equal" in lines[4]


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def _case(name, tmp_path, model, plan, problem):
    """The command line of one bad-input case, and words its one-line error must contain."""
    other = [("zz" if t == "e" else t, d, s, e) for t, d, s, e in TWO_WORKERS]
    gpu = [(t, "gpu0" if d == "cpu1" else d, s, e) for t, d, s, e in TWO_WORKERS]
    early = [(t, d, 0.5 if t == "d" else s, e) for t, d, s, e in TWO_WORKERS]
    return {
        "another_model": (["execute", model, _write(tmp_path, "o.json", schedule(other))],
                          ["1 task(s) of the schedule are not operators of the model: zz",
                           "1 operator(s) of the model are missing from the schedule: e"]),
        "another_problem": (["execute", model, _write(tmp_path, "p.json", schedule(TWO_WORKERS, "resnet")),
                             "--problem", problem], ["a schedule of problem 'resnet', not of 'tiny'"]),
        "not_a_cpu": (["execute", model, _write(tmp_path, "g.json", schedule(gpu))],
                      ["device gpu0 is not a CPU", "--map gpu0=cpu"]),
        "map_unknown_device": (["execute", model, plan, "--map", "tpu0=cpu"],
                               ["--map tpu0=cpu: the schedule has no device 'tpu0' (its devices: cpu0, cpu1)"]),
        "map_to_no_cpu": (["execute", model, plan, "--map", "cpu1=gpu"], ["--map cpu1=gpu: only CPU workers"]),
        "runs_0": (["execute", model, plan, "--runs", "0"], ["--runs 0: give a whole number of runs >= 1"]),
        "warmup_negative": (["execute", model, plan, "--warmup", "-1"], ["--warmup -1"]),
        "input_not_ready": (["execute", model, _write(tmp_path, "e.json", schedule(early))],
                            ["task 'd' starts at 0.5, before its input from 'b' ends at 2"]),
        "invalid_for_problem": (["execute", model, _write(tmp_path, "i.json", schedule(
            [("a", "cpu0", 0, 0.5)] + TWO_WORKERS[1:])), "--problem", problem], ["is invalid", "'a'"]),
        "no_model": (["execute", str(tmp_path / "none.onnx"), plan], ["none.onnx: no such file"]),
        "not_onnx": (["execute", plan, plan], ["not an ONNX model"]),
    }[name]


CASES = ["another_model", "another_problem", "not_a_cpu", "map_unknown_device", "map_to_no_cpu", "runs_0",
         "warmup_negative", "input_not_ready", "invalid_for_problem", "no_model", "not_onnx"]


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_one_line_naming_it(name, files, capsys):
    argv, words = _case(name, *files)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("schedkit: error: ") and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def test_without_onnxruntime_the_error_names_the_extra(files, capsys, monkeypatch):
    _, model, plan, _ = files
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import then raises ImportError
    assert main(["execute", model, plan]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'schedkit[profile]'" in err, err
