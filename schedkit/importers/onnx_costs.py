"""FLOPs and bytes moved per ONNX operator: the cost rules of the ONNX importer.

A rule is a pure function of an :class:`OpCall` (the operator type, its attributes and the
shapes and element sizes of its inputs and outputs) that returns the floating-point
operations of one execution. The bytes moved are, for every operator, the bytes of all its
inputs (activations and weights) plus those of its outputs, except for *views* (``Reshape``,
``Flatten``, ``Squeeze``, ...), which move nothing. An operator without a rule costs its bytes
moved only; :func:`op_cost` says so, so that the importer can list those operators in a
warning. Nothing here imports ``onnx``: the rules are tested on plain shapes.

Conventions (the usual roofline counting): a multiply-add is 2 FLOPs; element-wise
arithmetic is 1 FLOP per output element, transcendental functions (``Exp``, ``Tanh``,
``Erf``, ...) 4; a normalisation about 5 per element (mean, variance, scale, shift);
``Softmax`` 5 per element (max, subtract, exp, sum, divide).

Examples
--------
>>> conv = OpCall("Conv", {}, [((1, 3, 224, 224), 4), ((64, 3, 7, 7), 4)], [((1, 64, 112, 112), 4)])
>>> cost = op_cost(conv)
>>> cost.flops == 2 * 64 * 112 * 112 * 3 * 7 * 7, cost.known
(True, True)
>>> op_cost(OpCall("Reshape", {}, [((1, 2048, 1, 1), 4), ((2,), 8)], [((1, 2048), 4)])).bytes
0
>>> op_cost(OpCall("MyCustomOp", {}, [((10,), 4)], [((10,), 4)]))
OpCost(flops=0, bytes=80, known=False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["OpCall", "OpCost", "op_cost", "OP_FLOPS", "VIEW_OPS", "numel"]

Shape = tuple[int, ...]


@dataclass(frozen=True)
class OpCall:
    """One operator call with static shapes.

    Attributes
    ----------
    op : str
        The ONNX operator type (``"Conv"``).
    attrs : dict
        Its attributes as Python values (``{"group": 2}``).
    inputs, outputs : list of (shape, itemsize)
        Per input and output tensor, its shape and the bytes of one element; an absent
        optional input is left out (the rules look inputs up by position only where the
        ONNX operator fixes them).
    """

    op: str
    attrs: dict[str, Any]
    inputs: list[tuple[Shape, int]]
    outputs: list[tuple[Shape, int]]

    def shape(self, k: int) -> Shape:
        """Shape of input ``k``."""
        return self.inputs[k][0]

    @property
    def out(self) -> Shape:
        """Shape of the first output."""
        return self.outputs[0][0]


@dataclass(frozen=True)
class OpCost:
    """FLOPs and bytes moved of one call; ``known`` is False when no rule covers the operator."""

    flops: int
    bytes: int
    known: bool


def numel(shape: Shape) -> int:
    """Number of elements of a tensor of ``shape`` (1 for a scalar).

    Examples
    --------
    >>> numel((2, 3, 4)), numel(())
    (24, 1)
    """
    return math.prod(shape)


def _out_elements(call: OpCall) -> int:
    return sum(numel(shape) for shape, _ in call.outputs)


def _in_elements(call: OpCall, k: int = 0) -> int:
    return numel(call.shape(k)) if len(call.inputs) > k else 0


def _per_output(factor: float) -> Callable[[OpCall], int]:
    return lambda call: int(factor * _out_elements(call))


def _per_input(factor: float) -> Callable[[OpCall], int]:
    return lambda call: int(factor * _in_elements(call))


def _conv(call: OpCall) -> int:
    # Output element: a dot product over (input channels / group) x kernel; W is (M, C/g, k...).
    weight = call.shape(1)
    macs = numel(call.out) * numel(weight[1:])
    bias = numel(call.out) if len(call.inputs) > 2 else 0
    return 2 * macs + bias


def _conv_transpose(call: OpCall) -> int:
    # Every input element scatters into (M/g) x kernel outputs; W is (C, M/g, k...).
    weight = call.shape(1)
    macs = numel(call.shape(0)) * numel(weight[1:])
    bias = numel(call.out) if len(call.inputs) > 2 else 0
    return 2 * macs + bias


def _gemm(call: OpCall) -> int:
    a = call.shape(0)
    k = a[0] if call.attrs.get("transA", 0) else a[-1]
    extra = numel(call.out) if len(call.inputs) > 2 else 0
    return 2 * numel(call.out) * k + extra


def _matmul(call: OpCall) -> int:
    # Batched (broadcast) matrix product: each output element is a dot product of length K.
    return 2 * numel(call.out) * call.shape(0)[-1]


def _pool(call: OpCall) -> int:
    kernel = call.attrs.get("kernel_shape") or [1]
    return numel(call.out) * numel(tuple(kernel))


def _lrn(call: OpCall) -> int:
    return numel(call.out) * (int(call.attrs.get("size", 1)) + 3)


def _sum_like(call: OpCall) -> int:
    # n inputs combined into one output: n - 1 operations per element (Sum, Max, Min, Mean).
    return max(1, len(call.inputs) - 1) * numel(call.out)


def _einsum(call: OpCall) -> int:
    equation = str(call.attrs.get("equation", "")).replace(" ", "")
    lhs = equation.split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for term, (shape, _) in zip(lhs, call.inputs):
        letters = [c for c in term if c.isalpha()]
        if "..." in term:
            return 2 * numel(call.out)  # broadcast dims: no exact count, the output's size
        for letter, dim in zip(letters, shape):
            sizes[letter] = max(sizes.get(letter, 1), dim)
    # One multiply-add per point of the full index space (every letter, summed or kept).
    return 2 * numel(tuple(sizes.values()))


def _attention(call: OpCall) -> int:
    # ONNX Attention (opset 23) and com.microsoft style: Q K^T, softmax, times V.
    q, k = call.shape(0), call.shape(1)
    kv_len = k[-2] if len(k) == 4 else k[1]
    scores = numel(q[:-1]) * kv_len if len(q) == 4 else \
        q[0] * q[1] * kv_len * int(call.attrs.get("q_num_heads", call.attrs.get("num_heads", 1)))
    return 2 * numel(q) * kv_len + 2 * numel(call.out) * kv_len + 5 * scores


_UNARY_CHEAP = ["Relu", "LeakyRelu", "PRelu", "Neg", "Abs", "Sign", "Ceil", "Floor", "Round",
                "Clip", "Not", "Reciprocal", "ThresholdedRelu", "Shrink", "HardSigmoid",
                "HardSwish", "Cast", "CastLike", "IsNaN", "IsInf"]
_UNARY_COSTLY = ["Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Sin", "Cos", "Tan", "Asin",
                 "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
                 "Softsign", "Elu", "Selu", "Celu", "Mish", "Gelu", "FastGelu", "BiasGelu",
                 "QuickGelu"]
_BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Greater",
           "GreaterOrEqual", "Less", "LessOrEqual", "Where", "BitShift", "BiasAdd"]
_REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
           "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "CumSum"]
_MOVES = ["Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
          "Scatter", "ScatterElements", "ScatterND", "Pad", "Tile", "Expand", "DepthToSpace",
          "SpaceToDepth", "Shape", "Size", "Trilu", "OneHot", "NonZero", "TopK"]

#: Operator type -> FLOP rule. Operators in :data:`VIEW_OPS` need none.
OP_FLOPS: dict[str, Callable[[OpCall], int]] = {
    "Conv": _conv, "ConvInteger": _conv, "QLinearConv": _conv, "FusedConv": _conv,
    "ConvTranspose": _conv_transpose,
    "Gemm": _gemm, "FusedGemm": _gemm,
    "MatMul": _matmul, "MatMulInteger": _matmul, "QLinearMatMul": _matmul, "FusedMatMul": _matmul,
    "Einsum": _einsum, "Attention": _attention, "MultiHeadAttention": _attention,
    "MaxPool": _pool, "AveragePool": _pool, "LpPool": _pool, "MaxRoiPool": _pool,
    "BatchNormalization": _per_output(2), "LRN": _lrn,
    "LayerNormalization": _per_output(5), "SimplifiedLayerNormalization": _per_output(4),
    "SkipLayerNormalization": _per_output(6), "InstanceNormalization": _per_output(5),
    "GroupNormalization": _per_output(5), "MeanVarianceNormalization": _per_output(5),
    "LpNormalization": _per_output(3), "RMSNormalization": _per_output(4),
    "Softmax": _per_output(5), "LogSoftmax": _per_output(6), "Hardmax": _per_output(2),
    "Sum": _sum_like, "Max": _sum_like, "Min": _sum_like, "Mean": _sum_like,
    "Resize": _per_output(4), "Upsample": _per_output(4),
    "QuantizeLinear": _per_output(2), "DequantizeLinear": _per_output(2),
}
OP_FLOPS.update({op: _per_output(1) for op in _UNARY_CHEAP + _BINARY})
OP_FLOPS.update({op: _per_output(4) for op in _UNARY_COSTLY})
OP_FLOPS.update({op: _per_input(1) for op in _REDUCE})
OP_FLOPS.update({op: (lambda call: 0) for op in _MOVES})

#: Operators that only relabel a tensor's shape: no FLOPs and no bytes moved.
VIEW_OPS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"})


def op_cost(call: OpCall) -> OpCost:
    """FLOPs and bytes moved of one operator call (see the module's conventions).

    Parameters
    ----------
    call : OpCall
        The operator with static shapes.

    Returns
    -------
    OpCost
        ``known`` is False when :data:`OP_FLOPS` has no rule for ``call.op``: the
        FLOPs are then 0 and the cost is the bytes moved alone.

    Examples
    --------
    >>> gemm = OpCall("Gemm", {"transB": 1}, [((1, 9216), 4), ((4096, 9216), 4), ((4096,), 4)],
    ...               [((1, 4096), 4)])
    >>> c = op_cost(gemm)
    >>> c.flops == 2 * 4096 * 9216 + 4096, c.bytes == 4 * (9216 + 4096 * 9216 + 4096 + 4096)
    (True, True)
    """
    if call.op in VIEW_OPS:
        return OpCost(0, 0, True)
    moved = sum(numel(shape) * size for shape, size in call.inputs + call.outputs)
    rule = OP_FLOPS.get(call.op)
    if rule is None:
        return OpCost(0, moved, False)
    return OpCost(int(rule(call)), moved, True)
