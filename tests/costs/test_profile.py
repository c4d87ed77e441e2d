"""schedkit profile: onnxruntime's profiler on tiny models built here and on a light model."""

import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from schedkit.costs.ort_profile import kernel_runs, node_costs  # noqa: E402
from schedkit.costs.profile import profile_model  # noqa: E402
from schedkit.errors import SchedkitError  # noqa: E402
from schedkit.importers import convert  # noqa: E402

F = TensorProto.FLOAT
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
PLATFORM = {"devices": [{"name": "cpu", "peak_flops": 1e11, "memory_bandwidth": 1e10}]}


def save(model, folder, name):
    path = Path(folder) / name
    onnx.save(model, path)
    return path


def weight(name, shape, value=0.5):
    return numpy_helper.from_array(np.full(shape, value, dtype=np.float32), name)


def embed_mlp():
    """Unnamed nodes, an int64 input (indices), a symbolic batch: Gather -> MatMul -> Relu -> Softmax."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 4])
    y = helper.make_tensor_value_info("y", F, ["batch", 4, 16])
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("MatMul", ["emb", "w"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    graph = helper.make_graph(nodes, "embed", [ids], [y], [weight("table", (10, 8)), weight("w", (8, 16))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_bn_relu():
    x = helper.make_tensor_value_info("x", F, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", F, [1, 8, 16, 16])
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "s", "bias", "m", "v"], ["n"], name="bn"),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    inits = [weight("w", (8, 3, 3, 3)), weight("b", (8,)), weight("s", (8,), 1.0), weight("bias", (8,)),
             weight("m", (8,), 0.0), weight("v", (8,), 1.0)]
    graph = helper.make_graph(nodes, "cbr", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    return {"embed": save(embed_mlp(), folder, "embed.onnx"), "cbr": save(conv_bn_relu(), folder, "cbr.onnx")}


def test_tiny_model_nodes_are_the_converted_tasks(models):
    path = models["embed"]
    table, left_out = profile_model(path, runs=3, warmup=1, threads=1, shape=["batch=2"])
    tasks = convert("onnx", path, platform=PLATFORM, shape=["batch=2"])["tasks"]
    assert [n.name for n in table.nodes] == [t["name"] for t in tasks] == ["emb", "h", "r", "y"]
    assert [n.op_type for n in table.nodes] == ["Gather", "MatMul", "Relu", "Softmax"]
    assert left_out == {}
    assert table.runs == 3 and table.source == "onnxruntime" and table.unit == "ms"
    assert all(n.calls == 1 and 0 < n.median <= n.p95 for n in table.nodes)
    # Output bytes: onnxruntime's count of float32 (2, 4, 16) outputs.
    assert [n.output_bytes for n in table.nodes] == [2 * 4 * 8 * 4] + [2 * 4 * 16 * 4] * 3
    matmul = table.nodes[1]
    assert matmul.flops == 2 * (2 * 4 * 16) * 8 and matmul.bytes == 4 * (2 * 4 * 8 + 8 * 16 + 2 * 4 * 16)
    assert table.total.median > 0 and table.total.mean > 0
    assert table.model.name == "embed"
    assert table.model.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    device = table.device
    assert (device.type, device.provider, device.threads) == ("cpu", "CPUExecutionProvider", 1)
    assert device.host


def test_fused_nodes_get_no_time_of_their_own(models):
    basic, _ = profile_model(models["cbr"], runs=2, warmup=0, threads=1)
    calls = {n.name: n.calls for n in basic.nodes}
    assert calls == {"conv": 1, "bn": 0, "relu": 1}   # BatchNormalization folded into the Conv
    assert next(n for n in basic.nodes if n.name == "bn").median == 0.0
    extended, _ = profile_model(models["cbr"], runs=2, warmup=0, threads=1, optimization="extended")
    assert {n.name: n.calls for n in extended.nodes} == {"conv": 1, "bn": 0, "relu": 0}  # FusedConv
    assert extended.nodes[0].op_type == "Conv"


def test_light_model_with_stripped_weights_runs():
    path = LIGHT / "light_inception_v1.onnx"
    table, left_out = profile_model(path, runs=2, warmup=1, threads=1)
    tasks = convert("onnx", path, platform=PLATFORM)["tasks"]
    assert [n.name for n in table.nodes] == [t["name"] for t in tasks]
    assert left_out == {}
    ran = [n for n in table.nodes if n.calls]
    assert len(ran) >= len(table.nodes) - 10                 # only what onnxruntime fuses
    assert all(n.flops > 0 for n in table.nodes if n.op_type == "Conv")
    node_sum = sum(n.median for n in table.nodes)
    # The whole model, timed without the profiler, is about the nodes' sum (a shared machine: wide).
    assert 0.4 < table.total.median / node_sum < 2.5


def test_the_time_outside_the_nodes_is_measured_in_pairs_of_runs(models, monkeypatch):
    import schedkit.costs.profile as profile

    seen = []

    def spy(latencies, node_times):
        seen.append((list(latencies), list(node_times)))
        return paired(latencies, node_times)

    paired = profile.paired_overhead
    monkeypatch.setattr(profile, "paired_overhead", spy)
    table, _ = profile_model(models["cbr"], runs=1, warmup=1, threads=1)
    [(latencies, node_times)] = seen
    assert len(latencies) == len(node_times) == 1
    # With one run the medians are that run's times: its node time is their sum.
    assert node_times[0] == pytest.approx(sum(n.median for n in table.nodes), rel=1e-4)
    assert latencies[0] == pytest.approx(table.total.median, rel=1e-4)
    assert table.total.overhead == pytest.approx(latencies[0] - node_times[0], rel=1e-4, abs=1e-6)


def test_paired_overhead_leaves_out_a_load_that_disturbs_some_runs():
    from schedkit.costs.profile import paired_overhead

    # 50 nodes of 0.8 ms and 0.5 ms outside them per run; in 12 of 21 pairs of runs another
    # process takes the core for about 10 ms, inside one node of the profiled run.
    rng = np.random.default_rng(2)
    nodes = 0.8 + rng.normal(0, 0.01, (21, 50))
    latencies = nodes.sum(axis=1) + 0.5 + rng.normal(0, 0.05, 21)
    for k in rng.choice(21, 12, replace=False):
        latencies[k] += 10 + rng.normal(0, 0.3)
        nodes[k, rng.integers(50)] += 10 + rng.normal(0, 0.3)
    unpaired = np.median(latencies) - np.median(nodes, axis=0).sum()   # a table's fallback
    assert unpaired > 10
    assert paired_overhead(list(latencies), list(nodes.sum(axis=1))) == pytest.approx(0.5, abs=0.3)


def test_kernels_map_to_operators_by_name_then_position():
    from schedkit.importers.onnx import OperatorCost

    ops = [OperatorCost("conv_out", "Conv", 3, 10, 20, True, 0, 8), OperatorCost("named", "Relu", 4, 1, 2, True, 0, 8)]
    events = [{"cat": "Session", "name": "model_run", "ts": 0, "dur": 50},
              {"cat": "Node", "name": "Conv_3_kernel_time", "ts": 1, "dur": 10,
               "args": {"op_name": "FusedConv", "node_index": "9", "output_size": "8"}},
              {"cat": "Node", "name": "Conv_0_kernel_time", "ts": 2, "dur": 10,
               "args": {"op_name": "Conv", "node_index": "3", "output_size": "8"}},
              {"cat": "Node", "name": "named_kernel_time", "ts": 3, "dur": 4,
               "args": {"op_name": "Relu", "node_index": "77", "output_size": "8"}},
              {"cat": "Node", "name": "named_kernel_time", "ts": 4, "dur": 6,
               "args": {"op_name": "Relu", "node_index": "77", "output_size": "8"}}]
    rows, left_out = node_costs(kernel_runs(events, "p.json"), ops)
    assert [(r["name"], r["median"], r["calls"]) for r in rows] == [("conv_out", 0.01, 1), ("named", 0.01, 2)]
    assert left_out == {"Conv_3": 0.01}                      # a node the runtime made itself


@pytest.mark.parametrize("options, message", [
    ({"runs": 0}, "--runs 0: give at least 1 measured run"),
    ({"warmup": -1}, "--warmup -1: give 0 or more"),
    ({"threads": 0}, "--threads 0: give at least 1 thread"),
    ({"provider": "NoSuchExecutionProvider"}, "--provider NoSuchExecutionProvider: not offered"),
    ({"optimization": "all"}, "--optimization all: choose one of basic, extended"),
    ({"shape": None}, "has a dynamic dimension 'batch': give --shape batch=N"),
])
def test_bad_options_are_one_line(models, options, message):
    given = {"runs": 1, "warmup": 0, "threads": 1, "shape": ["batch=1"], **options}
    with pytest.raises(SchedkitError) as caught:
        profile_model(models["embed"], **given)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_model_onnxruntime_cannot_load(tmp_path):
    x = helper.make_tensor_value_info("x", F, [2])
    y = helper.make_tensor_value_info("y", F, [2])
    graph = helper.make_graph([helper.make_node("Mystery", ["x"], ["y"], name="m", domain="acme")],
                              "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("acme", 1)])
    path = save(model, tmp_path, "mystery.onnx")
    with pytest.warns(UserWarning), pytest.raises(SchedkitError, match=r"mystery.onnx: onnxruntime cannot load it: "):
        profile_model(path, runs=1, warmup=0, threads=1)


def test_missing_onnxruntime_names_the_extra(models, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(SchedkitError, match=r"the 'profile' extra: pip install 'schedkit\[profile\]'"):
        profile_model(models["cbr"], runs=1, warmup=0)


def test_progress_callback_counts_every_run(models):
    seen = []
    profile_model(models["cbr"], runs=2, warmup=1, threads=1, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(k, 6) for k in range(1, 7)]
    assert os.path.exists(models["cbr"])
