"""The ONNX importer: graphs built with onnx.helper checked by hand, the shipped light models,
and every bad input as one line without a traceback or an output file."""

import glob
import os
import re
import time
import warnings

import pytest

onnx = pytest.importorskip("onnx")

from helpers.onnx_models import (BYTE_PLATFORM, FLOP_PLATFORM, attention_block, conv_bn_relu,  # noqa: E402
                                 custom_op, dynamic_mlp, residual_block)

from schedkit import Problem, SchedkitError, solve  # noqa: E402
from schedkit.cli.main import main  # noqa: E402
from schedkit.importers import IMPORTERS, convert  # noqa: E402
from schedkit.importers.onnx import Onnx, OnnxImportWarning, parse_shapes  # noqa: E402

PLATFORM = "examples/platform_cpu_2gpu.yaml"
LIGHT = sorted(glob.glob(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data",
                                      "light", "*.onnx")))


def save(model, tmp_path, name="m.onnx"):
    path = tmp_path / name
    onnx.save(model, path)
    return path


def read(model, tmp_path, platform=FLOP_PLATFORM, **options):
    return Onnx().read(save(model, tmp_path), platform=platform, **options)


def tasks_by_name(data):
    return {t["name"]: t for t in data["tasks"]}


def test_registered_with_its_extra():
    cls = IMPORTERS.get("onnx")
    assert cls is Onnx and cls.extra == "onnx" and cls.suffixes == (".onnx",)


def test_conv_bn_relu_flops_bytes_and_memory_by_hand(tmp_path):
    data = read(conv_bn_relu(), tmp_path)
    tasks = tasks_by_name(data)
    assert list(tasks) == ["conv", "bn", "relu"]
    assert [t["op"] for t in data["tasks"]] == ["Conv", "BatchNormalization", "Relu"]
    out = 4 * 8 * 8                               # output elements of every node
    conv_flops = 2 * out * 3 * 3 * 3 + out        # multiply-adds over 3x3x3, plus the bias
    assert tasks["conv"]["durations"] == {"flops": pytest.approx(conv_flops)}
    assert tasks["bn"]["durations"]["flops"] == pytest.approx(2 * out)
    assert tasks["relu"]["durations"]["flops"] == pytest.approx(out)
    assert tasks["conv"]["weight_memory"] == 4 * (4 * 3 * 3 * 3 + 4)
    assert tasks["bn"]["weight_memory"] == 4 * 4 * 4
    assert tasks["relu"]["weight_memory"] == 0
    assert all(t["activation_memory"] == 4 * out for t in data["tasks"])
    assert data["edges"] == [{"src": "conv", "dst": "bn", "size": 4 * out},
                             {"src": "bn", "dst": "relu", "size": 4 * out}]
    assert "memory" not in tasks["conv"]
    assert tasks_by_name(read(conv_bn_relu(), tmp_path, static_memory=True))["conv"]["memory"] == \
        tasks["conv"]["weight_memory"]
    # Bytes moved: activations in and out, weights read.
    moved = tasks_by_name(read(conv_bn_relu(), tmp_path, platform=BYTE_PLATFORM))
    assert moved["conv"]["durations"]["bytes"] == pytest.approx(4 * (3 * 64 + 108 + 4 + out))
    assert moved["relu"]["durations"]["bytes"] == pytest.approx(4 * 2 * out)


def test_residual_block_graph(tmp_path):
    data = read(residual_block(), tmp_path)
    edges = {(e["src"], e["dst"]): e["size"] for e in data["edges"]}
    size = 4 * 8 * 4 * 4
    # The model input x feeds conv1 and add: it is no task, so it makes no edge.
    assert edges == {("conv1", "relu1"): size, ("relu1", "conv2"): size, ("conv2", "add"): size,
                     ("add", "relu2"): size}
    tasks = tasks_by_name(data)
    assert tasks["conv1"]["durations"]["flops"] == pytest.approx(2 * (8 * 16) * (8 * 9))
    assert tasks["add"]["durations"]["flops"] == pytest.approx(8 * 16)
    Problem.from_dict(data)


def test_attention_block_folds_constants_and_counts_flops(tmp_path):
    seq, dim = 16, 32
    data = read(attention_block(seq, dim), tmp_path)
    tasks = tasks_by_name(data)
    assert "scale" not in tasks and "wk_fill" not in tasks  # Constant and ConstantOfShape folded
    assert list(tasks) == ["q_proj", "k_proj", "v_proj", "k_t", "scores", "scaled", "softmax", "mix"]
    assert tasks["k_proj"]["weight_memory"] == 4 * dim * dim       # the folded ConstantOfShape
    assert tasks["scaled"]["weight_memory"] == 4                   # the folded scalar
    flops = {name: t["durations"]["flops"] for name, t in tasks.items()}
    assert flops["q_proj"] == pytest.approx(2 * seq * dim * dim)
    assert flops["scores"] == pytest.approx(2 * seq * seq * dim)
    assert flops["scaled"] == pytest.approx(seq * seq)
    assert flops["softmax"] == pytest.approx(5 * seq * seq)
    assert flops["mix"] == pytest.approx(2 * seq * dim * seq)
    assert flops["k_t"] < 1e-20  # a transpose computes nothing: its bytes over 1e30 B/s
    edges = {(e["src"], e["dst"]) for e in data["edges"]}
    assert edges == {("k_proj", "k_t"), ("q_proj", "scores"), ("k_t", "scores"), ("scores", "scaled"),
                     ("scaled", "softmax"), ("softmax", "mix"), ("v_proj", "mix")}


def test_roofline_takes_the_slower_side_plus_overhead(tmp_path):
    platform = {"time_unit": "ms", "devices": [
        {"name": "d", "peak_flops": 1e9, "memory_bandwidth": 1e6, "launch_overhead": 1e-3}]}
    data = read(conv_bn_relu(), tmp_path, platform=platform)
    relu = tasks_by_name(data)["relu"]["durations"]["d"]
    # Relu: 256 FLOPs (0.256 us) against 2048 bytes (2.048 ms): memory bound, plus 1 ms.
    assert relu == pytest.approx(1.0 + 2.048)


def test_unsupported_ops_leave_the_device_out(tmp_path):
    platform = {"devices": [
        {"name": "cpu", "peak_flops": 1e9, "memory_bandwidth": 1e9},
        {"name": "npu", "peak_flops": 1e12, "memory_bandwidth": 1e11, "unsupported_ops": ["Softmax"]}],
        "links": [{"src": "cpu", "dst": "npu", "bandwidth": 1e9}]}
    data = read(attention_block(), tmp_path, platform=platform)
    tasks = tasks_by_name(data)
    assert set(tasks["softmax"]["durations"]) == {"cpu"}
    assert set(tasks["mix"]["durations"]) == {"cpu", "npu"}
    assert data["links"] == [{"src": "cpu", "dst": "npu", "bandwidth": 1e6, "latency": 0.0}]  # per ms


def test_dynamic_shapes_need_shape(tmp_path):
    path = save(dynamic_mlp(), tmp_path)
    with pytest.raises(SchedkitError, match=r"model input 'x' has a dynamic dimension 'batch': "
                                            r"give --shape batch=N or --shape x=D1,D2,\.\.\."):
        Onnx().read(path, platform=FLOP_PLATFORM)
    by_dim = Onnx().read(path, platform=FLOP_PLATFORM, shape=["batch=4"])
    by_input = Onnx().read(path, platform=FLOP_PLATFORM, shape="x=4,64")
    assert by_dim["tasks"][0]["durations"]["flops"] == by_input["tasks"][0]["durations"]["flops"] == 256
    with pytest.raises(SchedkitError, match=r"--shape x: the input has 2 dimensions, got 3"):
        Onnx().read(path, platform=FLOP_PLATFORM, shape=["x=1,4,64"])
    with pytest.raises(SchedkitError, match=r"--shape seq: no model input or symbolic dimension"):
        Onnx().read(path, platform=FLOP_PLATFORM, shape=["seq=3"])
    assert parse_shapes({"x": [1, 2]}) == {"x": (1, 2)}
    with pytest.raises(SchedkitError, match="positive integers"):
        parse_shapes(["x=0,3"])


def test_unknown_op_is_a_warning_listing_it(tmp_path):
    with pytest.warns(OnnxImportWarning) as caught:
        data = read(custom_op(), tmp_path, platform=BYTE_PLATFORM)
    messages = [str(w.message) for w in caught]
    assert any("no cost rule for 1 operator(s), costed by bytes moved only: Frobnicate (1)" in m
               for m in messages), messages
    assert any("without a static shape" in m and "b" in m for m in messages), messages
    assert [t["name"] for t in data["tasks"]] == ["r1", "frob", "r2"]
    assert tasks_by_name(data)["frob"]["durations"]["bytes"] == 40  # its known input only
    Problem.from_dict(data)


def test_bad_files_and_devices_are_one_line_errors(tmp_path):
    text = tmp_path / "notes.onnx"
    text.write_text("this is not a model\n")
    with pytest.raises(SchedkitError, match=r"notes.onnx: not an ONNX model"):
        Onnx().read(text, platform=FLOP_PLATFORM)
    model = save(conv_bn_relu(), tmp_path)
    with pytest.raises(SchedkitError, match=r"needs a devices file: --platform"):
        Onnx().read(model)
    with pytest.raises(SchedkitError, match=r"device 'gpu' peak_flops: Field required"):
        Onnx().read(model, platform={"devices": [{"name": "gpu", "memory_bandwidth": 1e9}]})
    with pytest.raises(SchedkitError, match=r"onnx import takes no option 'colour'"):
        Onnx().read(model, platform=FLOP_PLATFORM, colour="red")


def cli(argv, capfd):
    code = main([str(a) for a in argv])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", ["not_onnx", "dynamic", "no_peak_flops", "no_platform", "jssp_flag"])
def test_cli_bad_input_one_line_no_file(case, tmp_path, capfd):
    model = save(conv_bn_relu(), tmp_path)
    devices = tmp_path / "devices.yaml"
    devices.write_text("devices:\n  - {name: gpu, memory_bandwidth: 1e12}\n")
    argv = {"not_onnx": ["onnx", tmp_path / "x.onnx", "--platform", PLATFORM],
            "dynamic": ["onnx", save(dynamic_mlp(), tmp_path, "d.onnx"), "--platform", PLATFORM],
            "no_peak_flops": ["onnx", model, "--platform", devices],
            "no_platform": ["onnx", model],
            "jssp_flag": ["jssp", model, "--platform", PLATFORM]}[case]
    (tmp_path / "x.onnx").write_bytes(b"\x00\x01garbage")
    out = tmp_path / "p.json"
    code, _, err = cli(["convert", *argv, "-o", out], capfd)
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and err.startswith("schedkit: error: "), err
    assert "Traceback" not in err
    expected = {"not_onnx": "not an ONNX model", "dynamic": "dynamic dimension 'batch'",
                "no_peak_flops": "peak_flops", "no_platform": "--platform",
                "jssp_flag": "convert jssp does not take --platform"}[case]
    assert expected in err
    assert not out.exists()


def test_cli_warns_and_writes(tmp_path, capfd):
    out = tmp_path / "p.json"
    code, stdout, err = cli(["convert", "onnx", save(custom_op(), tmp_path), "--platform", PLATFORM,
                             "-o", out], capfd)
    assert code == 0 and out.exists()
    assert stdout.startswith(f"wrote {out}: 3 tasks on 3 devices")
    assert "schedkit: warning: m: no cost rule for 1 operator(s)" in err


def test_light_models_are_all_there():
    names = {os.path.basename(p) for p in LIGHT}
    assert {"light_resnet50.onnx", "light_inception_v1.onnx", "light_inception_v2.onnx",
            "light_densenet121.onnx", "light_squeezenet.onnx", "light_shufflenet.onnx",
            "light_vgg19.onnx", "light_bvlc_alexnet.onnx"} <= names


@pytest.mark.parametrize("path", LIGHT, ids=[os.path.basename(p)[6:-5] for p in LIGHT])
def test_light_model_converts_solves_and_validates(path):
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxImportWarning)  # every operator has a rule, every shape known
        data = convert("onnx", path, platform=PLATFORM)
    seconds = time.perf_counter() - began
    assert seconds < 2.0, f"{path}: converted in {seconds:.2f} s"
    ops = {t["op"] for t in data["tasks"]}
    assert "ConstantOfShape" not in ops and "Conv" in ops  # the weight stand-ins are folded
    assert all(t["weight_memory"] > 0 for t in data["tasks"] if t["op"] in ("Conv", "Gemm"))
    problem = Problem.from_dict(data)
    schedule = solve(problem, "heft")
    assert schedule.violations(problem) == []
    assert schedule.makespan >= schedule.bound > 0


def test_densenet_size_after_folding():
    path = next(p for p in LIGHT if p.endswith("densenet121.onnx"))
    data = convert("onnx", path, platform=PLATFORM)
    model = onnx.load(path)
    assert len(model.graph.node) == 1746
    # 836 ConstantOfShape and 242 Unsqueeze of weights fold; 121 convolutions stay.
    assert len(data["tasks"]) == 668
    assert sum(t["op"] == "Conv" for t in data["tasks"]) == 121


@pytest.mark.parametrize("shape, words", [
    ("x=99999999999999999999,64", "above 9223372036854775807 (ONNX's int64)"),
    ("batch=9223372036854775808", "above 9223372036854775807 (ONNX's int64)"),
    ("batch=" + "9" * 40, "above 9223372036854775807 (ONNX's int64)"),
    ("x=4.0,64", "positive integers"),
    ("x=1e3,64", "positive integers"),
    ("x=\u0664,64", "positive integers"),  # an Arabic-Indic four: int() reads it, ONNX users do not
])
def test_shapes_beyond_int64_or_not_integers_are_one_line_errors(shape, words, tmp_path, capfd):
    path = save(dynamic_mlp(), tmp_path)
    out = tmp_path / "p.json"
    code, _, err = cli(["convert", "onnx", path, "--platform", PLATFORM, "--shape", shape, "-o", out],
                       capfd)
    assert code == 1 and err.startswith(f"schedkit: error: --shape {shape}: ")
    assert words in err and err.count("\n") == 1 and not out.exists(), err
    with pytest.raises(SchedkitError, match=re.escape(words)):
        parse_shapes([shape])


def test_the_largest_int64_shape_converts(tmp_path):
    data = read(dynamic_mlp(), tmp_path, shape=[f"batch={2**63 - 1}"])
    Problem.from_dict(data)


def test_measured_times_and_their_overhead_share_are_recorded(tmp_path):
    from schedkit.importers.measured import MeasuredTimes

    platform = {"time_unit": "ms", "devices": [
        {"name": "cpu0", "peak_flops": 1e11, "memory_bandwidth": 1e10},
        {"name": "gpu0", "peak_flops": 1e13, "memory_bandwidth": 1e12}]}
    # conv and relu ran, each with 0.5 ms of the run's time outside the nodes; bn was fused.
    table = MeasuredTimes({"conv": 0.0025, "bn": 0.0, "relu": 0.0015}, "cpu", source="t.json",
                          overhead=0.0005)
    data = read(conv_bn_relu(), tmp_path, platform=platform, costs=[table])
    durations = {t["name"]: t["durations"]["cpu0"] for t in data["tasks"]}
    assert durations == pytest.approx({"conv": 2.5, "bn": 0.0, "relu": 1.5})
    assert data["measured"] == {"cpu0": 3} and data["measured_overhead"] == {"cpu0": 0.5}
    problem = Problem.from_dict(data)
    assert problem.spec.measured_overhead == {"cpu0": 0.5}
    with pytest.raises(SchedkitError, match="measured_overhead: unknown device 'cpu9'"):
        Problem.from_dict({**data, "measured_overhead": {"cpu9": 0.5}})
    assert "measured_overhead" not in read(conv_bn_relu(), tmp_path, platform=platform)
