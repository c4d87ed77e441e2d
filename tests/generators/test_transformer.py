"""The transformer generator (issue 29, item 3) and ``schedkit generate transformer``."""

import json
from collections import defaultdict, deque

import pytest

from schedkit import Problem, ProblemError, Schedule
from schedkit.cli.main import main
from schedkit.generators.transformer import graph_size, transformer
from schedkit.generators.transformer_costs import LayerShape, layer_ops, textbook_flops

PLATFORM = "examples/platform_cpu_2gpu.yaml"
SMALL = dict(layers=2, hidden=64, heads=4, seq=16, batch=2)


def flop_counter(time_unit="s"):
    """A device whose time is its FLOPs / 1e12 (bandwidth without limit, no overhead)."""
    return {"time_unit": time_unit, "devices": [
        {"name": "gpu", "peak_flops": 1e12, "memory_bandwidth": 1e30, "launch_overhead": 0}]}


def expected_size(layers, vocab, backward, copies=1):
    # Counted again from the layer's structure, not through graph_size: 12 forward operators and
    # 13 edges inside a layer, 2 into it; backward: 4 weight products split in two, 8 single ops.
    head = vocab is not None
    tasks = 12 * layers + 3 * head
    edges = 13 * layers + 2 * (layers - 1) + 4 * head
    if backward:
        back_tasks = 16 * layers + 4 * head
        # One edge from each forward op to each of its backward tasks, and one per forward edge
        # and backward task of its producer (weight products have two).
        per_layer_grad = 18
        back_edges = back_tasks + per_layer_grad * layers + 2 * (layers - 1) + 4 * head
        tasks, edges = tasks + back_tasks, edges + back_edges
    return tasks * copies, edges * copies


def topological(data):
    indegree = defaultdict(int)
    out = defaultdict(list)
    for e in data["edges"]:
        out[e["src"]].append(e["dst"])
        indegree[e["dst"]] += 1
    queue = deque(t["name"] for t in data["tasks"] if indegree[t["name"]] == 0)
    order = []
    while queue:
        n = queue.popleft()
        order.append(n)
        for m in out[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                queue.append(m)
    return order


@pytest.mark.parametrize("b,s,h,a", [(1, 2048, 12288, 96), (4, 128, 256, 8), (2, 16, 64, 4)])
def test_layer_flops_are_the_textbook_count(b, s, h, a):
    ops = layer_ops(LayerShape(batch=b, seq=s, hidden=h, heads=a))
    products = sum(o.flops for o in ops if o.op == "MatMul")
    assert products == 24 * b * s * h ** 2 + 4 * b * s ** 2 * h == textbook_flops(b, s, h)
    # Norms, softmax, GeLU and adds come on top: a few percent at most at these sizes.
    total = sum(o.flops for o in ops)
    assert products < total < 1.05 * products


def test_durations_are_the_platforms_roofline_of_the_textbook_flops():
    b, s, h, a = 2, 64, 128, 4
    data = transformer(layers=3, hidden=h, heads=a, seq=s, batch=b, platform=flop_counter())
    assert data["time_unit"] == "s"
    for layer in range(3):
        seconds = sum(t["durations"]["gpu"] for t in data["tasks"]
                      if t["name"].startswith(f"L{layer}.") and t["op"] == "MatMul")
        assert seconds * 1e12 == pytest.approx(textbook_flops(b, s, h), rel=1e-5)
    # The same task under ms is 1000 times longer: the platform's time unit is used.
    ms = transformer(layers=1, hidden=h, heads=a, seq=s, batch=b, platform=flop_counter("ms"))
    assert ms["tasks"][1]["durations"]["gpu"] == pytest.approx(1000 * data["tasks"][1]["durations"]["gpu"])
    # Memory-bound: bytes / bandwidth + overhead, as convert onnx computes it.
    slow = {"devices": [{"name": "d", "peak_flops": 1e30, "memory_bandwidth": 1e9, "launch_overhead": 1e-6}]}
    t = transformer(layers=1, hidden=h, heads=a, seq=s, batch=b, platform=slow)["tasks"][6]  # residual add
    assert t["name"] == "L0.attn.residual"
    assert t["durations"]["d"] == pytest.approx((1e-6 + 3 * b * s * h * 2 / 1e9) * 1e3)


@pytest.mark.parametrize("layers", [1, 3, 5])
@pytest.mark.parametrize("vocab", [None, 1000])
@pytest.mark.parametrize("backward", [False, True])
def test_task_and_edge_counts(layers, vocab, backward):
    data = transformer(layers, 64, 4, 16, 2, PLATFORM, forward_backward=backward, vocab=vocab)
    tasks, edges = expected_size(layers, vocab, backward)
    assert (len(data["tasks"]), len(data["edges"])) == (tasks, edges) == graph_size(layers, vocab, backward)
    names = [t["name"] for t in data["tasks"]]
    assert len(set(names)) == len(names)
    assert len({(e["src"], e["dst"]) for e in data["edges"]}) == len(data["edges"])
    assert set(e["src"] for e in data["edges"]) | set(e["dst"] for e in data["edges"]) <= set(names)
    assert len(topological(data)) == len(names)                  # a DAG
    p = Problem.from_dict(data)
    assert len(p.tasks) == tasks


def test_micro_batches_are_disjoint_copies_of_the_per_micro_batch_batch():
    data = transformer(**{**SMALL, "batch": 6}, platform=PLATFORM, forward_backward=True, micro_batches=3)
    assert (len(data["tasks"]), len(data["edges"])) == expected_size(2, None, True, copies=3)
    assert {e["src"].rsplit("_mb", 1)[1] == e["dst"].rsplit("_mb", 1)[1] for e in data["edges"]} == {True}
    rows = {t["name"]: t for t in data["tasks"]}
    one = {t["name"]: t for t in transformer(**{**SMALL, "batch": 2}, platform=PLATFORM,
                                             forward_backward=True)["tasks"]}
    for name, task in one.items():   # each copy is the graph of batch 6 / 3 = 2
        assert rows[f"{name}_mb1"]["durations"] == task["durations"]
        assert rows[f"{name}_mb1"]["activation_memory"] == task["activation_memory"]
        # Parameters count once: on micro-batch 0's forward tasks only.
        assert rows[f"{name}_mb0"]["weight_memory"] == task["weight_memory"]
        assert rows[f"{name}_mb2"]["weight_memory"] == 0


def test_backward_dependencies_and_sizes():
    h, s, b, e = 64, 16, 2, 2
    data = transformer(**SMALL, platform=PLATFORM, forward_backward=True)
    into = defaultdict(dict)
    for edge in data["edges"]:
        into[edge["dst"]][edge["src"]] = edge["size"]
    x = b * s * h * e
    # The weight gradient reads the op's input and the output gradient of the next op.
    assert into["L0.mlp.down.bwd_weight"] == {"L0.mlp.down": b * s * 4 * h * e, "L0.mlp.residual.bwd": x}
    # The input gradient reads the weights (not the activations) and the same output gradient.
    assert into["L0.mlp.down.bwd_input"] == {"L0.mlp.down": 4 * h * h * e, "L0.mlp.residual.bwd": x}
    # A tensor read by two ops gets its gradient from both: the residual stream, Q/K and V.
    assert into["L0.mlp.residual.bwd"] == {"L0.mlp.residual": 0, "L1.attn.norm.bwd": x,
                                           "L1.attn.residual.bwd": x}
    assert into["L1.attn.qkv.bwd_weight"] == {"L1.attn.qkv": x, "L1.attn.scores.bwd": 2 * x,
                                              "L1.attn.context.bwd": x}
    assert into["L1.attn.softmax.bwd"] == {"L1.attn.softmax": b * 4 * s * s * e,
                                           "L1.attn.context.bwd": b * 4 * s * s * e}
    # The last forward op's backward starts the backward pass (the loss is left out).
    assert into["L1.mlp.residual.bwd"] == {"L1.mlp.residual": 0}
    rows = {t["name"]: t for t in data["tasks"]}
    fwd, bwd_in, bwd_w = rows["L0.mlp.up"], rows["L0.mlp.up.bwd_input"], rows["L0.mlp.up.bwd_weight"]
    assert fwd["durations"] == bwd_in["durations"] == bwd_w["durations"]   # same FLOPs and bytes
    assert bwd_w["op"] == "MatMulGrad" and bwd_in["activation_memory"] == x
    assert bwd_w["activation_memory"] == fwd["weight_memory"] == h * 4 * h * e
    # Every other op's backward has twice its forward FLOPs (and bytes).
    counted = {t["name"]: t["durations"]["gpu"] for t in
               transformer(**SMALL, platform=flop_counter(), forward_backward=True)["tasks"]}
    for op in ("L0.attn.softmax", "L1.attn.scores", "L1.mlp.norm", "L0.mlp.act"):
        assert counted[op + ".bwd"] == pytest.approx(2 * counted[op], rel=1e-5)


def test_memory_fields_as_the_onnx_importer_writes_them():
    h, e = 64, 2
    data = transformer(**SMALL, platform=PLATFORM, static_memory=True, vocab=100)
    rows = {t["name"]: t for t in data["tasks"]}
    assert rows["L1.attn.qkv"]["weight_memory"] == rows["L1.attn.qkv"]["memory"] == 3 * h * h * e
    assert rows["L1.attn.qkv"]["activation_memory"] == 2 * 16 * 3 * h * e
    assert rows["L0.attn.norm"]["weight_memory"] == 2 * h * e              # scale and shift
    assert rows["embed"]["weight_memory"] == rows["lm_head"]["weight_memory"] == 100 * h * e
    assert rows["L0.attn.softmax"]["weight_memory"] == 0
    rms = transformer(**SMALL, platform=PLATFORM, norm="rms", kv_heads=1, mlp="swiglu", ffn=96)
    rows = {t["name"]: t for t in rms["tasks"]}
    assert rows["L0.attn.norm"]["weight_memory"] == h * e
    assert rows["L0.attn.qkv"]["weight_memory"] == h * (4 + 2) * 16 * e    # 4 query heads, 1 K/V head
    assert rows["L0.mlp.up"]["weight_memory"] == h * 2 * 96 * e
    assert rows["L0.mlp.act"]["op"] == "SwiGLU"


def test_every_task_placeable_and_unsupported_ops_respected():
    devices = [{"name": "gpu", "peak_flops": 1e13, "memory_bandwidth": 1e12},
               {"name": "npu", "peak_flops": 1e14, "memory_bandwidth": 1e12, "unsupported_ops": ["Softmax"]}]
    data = transformer(**SMALL, platform={"devices": devices, "links": [
        {"src": "gpu", "dst": "npu", "bandwidth": 1e10}]}, forward_backward=True)
    for t in data["tasks"]:
        assert t["durations"] and set(t["durations"]) <= {"gpu", "npu"}
        assert set(t["durations"]) == ({"gpu"} if "softmax" in t["name"] else {"gpu", "npu"})
    only = {"devices": [devices[1]]}
    with pytest.raises(ProblemError, match="task 'L0.attn.softmax': .*'Softmax'.* can run nowhere"):
        transformer(**SMALL, platform=only)


def test_cli_generates_a_problem_heft_solves_and_validates(tmp_path):
    out, schedule = tmp_path / "t.json", tmp_path / "s.json"
    argv = ["generate", "transformer", "--layers", "2", "--hidden", "64", "--heads", "4", "--seq", "16",
            "--batch", "4", "--forward-backward", "--micro-batches", "2", "--vocab", "50",
            "--platform", PLATFORM, "-o", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    assert len(data["tasks"]) == expected_size(2, 50, True, copies=2)[0]
    assert main(["solve", str(out), "-m", "heft", "-o", str(schedule)]) == 0
    problem = Problem.load(out)
    Schedule.load(schedule).validate(problem)
    assert main(["validate", str(out), str(schedule)]) == 0


@pytest.mark.parametrize("change,flag", [
    ({"--heads": "6"}, "--heads: 6 does not divide --hidden 64"),
    ({"--layers": "0"}, "--layers: needs an integer >= 1, got 0"),
    ({"--hidden": "-64"}, "--hidden: needs an integer >= 1, got -64"),
    ({"--seq": None}, "--seq: needed (an integer >= 1)"),
    ({"--batch": "3", "--micro-batches": "2"}, "--micro-batches: 2 does not divide --batch 3"),
    ({"--kv-heads": "3"}, "--kv-heads: 3 does not divide --heads 4"),
    ({"--dtype": "0"}, "--dtype: needs an integer >= 1, got 0"),
    ({"--platform": None}, "--platform: needed"),
    ({"--platform": "missing.yaml"}, "missing.yaml"),
    ({"--layers": str(10 ** 9)}, "--layers 1000000000: 28,000,000,000 tasks"),
])
def test_bad_input_is_one_line_naming_the_flag_and_writes_nothing(tmp_path, capsys, change, flag):
    out = tmp_path / "t.json"
    flags = {"--layers": "2", "--hidden": "64", "--heads": "4", "--seq": "16", "--batch": "2",
             "--platform": PLATFORM, **change}
    argv = ["generate", "transformer", "--forward-backward", "-o", str(out)]
    for key, value in flags.items():
        argv += [] if value is None else [key, value]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("schedkit: error: ") and flag in err
    assert "Traceback" not in err and not out.exists()
