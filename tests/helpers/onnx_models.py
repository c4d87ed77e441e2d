"""Small ONNX graphs built with ``onnx.helper`` for the importer's tests, and a platform whose
durations are the FLOPs (or the bytes) themselves, so that costs can be checked by hand."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT

#: A device at 1 FLOP per second with unlimited memory bandwidth: duration (s) = FLOPs.
FLOP_PLATFORM = {"time_unit": "s",
                 "devices": [{"name": "flops", "peak_flops": 1.0, "memory_bandwidth": 1e30}]}
#: A device at 1 byte per second with unlimited FLOPs: duration (s) = bytes moved.
BYTE_PLATFORM = {"time_unit": "s",
                 "devices": [{"name": "bytes", "peak_flops": 1e30, "memory_bandwidth": 1.0}]}


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def conv_bn_relu():
    """x (1,3,8,8) -> Conv 4x3x3x3 pad 1 (+bias) -> BatchNormalization -> Relu."""
    x = helper.make_tensor_value_info("x", F, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", F, [1, 4, 8, 8])
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "s", "bias", "m", "v"], ["n"], name="bn"),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    inits = [weight("w", (4, 3, 3, 3)), weight("b", (4,)), weight("s", (4,)), weight("bias", (4,)),
             weight("m", (4,)), weight("v", (4,))]
    return model(nodes, [x], [y], inits)


def residual_block():
    """x -> conv1 -> relu1 -> conv2; add(x, conv2) -> relu2 (a ResNet basic block, 8 channels)."""
    x = helper.make_tensor_value_info("x", F, [1, 8, 4, 4])
    y = helper.make_tensor_value_info("y", F, [1, 8, 4, 4])
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["b"], name="relu1"),
             helper.make_node("Conv", ["b", "w2"], ["c"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["x", "c"], ["d"], name="add"),
             helper.make_node("Relu", ["d"], ["y"], name="relu2")]
    return model(nodes, [x], [y], [weight("w1", (8, 8, 3, 3)), weight("w2", (8, 8, 3, 3))])


def attention_block(seq=16, dim=32):
    """Single-head attention: Q, K, V projections, Q K^T / sqrt(d) (a Constant), softmax, times V.

    The scale comes from a ``Constant`` node and the key weights from a ``ConstantOfShape``
    of a shape initializer, as in the weight-stripped models: both fold into weights.
    """
    x = helper.make_tensor_value_info("x", F, [1, seq, dim])
    y = helper.make_tensor_value_info("y", F, [1, seq, dim])
    shape = numpy_helper.from_array(np.array([dim, dim], dtype=np.int64), "wk_shape")
    nodes = [helper.make_node("Constant", [], ["scale"], name="scale",
                              value=numpy_helper.from_array(np.array(dim ** 0.5, dtype=np.float32))),
             helper.make_node("ConstantOfShape", ["wk_shape"], ["wk"], name="wk_fill",
                              value=helper.make_tensor("v", F, [1], [0.02])),
             helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
             helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
             helper.make_node("MatMul", ["x", "wv"], ["v"], name="v_proj"),
             helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
             helper.make_node("Div", ["s", "scale"], ["s2"], name="scaled"),
             helper.make_node("Softmax", ["s2"], ["p"], name="softmax", axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"], name="mix")]
    return model(nodes, [x], [y], [shape, weight("wq", (dim, dim)), weight("wv", (dim, dim))])


def dynamic_mlp():
    """x of shape (batch, 64) with a symbolic batch: Relu."""
    x = helper.make_tensor_value_info("x", F, ["batch", 64])
    y = helper.make_tensor_value_info("y", F, ["batch", 64])
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [x], [y])


def custom_op():
    """Relu -> a custom-domain operator (no cost rule, shape unknown) -> Relu."""
    x = helper.make_tensor_value_info("x", F, [1, 10])
    y = helper.make_tensor_value_info("y", F, [1, 10])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r1"),
             helper.make_node("Frobnicate", ["a"], ["b"], name="frob", domain="acme"),
             helper.make_node("Relu", ["b"], ["y"], name="r2")]
    graph = helper.make_graph(nodes, "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("acme", 1)])
