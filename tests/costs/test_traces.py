"""PyTorch profiler traces as cost tables: the shared H200 traces parsed and checked against
sums computed here from the raw events, matched onto the light ResNet-50, and bad input."""

import json
import os
from pathlib import Path

import pytest

from schedkit.costs.torch_ops import ModelNode, match_calls, model_nodes
from schedkit.costs.trace_table import ops_latency, scale_to_latency, trace_table
from schedkit.costs.traces import parse_trace, read_trace
from schedkit.errors import ProblemError

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper, save  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu-profiles"
RESNET = DATA / "resnet50_h200_float32_b1.trace.json"
GPT = DATA / "gpt4x1024_h200_bf16.trace.json"
OPS = DATA / "resnet50_h200.ops.json"
LIGHT = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light"
RESNET_ONNX = LIGHT / "light_resnet50.onnx"
needs_light = pytest.mark.skipif(not RESNET_ONNX.is_file(), reason="onnx wheel without light models")


@pytest.fixture(scope="module")
def resnet():
    return read_trace(RESNET)


@pytest.fixture(scope="module")
def raw():
    return json.loads(RESNET.read_text())["traceEvents"]


def x(name, ts, dur, cat="cpu_op", tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


# ---- parsing the real trace ---------------------------------------------------------------

def test_resnet_trace_has_torchvision_top_level_operators(resnet):
    names = [c.name for c in resnet.calls]
    assert len(names) == 175
    counts = {n: names.count(n) for n in set(names)}
    assert counts == {"aten::conv2d": 53, "aten::batch_norm": 53, "aten::relu_": 49,
                      "aten::add_": 16, "aten::max_pool2d": 1, "aten::adaptive_avg_pool2d": 1,
                      "aten::flatten": 1, "aten::linear": 1}
    # Nested children (aten::convolution, aten::cudnn_convolution, ...) never count.
    assert resnet.device == "NVIDIA H200" and resnet.kind == "pytorch-profiler"
    assert resnet.unattributed == pytest.approx(0, abs=1e-6)


def _kernels_by_flows(raw, op):
    """Device time of the GPU events launched inside ``op``, followed through ac2g flows only."""
    end = op["ts"] + op["dur"]
    ids = {e["id"] for e in raw if e.get("ph") == "s" and e.get("cat") == "ac2g"
           and e["tid"] == op["tid"] and op["ts"] <= e["ts"] <= end}
    arrivals = {(e["tid"], e["ts"]) for e in raw if e.get("ph") == "f" and e.get("cat") == "ac2g"
                and e["id"] in ids}
    return sum(e["dur"] for e in raw if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")
               and (e["tid"], e["ts"]) in arrivals)


def test_gpu_time_of_operators_equals_kernels_found_through_flows(resnet, raw):
    ops = [e for e in raw if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    linear = next(e for e in ops if e["name"] == "aten::linear")
    call = next(c for c in resnet.calls if c.name == "aten::linear")
    assert call.gpu == pytest.approx(_kernels_by_flows(raw, linear), rel=1e-9) and call.gpu > 0
    # All 53 convolutions: the top-level conv2d events are those whose start no other conv2d holds.
    convs = [e for e in ops if e["name"] == "aten::conv2d"]
    expected = sum(_kernels_by_flows(raw, e) for e in convs)
    assert sum(c.gpu for c in resnet.calls if c.name == "aten::conv2d") == pytest.approx(expected)
    every = sum(e["dur"] for e in raw if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy"))
    assert sum(c.gpu for c in resnet.calls) == pytest.approx(every)


def test_host_time_is_own_time_plus_the_gap_before_without_profiler_overhead(resnet, raw):
    first, second = resnet.calls[0], resnet.calls[1]
    buffer = next(e for e in raw if e.get("cat") == "overhead")
    # Timestamps near 5e12 us keep about a nanosecond of precision: compare to 0.01 us.
    assert first.host == pytest.approx(first.cpu - buffer["dur"], abs=0.01)
    gap = second.start - (first.start + first.cpu)
    assert gap > 0 and second.host == pytest.approx(second.cpu + gap, abs=0.01)


def test_record_function_ranges_are_not_operators_and_sum_the_step():
    gpt = read_trace(GPT)
    names = {c.name for c in gpt.calls}
    assert not names & set(gpt.ranges)
    assert {"forward", "backward", "layer0.attention", "layer3.mlp"} <= set(gpt.ranges)
    assert gpt.ranges["forward"].calls == 2
    # Every kernel is launched inside forward or backward (autograd's thread included) and
    # belongs to exactly one top-level call: no time is counted twice.
    both = gpt.ranges["forward"].gpu + gpt.ranges["backward"].gpu
    assert both == pytest.approx(gpt.gpu_total) and sum(c.gpu for c in gpt.calls) == \
        pytest.approx(gpt.gpu_total)
    layers = sum(r.gpu for n, r in gpt.ranges.items() if n.startswith("layer"))
    assert 0 < layers < gpt.ranges["forward"].gpu


def test_begin_end_pairs_and_kernel_only_traces():
    trace = parse_trace([{"ph": "B", "name": "step", "tid": 1, "ts": 0},
                         {"ph": "E", "tid": 1, "ts": 5}], "be.json")
    assert [(c.name, c.cpu) for c in trace.calls] == [("step", 5.0)]
    kernels = parse_trace([x("gemm", 0, 3, cat="kernel"), x("gemm", 4, 5, cat="kernel")], "k.json")
    table = trace_table(kernels).table
    assert kernels.kind == "chrome-trace" and table.source == "chrome-trace"
    assert [(n.name, n.calls, n.median) for n in table.nodes] == [("gemm", 2, 0.008)]


# ---- the time of a node ---------------------------------------------------------------------

def test_nodes_sum_to_the_unprofiled_latency(resnet):
    latency, runs = ops_latency(OPS, str(RESNET))
    assert latency == pytest.approx(4.4533, abs=1e-4) and runs == 1
    result = trace_table(resnet, latency_ms=latency)
    assert sum(n.median for n in result.table.nodes) == pytest.approx(latency, rel=1e-4)
    assert result.table.total.median == latency and 0.3 < result.scale < 0.7
    assert result.profiled_ms == pytest.approx(sum(c.host for c in resnet.calls) / 1e3)


def test_scale_never_goes_below_kernel_time():
    assert scale_to_latency([10.0, 10.0], [1.0, 8.0], 13.0) == pytest.approx(0.5)
    with pytest.raises(ProblemError, match="kernels take 0.009 ms"):
        scale_to_latency([10.0, 10.0], [1.0, 8.0], 8.0)


# ---- matching onto an ONNX model ----------------------------------------------------------

@needs_light
def test_resnet_trace_names_the_light_models_nodes(resnet):
    from schedkit.importers.onnx import operator_costs

    costs, _ = operator_costs(RESNET_ONNX)
    result = trace_table(resnet, model=RESNET_ONNX, latency_ms=4.45)
    table = result.table
    # torchvision leaves the final Softmax to the loss: every other compute node is matched.
    assert [c.op for c in costs if c.name in result.unmatched_nodes] == ["Softmax"]
    assert len(table.nodes) == len(costs) - 1 == 175
    by_name = {c.name: c for c in costs}
    for node in table.nodes:
        assert node.op_type == by_name[node.name].op
        assert (node.flops, node.bytes) == (by_name[node.name].flops, by_name[node.name].bytes)
    assert table.model.name == "light_resnet50" and len(table.model.sha256) == 64
    assert sum(n.median for n in table.nodes) == pytest.approx(4.45, rel=1e-4)


@needs_light
def test_a_trace_of_another_model_is_one_line():
    with pytest.raises(ProblemError) as info:
        trace_table(read_trace(RESNET), model=LIGHT / "light_inception_v1.onnx")
    message = str(info.value)
    assert "\n" not in message and "light_inception_v1.onnx" in message
    assert "of 175 traced operator(s) match no node of the model: aten::" in message


def _weight(name, shape):
    import numpy as np

    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def test_shapes_choose_between_ready_branches(tmp_path):
    # Model order lists the shortcut conv first; the trace runs the main branch first.
    inp = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    nodes = [helper.make_node("Conv", ["x", "ws"], ["s"], name="shortcut"),
             helper.make_node("Conv", ["x", "wm"], ["m"], name="main"),
             helper.make_node("Relu", ["m"], ["r"], name="act"),
             helper.make_node("Conv", ["r", "w2"], ["m2"], name="main2"),
             helper.make_node("Add", ["m2", "s"], ["y"], name="join")]
    graph = helper.make_graph(nodes, "g", [inp], [out], [_weight("ws", (8, 4, 1, 1)),
                              _weight("wm", (2, 4, 1, 1)), _weight("w2", (8, 2, 1, 1))])
    path = tmp_path / "branches.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    calls = [("aten::conv2d", ((1, 4, 8, 8), (2, 4, 1, 1))), ("aten::relu_", ((1, 2, 8, 8),)),
             ("aten::conv2d", ((1, 2, 8, 8), (8, 2, 1, 1))),
             ("aten::conv2d", ((1, 4, 8, 8), (8, 4, 1, 1))),
             ("aten::add_", ((1, 8, 8, 8), (1, 8, 8, 8), ()))]
    match = match_calls(calls, model_nodes(path), "branches.onnx")
    assert [name for _, name, _ in match.pairs] == ["main", "act", "main2", "shortcut", "join"]
    assert match.unmatched_nodes == [] and match.iterations == 1


def test_iterations_and_bookkeeping_calls():
    nodes = [ModelNode("c", "Conv", ((1, 3, 8, 8),), ()), ModelNode("r", "Relu", (), ("c",))]
    calls = [("aten::empty", ()), ("aten::conv2d", ((1, 3, 8, 8),)), ("aten::relu", ()),
             ("aten::conv2d", ((1, 3, 8, 8),)), ("aten::relu", ()), ("aten::empty", ())]
    match = match_calls(calls, nodes)
    assert match.pairs == [(1, "c", 0), (2, "r", 0), (3, "c", 1), (4, "r", 1)]
    assert match.folded == {0: 1, 5: 4} and match.iterations == 2
    # A call of the wrong shape matches nothing, and neither does what follows it.
    with pytest.raises(ProblemError, match=r"2 of 2 traced operator\(s\) match no node of the "
                                           r"model: aten::conv2d \(call 0\), aten::relu \(call 1\)"):
        match_calls([("aten::conv2d", ((1, 9, 8, 8),)), ("aten::relu", ())], nodes)


# ---- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    ('{"traceEvents": [{"ph": "i", "name": "mark", "ts": 1}]}', "no duration events"),
    ('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1}]}', "no duration events"),
    ("[1, 2", "malformed JSON"),
    ("42", "not a Chrome trace"),
])
def test_bad_traces_are_one_line_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "bad.trace.json"
    path.write_text(content)
    with pytest.raises(ProblemError) as info:
        read_trace(path)
    assert expected in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_ops_file_without_the_traces_run(tmp_path):
    with pytest.raises(ProblemError, match="no run tagged 'other_b1'"):
        ops_latency(OPS, str(tmp_path / "other_b1.trace.json"))
    with pytest.raises(ProblemError, match="latency_ms must be positive"):
        trace_table(parse_trace([x("aten::relu", 0, 4)], "t.json"), latency_ms=-1.0)


# ---- runs, the .ops.json beside a trace, and 'costs import' --------------------------------

def test_gpt_steps_are_spread_over_the_runs_the_ops_file_gives():
    latency, steps = ops_latency(DATA / "gpt4x1024_h200_bf16.ops.json", str(GPT))
    assert steps == 2 and latency == pytest.approx(6.883, abs=1e-3)
    gpt = read_trace(GPT)
    one = trace_table(gpt).table
    two = trace_table(gpt, latency_ms=latency, runs=steps)
    assert two.table.runs == 2 and one.runs == 1
    assert sum(n.median for n in two.table.nodes) == pytest.approx(latency, rel=1e-4)
    # Per step, each operator's calls are half the trace's.
    calls = {n.name: n.calls for n in one.nodes}
    assert {n.name: n.calls * 2 for n in two.table.nodes} == calls
    assert two.profiled_ms == pytest.approx(sum(max(c.gpu, c.host) for c in gpt.calls) / 2e3,
                                            rel=0.05)


def test_ops_file_beside_a_trace_is_its_own_or_one_that_tags_it(tmp_path):
    from schedkit.costs.trace_table import ops_beside

    path, latency, runs = ops_beside(str(RESNET))
    assert path.name == "resnet50_h200.ops.json" and (round(latency, 4), runs) == (4.4533, 1)
    assert ops_beside(str(DATA / "resnet50_h200_bfloat16_b16.trace.json"))[1] == \
        pytest.approx(10.352, abs=1e-3)
    assert ops_beside(str(GPT))[0].name == "gpt4x1024_h200_bf16.ops.json"
    # The GPT file names no trace: it is never taken for another one.
    assert ops_beside(str(DATA / "other_model.trace.json")) is None


@needs_light
def test_costs_import_reads_a_trace_with_its_model(tmp_path, capfd):
    from schedkit.cli.main import main
    from schedkit.costs.table import read_cost_table

    out = tmp_path / "h200.json"
    assert main(["costs", "import", str(RESNET), "--model", str(RESNET_ONNX), "-o", str(out)]) == 0
    captured = capfd.readouterr()
    assert "from resnet50_h200.ops.json" in captured.err and "1 model node(s)" in captured.err
    table = read_cost_table(out)
    assert table.source == "pytorch-profiler" and table.device.name == "NVIDIA H200"
    assert table.device.type == "gpu" and len(table.nodes) == 175
    assert table.total.median == pytest.approx(4.4533, abs=1e-4)
    explicit = tmp_path / "given.json"
    assert main(["costs", "import", str(RESNET), "--latency-ms", "5", "-o", str(explicit)]) == 0
    assert sum(n.median for n in read_cost_table(explicit).nodes) == pytest.approx(5, rel=1e-4)


@pytest.mark.parametrize("content, flags, words", [
    ('{"traceEvents": [{"ph": "M", "name": "process_name"}]}', [], ["no duration events"]),
    ('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "ts": 0, "dur": 1}]}',
     ["--latency-ms", "-0.5"], ["latency_ms must be positive, not -0.5"]),
])
def test_costs_import_of_a_bad_trace_is_one_line_and_no_file(tmp_path, capfd, content, flags, words):
    from schedkit.cli.main import main

    path = tmp_path / "bad.trace.json"
    path.write_text(content)
    out = tmp_path / "t.json"
    code = main(["costs", "import", str(path), *flags, "-o", str(out)])
    err = capfd.readouterr().err
    assert code != 0 and not out.exists() and len(err.splitlines()) == 1
    assert err.startswith("schedkit: error: ") and str(path) in err
    assert all(word in err for word in words)
