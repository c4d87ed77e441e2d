"""A tiny ONNX model with known outputs, its schedules, and the onnx wheel's light models."""

import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F = TensorProto.FLOAT
#: Task names of :func:`tiny_model`, in model order (``w2`` is folded into a weight).
TASKS = ["a", "b", "c", "d", "e"]


def tiny_model(path):
    """x (1,4) -> a: MatMul W -> h; b: Relu h; c: Tanh h; d: Add -> s; e: Mul s, w2 -> y.

    ``w2`` is made by ``ConstantOfShape`` (0.5), as the light models make their weights:
    y = 0.5 * (relu(x W) + tanh(x W)).
    """
    weight = ((np.arange(16, dtype=np.float32) * 5 % 16).reshape(4, 4) - 7.5) / 4  # h of both signs
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="a"),
             helper.make_node("Relu", ["h"], ["r"], name="b"),
             helper.make_node("Tanh", ["h"], ["n"], name="c"),
             helper.make_node("Add", ["r", "n"], ["s"], name="d"),
             helper.make_node("ConstantOfShape", ["w2_shape"], ["w2"], name="w2",
                              value=helper.make_tensor("v", F, [1], [0.5])),
             helper.make_node("Mul", ["s", "w2"], ["y"], name="e")]
    inits = [numpy_helper.from_array(weight, "W"),
             numpy_helper.from_array(np.array([1, 4], dtype=np.int64), "w2_shape")]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", F, [1, 4])],
                              [helper.make_tensor_value_info("y", F, [1, 4])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)

    def expected(x):
        h = x @ weight
        return 0.5 * (np.maximum(h, 0) + np.tanh(h))
    return expected


def schedule(rows, problem="tiny"):
    """A schedule file's data: rows ``(task, device, start, end)``."""
    return {"format": "schedkit-schedule/v1", "problem": problem, "method": "manual", "status": "heuristic",
            "tasks": [{"task": t, "device": d, "start": s, "end": e} for t, d, s, e in rows]}


#: Two workers: a and b on cpu0, c on cpu1, d and e back on cpu0.
TWO_WORKERS = [("a", "cpu0", 0, 1), ("b", "cpu0", 1, 2), ("c", "cpu1", 1, 2), ("d", "cpu0", 2, 3),
               ("e", "cpu0", 3, 4)]


def light(name):
    """Path of one of the onnx wheel's light models (weights made by ConstantOfShape)."""
    import onnx

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{name}.onnx")
