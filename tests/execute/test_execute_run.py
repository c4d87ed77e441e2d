"""Running placed models on onnxruntime: the split run equals the whole model, mismatches are errors."""

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from helpers.execute_models import TWO_WORKERS, light, schedule, tiny_model  # noqa: E402

import schedkit.execute.runner as runner  # noqa: E402
from schedkit import Problem, SchedkitError, Schedule, solve  # noqa: E402
from schedkit.execute import ExecuteError, execute  # noqa: E402
from schedkit.generators.platform import platform  # noqa: E402
from schedkit.importers.onnx import Onnx  # noqa: E402


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.onnx"
    return path, tiny_model(path)


def test_two_workers_compute_the_known_outputs_of_the_tiny_model(tiny):
    path, expected = tiny
    run = execute(path, Schedule.model_validate(schedule(TWO_WORKERS)), runs=2, warmup=1)
    x = np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)  # the input execute makes
    assert np.allclose(run.outputs["y"], expected(x), atol=1e-6)
    assert np.abs(run.outputs["y"]).max() > 0.1  # not a trivial output
    # cpu0: a (c on cpu1 reads h at 1), b, then d..e once c's output arrived; cpu1: c
    assert run.segments == {"cpu0": 3, "cpu1": 1}
    assert run.checked == 4  # y, and the handed tensors h, r, n
    assert run.predicted_makespan == 4 and run.predicted_busy == {"cpu0": 4, "cpu1": 1}
    assert run.latency > 0 and all(v > 0 for v in run.busy.values())


def test_a_device_that_is_not_a_cpu_runs_on_a_cpu_worker_when_mapped(tiny):
    path, expected = tiny
    rows = [(t, "gpu0" if d == "cpu1" else d, s, e) for t, d, s, e in TWO_WORKERS]
    run = execute(path, Schedule.model_validate(schedule(rows)), device_map={"gpu0": "cpu"}, runs=1, warmup=0)
    assert run.mapped == ("gpu0",) and set(run.threads) == {"cpu0", "gpu0"}
    assert any("gpu0: 1 thread, 1 segment (mapped to cpu)" in line for line in run.lines())


def test_a_wrong_cut_is_an_error_naming_the_tensors_that_differ(tiny, monkeypatch):
    path, _ = tiny
    cut_right = runner.sub_model

    def relu_as_abs(model, segment, values):
        part = cut_right(model, segment, values)
        for node in part.graph.node:
            if node.op_type == "Relu":
                node.op_type = "Abs"
        return part
    monkeypatch.setattr(runner, "sub_model", relu_as_abs)
    with pytest.raises(ExecuteError, match=r"differs from the single-session run in 2 of 4 tensor\(s\): "):
        execute(path, Schedule.model_validate(schedule(TWO_WORKERS)), runs=1, warmup=0)


def test_the_light_inception_v1_on_two_cpu_workers_equals_the_single_session_run():
    data = Onnx().read(light("inception_v1"), platform=platform(cpus=2, gpus=0))
    problem = Problem.from_dict(data)
    plan = solve(problem, "heft")
    assert {r.device for r in plan.tasks} == {"cpu0", "cpu1"}
    run = execute(light("inception_v1"), plan, problem=problem, runs=1, warmup=0)
    assert set(run.segments) == {"cpu0", "cpu1"} and sum(run.segments.values()) > 2
    # prob_1 (a uniform 0.001 with these weights) and every tensor handed between segments
    assert run.checked >= 1 + len({t.src for t in plan.transfers})
    assert np.ptp(run.outputs["prob_1"]) < 1e-6  # so the handed tensors are what proves the cut
    assert run.unit == "ms" and run.predicted_makespan == pytest.approx(plan.makespan)
    assert run.outputs["prob_1"].shape == (1, 1000)


def test_a_task_whose_output_nobody_reads_and_a_weight_as_output_still_run(tmp_path):
    from onnx import TensorProto, helper, numpy_helper, save

    v = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [3])  # noqa: E731
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["unread"], name="b")]
    weight = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.float32), "W")
    path = tmp_path / "dead_end.onnx"
    save(helper.make_model(helper.make_graph(nodes, "g", [v("x")], [v("y"), v("W")], [weight]),
                           opset_imports=[helper.make_opsetid("", 17)]), path)
    plan = Schedule.model_validate(schedule([("a", "cpu0", 0, 1), ("b", "cpu1", 0, 1)]))
    run = execute(path, plan, runs=1, warmup=0)
    assert run.segments == {"cpu0": 1, "cpu1": 1}
    assert run.outputs["W"].tolist() == [1, 2, 3] and (run.outputs["y"] >= 0).all()


def test_an_unknown_optimisation_level_is_refused(tiny):
    with pytest.raises(SchedkitError, match="--optimization max: give one of basic, extended, all"):
        execute(tiny[0], Schedule.model_validate(schedule(TWO_WORKERS)), optimization="max")
