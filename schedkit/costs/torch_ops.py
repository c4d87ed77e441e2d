"""PyTorch operators onto an ONNX model's nodes: the aten -> ONNX map and the matching.

A PyTorch profile names ``aten::`` operators; a cost table for ``convert onnx --costs``
names the ONNX graph's nodes. :func:`match_calls` walks a trace's top-level operator calls
in execution order and gives each one an ONNX node of a corresponding type
(:data:`TORCH_TO_ONNX`) whose producers are already matched: a topological order of the
model that replays the trace. Where several nodes are ready (the two branches of a residual
block read the same tensor), the input shapes the profiler recorded (``record_shapes``)
choose the node; a node that is ready but has other shapes is never taken. The nodes and
their shapes, FLOPs and bytes come from the ONNX importer itself (:func:`model_nodes`), so
that names and costs are those of ``schedkit convert onnx``.

Operators that only allocate or relabel memory (:data:`BOOKKEEPING`) have no ONNX node:
their time goes to the next matched call, as the eager loop pays it before that call (to
the last one after the last call). A
model node the trace never ran (torchvision's ResNet-50 leaves the final ``Softmax`` to the
loss) is reported, not an error; a traced operator that finds no node is.

Examples
--------
>>> nodes = [ModelNode("c", "Conv", ((1, 3, 8, 8), (4, 3, 3, 3)), ()),
...          ModelNode("r", "Relu", ((1, 4, 6, 6),), ("c",))]
>>> calls = [("aten::conv2d", ((1, 3, 8, 8), (4, 3, 3, 3))), ("aten::relu_", ((1, 4, 6, 6),))]
>>> match_calls(calls, nodes, "net.onnx").pairs
[(0, 'c', 0), (1, 'r', 0)]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError

__all__ = ["TORCH_TO_ONNX", "BOOKKEEPING", "ModelNode", "Match", "onnx_types", "model_nodes",
           "match_calls"]

#: ``aten`` operator (without the ``aten::`` prefix, in-place ``_`` dropped) -> the ONNX
#: operator types that export may turn it into.
TORCH_TO_ONNX: dict[str, tuple[str, ...]] = {
    "conv1d": ("Conv",), "conv2d": ("Conv",), "conv3d": ("Conv",), "convolution": ("Conv",),
    "_convolution": ("Conv",), "conv_transpose2d": ("ConvTranspose",),
    "batch_norm": ("BatchNormalization",), "instance_norm": ("InstanceNormalization",),
    "layer_norm": ("LayerNormalization",), "group_norm": ("GroupNormalization",),
    "relu": ("Relu",), "leaky_relu": ("LeakyRelu",), "sigmoid": ("Sigmoid",), "tanh": ("Tanh",),
    "gelu": ("Gelu",), "silu": ("Mul",), "hardtanh": ("Clip",), "clamp": ("Clip",),
    "elu": ("Elu",), "softplus": ("Softplus",), "hardswish": ("HardSwish",),
    "max_pool1d": ("MaxPool",), "max_pool2d": ("MaxPool",), "max_pool3d": ("MaxPool",),
    "avg_pool1d": ("AveragePool",), "avg_pool2d": ("AveragePool",), "avg_pool3d": ("AveragePool",),
    # A global pool exports as GlobalAveragePool, an AveragePool over the whole map, or a mean.
    "adaptive_avg_pool2d": ("GlobalAveragePool", "AveragePool", "ReduceMean"),
    "adaptive_max_pool2d": ("GlobalMaxPool", "MaxPool"),
    "add": ("Add", "Sum"), "sub": ("Sub",), "mul": ("Mul",), "div": ("Div",), "pow": ("Pow",),
    "exp": ("Exp",), "sqrt": ("Sqrt",), "rsqrt": ("Sqrt",), "neg": ("Neg",),
    "flatten": ("Flatten", "Reshape"), "view": ("Reshape", "Flatten"),
    "reshape": ("Reshape", "Flatten"), "squeeze": ("Squeeze",), "unsqueeze": ("Unsqueeze",),
    "linear": ("Gemm", "MatMul"), "addmm": ("Gemm",), "mm": ("MatMul", "Gemm"),
    "matmul": ("MatMul", "Gemm"), "bmm": ("MatMul",), "einsum": ("Einsum",),
    "softmax": ("Softmax",), "_softmax": ("Softmax",), "log_softmax": ("LogSoftmax",),
    "cat": ("Concat",), "transpose": ("Transpose",), "permute": ("Transpose",),
    "dropout": ("Dropout", "Identity"), "embedding": ("Gather",), "mean": ("ReduceMean",),
    "sum": ("ReduceSum",), "pad": ("Pad",), "constant_pad_nd": ("Pad",),
    "upsample_nearest2d": ("Resize", "Upsample"), "upsample_bilinear2d": ("Resize", "Upsample"),
    "scaled_dot_product_attention": ("Attention",),
}

#: Operators that allocate, copy into place or relabel without an ONNX node of their own.
BOOKKEEPING = frozenset({"empty", "empty_strided", "empty_like", "detach", "detach_", "alias",
                         "lift_fresh", "contiguous", "resolve_conj", "resolve_neg"})

#: Argument order of an aten operator where it differs from its ONNX node's input order:
#: ``addmm(bias, a, b)`` is ``Gemm(a, b, bias)``.
_ARGUMENT_ORDER = {"addmm": (1, 2, 0)}

Shape = tuple[int, ...]


def _base(name: str) -> str:
    base = name.split("::", 1)[-1]
    return base[:-1] if base.endswith("_") and not base.startswith("_") else base


def onnx_types(name: str) -> tuple[str, ...]:
    """The ONNX operator types a traced operator may stand for (``()``: none known).

    Examples
    --------
    >>> onnx_types("aten::relu_"), onnx_types("aten::frobnicate")
    (('Relu',), ())
    """
    return TORCH_TO_ONNX.get(_base(name), ())


@dataclass(frozen=True)
class ModelNode:
    """One operator of an ONNX model as ``convert onnx`` sees it.

    Attributes
    ----------
    name, op : str
        Task name and ONNX operator type.
    inputs : tuple
        Shape of each input tensor (``()`` for an absent or unknown one).
    producers : tuple of str
        The operators whose outputs it reads.
    flops, bytes, output_bytes : int
        The importer's cost rules (:func:`~schedkit.importers.onnx_costs.op_cost`) and the
        bytes of its outputs.
    """

    name: str
    op: str
    inputs: tuple[Shape, ...]
    producers: tuple[str, ...]
    flops: int = 0
    bytes: int = 0
    output_bytes: int = 0


def model_nodes(path: str | Path, shape: Any = None) -> list[ModelNode]:
    """The operators of an ONNX model with their shapes and costs, in the model's order.

    The importer's own steps (load, ``--shape``, shape inference, constant folding, task
    names, cost rules), so that names, FLOPs and bytes are those of ``schedkit convert onnx``.

    Parameters
    ----------
    path : str or Path
        The ONNX model.
    shape : str, list of str or dict, optional
        Shapes for inputs with symbolic dimensions (``--shape``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from onnx import TensorProto, helper, save
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    >>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.onnx"
    >>> save(helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"],
    ...      name="act")], "g", [x], [y])), path)
    >>> model_nodes(path)
    [ModelNode(name='act', op='Relu', inputs=((2, 8),), producers=(), flops=16, bytes=128, output_bytes=64)]
    """
    from schedkit.importers import onnx as importer
    from schedkit.importers.base import need
    from schedkit.importers.onnx_graph import Node, operator_graph, unique_names
    from schedkit.importers.onnx_model import inferred_model, outer_references
    from schedkit.problem.reading import file_path

    path = file_path(path)
    costs, prepared = importer.operator_costs(path, shape)
    # The importer's rows hold no input shapes or producers: the same graph, read once more
    # (the inferred model, task names and folding of convert onnx) gives them.
    onnx = need("onnx", importer="onnx", extra="onnx")
    graph = inferred_model(onnx, prepared, path).graph
    table = importer._tensor_table(onnx, graph)
    names = unique_names([(n.name, n.op_type, list(n.output)) for n in graph.node])
    ops = operator_graph([Node(task, n.op_type, list(n.input) + outer_references(onnx, n),
                               list(n.output)) for task, n in zip(names, graph.node)],
                         constants={t.name for t in graph.initializer})
    inputs = {node.name: node.inputs for node in ops.operators}
    result = []
    for row in costs:
        shapes = tuple((table.get(t) or ((), 0))[0] if t else () for t in inputs[row.name])
        producers = tuple(dict.fromkeys(ops.producer[t] for t in inputs[row.name]
                                        if ops.producer.get(t, row.name) != row.name))
        result.append(ModelNode(row.name, row.op, shapes, producers, row.flops, row.bytes,
                                row.output_bytes))
    return result


@dataclass(frozen=True)
class Match:
    """Traced calls matched onto model nodes.

    Attributes
    ----------
    pairs : list of (int, str, int)
        Per matched call: its index in the calls given, the node's name and the iteration
        (0 for the first pass over the model, 1 for the next, ...).
    folded : dict
        Index of a bookkeeping call -> index of the matched call that takes its time.
    unmatched_nodes : list of str
        Model nodes no call matched in the first iteration.
    iterations : int
        Passes over the model the trace holds.
    """

    pairs: list[tuple[int, str, int]]
    folded: dict[int, int]
    unmatched_nodes: list[str]
    iterations: int


def _shapes_agree(traced: tuple, node: tuple, order: tuple[int, ...] | None) -> bool:
    if order is not None:
        traced = tuple(traced[k] for k in order if k < len(traced))
    for mine, theirs in zip(traced, node):
        # Unrecorded or scalar arguments say nothing; a 2-D weight may be stored transposed.
        if mine and theirs and tuple(mine) != tuple(theirs) and \
                not (len(mine) == 2 and tuple(mine) == tuple(theirs)[::-1]):
            return False
    return True


def match_calls(calls: list[tuple[str, tuple]], nodes: list[ModelNode],
                source: str = "model") -> Match:
    """Give each traced call a model node (see the module documentation).

    Parameters
    ----------
    calls : list of (name, input shapes)
        The trace's top-level operator calls in execution order (shapes may be empty).
    nodes : list of ModelNode
        The model's operators (:func:`model_nodes`).
    source : str
        How an error names the model.

    Raises
    ------
    ProblemError
        One line naming how many calls found no node, and the first few.

    Examples
    --------
    >>> match_calls([("aten::lstm", ())], [ModelNode("r", "Relu", (), ())], "net.onnx")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: net.onnx: 1 of 1 traced operator(s) match no node of the model: aten::lstm (call 0)
    """
    pairs: list[tuple[int, str, int]] = []
    folded: dict[int, int] = {}
    waiting: list[int] = []
    missing: list[str] = []
    done: set[str] = set()
    first_unmatched: list[str] | None = None
    iteration = 0

    def ready(name: str, shapes: tuple, taken: set[str]) -> ModelNode | None:
        types, order = onnx_types(name), _ARGUMENT_ORDER.get(_base(name))
        for node in nodes:
            if node.name not in taken and node.op in types and \
                    all(p in taken for p in node.producers) and \
                    _shapes_agree(shapes, node.inputs, order):
                return node
        return None

    for k, (name, shapes) in enumerate(calls):
        if _base(name) in BOOKKEEPING:
            waiting.append(k)
            continue
        node = ready(name, shapes, done)
        # A call that fits nothing left but starts the model afresh begins the next iteration.
        if node is None and len(done) * 2 >= len(nodes):
            fresh = ready(name, shapes, set())
            if fresh is not None:
                if first_unmatched is None:
                    first_unmatched = [n.name for n in nodes if n.name not in done]
                iteration, done, node = iteration + 1, set(), fresh
        if node is None:
            missing.append(f"{name} (call {k})")
            continue
        done.add(node.name)
        pairs.append((k, node.name, iteration))
        folded.update({w: k for w in waiting})
        waiting = []
    if missing:
        shown = ", ".join(missing[:3]) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
        raise ProblemError(f"{source}: {len(missing)} of {len(calls)} traced operator(s) match no "
                           f"node of the model: {shown}")
    if first_unmatched is None:
        first_unmatched = [n.name for n in nodes if n.name not in done]
    if waiting and pairs:  # bookkeeping after the last operator: the last one pays for it
        folded.update({w: pairs[-1][0] for w in waiting})
    return Match(pairs, folded, first_unmatched, iteration + 1)
