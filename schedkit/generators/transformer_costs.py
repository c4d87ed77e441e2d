"""Operators of a decoder-only transformer layer, with their shapes, FLOPs and bytes.

The counts come from the ONNX importer's cost rules (:func:`~schedkit.importers.onnx_costs.op_cost`
on an :class:`~schedkit.importers.onnx_costs.OpCall` per operator), so that a generated layer
costs what the same operators cost in ``convert onnx``: a multiply-add is 2 FLOPs, a
normalisation 5 (LayerNorm) or 4 (RMSNorm) per element, ``Softmax`` 5, ``Gelu`` 4; bytes moved
are the inputs (weights included) plus the outputs. The matrix products of one layer add up
to the textbook count ``24 B S H^2 + 4 B S^2 H`` (Narayanan et al., 2021) with ``ffn = 4 H``
and as many key/value heads as heads (:func:`textbook_flops`).

Shapes (``b`` batch, ``s`` sequence, ``h`` hidden, ``a`` heads, ``g`` key/value heads, ``d =
h / a``, ``f`` FFN size, ``e`` bytes per element): QKV ``(b, s, h) x (h, (a + 2g) d)``; scores
``Q (b, a, s, d) x K^T (b, g, d, s)``, one score per (query, key): the causal mask is not
exploited (kernels that skip the masked half do about half the work); attention-weighted
values ``P (b, a, s, s) x V (b, g, s, d)``; MLP up ``(b, s, h) x (h, f)`` (``swiglu``: ``(h,
2f)``, the gate and the up projection as one product) and down ``(b, s, f) x (f, h)``. Biases
are left out. ``swiglu``'s activation (SiLU of the gate times the up half) costs 6 FLOPs per
output element (a sigmoid, 4, and two products).

Examples
--------
>>> ops = layer_ops(LayerShape(batch=1, seq=8, hidden=16, heads=2))
>>> [o.key for o in ops][:4]
['attn.norm', 'attn.qkv', 'attn.scores', 'attn.softmax']
>>> sum(o.flops for o in ops if o.op == "MatMul") == textbook_flops(1, 8, 16)
True
"""

from __future__ import annotations

from dataclasses import dataclass

from schedkit.importers.onnx_costs import OpCall, numel, op_cost

__all__ = ["LayerShape", "Operator", "layer_ops", "embedding_op", "head_ops", "edge_bytes", "textbook_flops",
           "LAYER_EDGES", "NORMS", "MLPS"]

#: Normalisation operators by ``norm`` name (the ONNX operator types the cost rules know).
NORMS = {"layer": "LayerNormalization", "rms": "RMSNormalization"}
#: MLP kinds: ``gelu`` (two matrices, GPT) and ``swiglu`` (three, LLaMA).
MLPS = ("gelu", "swiglu")

#: Data edges inside one layer, (producer, consumer), by operator key; with the two edges into a
#: layer (its input to ``attn.norm`` and to ``attn.residual``), 15 per layer.
LAYER_EDGES = (("attn.norm", "attn.qkv"), ("attn.qkv", "attn.scores"), ("attn.qkv", "attn.context"),
               ("attn.scores", "attn.softmax"), ("attn.softmax", "attn.context"),
               ("attn.context", "attn.out"), ("attn.out", "attn.residual"),
               ("attn.residual", "mlp.norm"), ("attn.residual", "mlp.residual"),
               ("mlp.norm", "mlp.up"), ("mlp.up", "mlp.act"), ("mlp.act", "mlp.down"),
               ("mlp.down", "mlp.residual"))


@dataclass(frozen=True)
class LayerShape:
    """Sizes of one (micro-)batch through the model.

    Attributes
    ----------
    batch, seq, hidden, heads : int
        Sequences, tokens per sequence, model width and attention heads.
    kv_heads : int or None
        Key/value heads (grouped-query attention); ``None``: as many as ``heads``.
    ffn : int or None
        Inner size of the MLP; ``None``: ``4 * hidden``.
    dtype : int
        Bytes per element (2: FP16/BF16).
    norm, mlp : str
        A key of :data:`NORMS`; one of :data:`MLPS`.
    """

    batch: int
    seq: int
    hidden: int
    heads: int
    kv_heads: int | None = None
    ffn: int | None = None
    dtype: int = 2
    norm: str = "layer"
    mlp: str = "gelu"


@dataclass(frozen=True)
class Operator:
    """One operator: its cost, and what its backward reads and writes.

    Attributes
    ----------
    key, op : str
        Name inside its layer (``attn.qkv``) and ONNX operator type (``MatMul``).
    flops, bytes : int
        Forward FLOPs and bytes moved.
    weight_bytes : int
        Bytes of its parameters.
    input_bytes, output_bytes : int
        Bytes of its activation inputs and of its outputs.
    saved_bytes : int
        Bytes of the forward tensors its backward reads (its inputs, or for ``Softmax`` its output).
    split : bool
        A product with a weight matrix: its backward is two operators, the input gradient and
        the weight gradient, as zero-bubble pipelines schedule them.
    """

    key: str
    op: str
    flops: int
    bytes: int
    weight_bytes: int
    input_bytes: int
    output_bytes: int
    saved_bytes: int
    split: bool = False


def _operator(key: str, op: str, inputs: list[tuple], outputs: list[tuple], weights: list[tuple],
              e: int, saved: str = "inputs", rows_read: tuple | None = None) -> Operator:
    """Cost one operator with the importer's rule; shapes in elements, all of ``e`` bytes."""
    call = OpCall(op, {}, [(s, e) for s in inputs + weights], [(s, e) for s in outputs])
    cost = op_cost(call)
    acts = sum(numel(s) for s in inputs) * e
    outs = sum(numel(s) for s in outputs) * e
    moved = cost.bytes
    if rows_read is not None:  # a lookup: the importer's rule would count its whole table as read
        moved = (numel(rows_read) + sum(numel(s) for s in outputs)) * e
    flops = cost.flops if cost.known else 6 * numel(outputs[0])  # (swiglu: see the module notes)
    return Operator(key, op, flops, moved, sum(numel(s) for s in weights) * e, acts, outs,
                    {"inputs": acts, "outputs": outs, "none": 0}[saved],
                    split=op == "MatMul" and bool(weights))


def _norm(key: str, shape: LayerShape) -> Operator:
    x, h = (shape.batch, shape.seq, shape.hidden), shape.hidden
    params = [(h,), (h,)] if shape.norm == "layer" else [(h,)]  # scale and shift / scale only
    return _operator(key, NORMS[shape.norm], [x], [x], params, shape.dtype)


def layer_ops(shape: LayerShape) -> list[Operator]:
    """The twelve operators of one decoder layer, in execution order.

    Examples
    --------
    >>> ops = layer_ops(LayerShape(batch=2, seq=4, hidden=8, heads=2, kv_heads=1, mlp="swiglu"))
    >>> [(o.key, o.flops) for o in ops if o.key in ("attn.qkv", "mlp.up", "mlp.act")]
    [('attn.qkv', 2048), ('mlp.up', 8192), ('mlp.act', 1536)]
    """
    b, s, h, a, e = shape.batch, shape.seq, shape.hidden, shape.heads, shape.dtype
    g = shape.kv_heads or a
    d, f = h // a, shape.ffn or 4 * h
    x = (b, s, h)
    up = 2 * f if shape.mlp == "swiglu" else f
    return [
        _norm("attn.norm", shape),
        _operator("attn.qkv", "MatMul", [x], [(b, s, (a + 2 * g) * d)], [(h, (a + 2 * g) * d)], e),
        _operator("attn.scores", "MatMul", [(b, a, s, d), (b, g, d, s)], [(b, a, s, s)], [], e),
        _operator("attn.softmax", "Softmax", [(b, a, s, s)], [(b, a, s, s)], [], e, saved="outputs"),
        _operator("attn.context", "MatMul", [(b, a, s, s), (b, g, s, d)], [(b, a, s, d)], [], e),
        _operator("attn.out", "MatMul", [(b, s, h)], [x], [(h, h)], e),
        _operator("attn.residual", "Add", [x, x], [x], [], e, saved="none"),
        _norm("mlp.norm", shape),
        _operator("mlp.up", "MatMul", [x], [(b, s, up)], [(h, up)], e),
        _operator("mlp.act", "Gelu" if shape.mlp == "gelu" else "SwiGLU", [(b, s, up)], [(b, s, f)], [], e),
        _operator("mlp.down", "MatMul", [(b, s, f)], [x], [(f, h)], e),
        _operator("mlp.residual", "Add", [x, x], [x], [], e, saved="none"),
    ]


def embedding_op(shape: LayerShape, vocab: int) -> Operator:
    """The token embedding: a lookup of ``b * s`` rows of a ``(vocab, hidden)`` table.

    It reads the ``b * s`` rows it gathers (not its whole table) and one id per token, counted
    as a ``dtype`` element (the ids' few bytes do not matter beside the rows).

    Examples
    --------
    >>> o = embedding_op(LayerShape(batch=1, seq=4, hidden=8, heads=2), vocab=100)
    >>> o.flops, o.bytes, o.weight_bytes
    (0, 136, 1600)
    """
    b, s, h, e = shape.batch, shape.seq, shape.hidden, shape.dtype
    return _operator("embed", "Gather", [(b, s)], [(b, s, h)], [(vocab, h)], e, saved="none",
                     rows_read=(b, s, h + 1))  # h elements of a row and its id per token


def head_ops(shape: LayerShape, vocab: int) -> list[Operator]:
    """The final norm and the LM head, ``(b, s, h) x (h, vocab)`` (the loss is left out).

    Examples
    --------
    >>> [(o.key, o.flops) for o in head_ops(LayerShape(batch=1, seq=4, hidden=8, heads=2), 10)]
    [('final_norm', 160), ('lm_head', 640)]
    """
    b, s, h, e = shape.batch, shape.seq, shape.hidden, shape.dtype
    return [_norm("final_norm", shape),
            _operator("lm_head", "MatMul", [(b, s, h)], [(b, s, vocab)], [(h, vocab)], e)]


def textbook_flops(batch: int, seq: int, hidden: int) -> int:
    """Forward FLOPs of the matrix products of one layer: ``24 B S H^2 + 4 B S^2 H``.

    Examples
    --------
    >>> round(textbook_flops(1, 2048, 12288) / 1e12, 2)   # one GPT-3 layer, one sequence (TFLOP)
    7.63
    """
    return 24 * batch * seq * hidden ** 2 + 4 * batch * seq ** 2 * hidden


def edge_bytes(shape: LayerShape, producer: Operator, consumer: str) -> int:
    """Bytes of the tensor ``producer`` sends to the operator keyed ``consumer``.

    The QKV product sends Q and K to the scores and V to the attention-weighted values;
    every other operator sends its whole output.

    Examples
    --------
    >>> shape = LayerShape(batch=1, seq=4, hidden=8, heads=2)
    >>> qkv = layer_ops(shape)[1]
    >>> qkv.output_bytes, edge_bytes(shape, qkv, "attn.scores"), edge_bytes(shape, qkv, "attn.context")
    (192, 128, 64)
    """
    if producer.key != "attn.qkv":
        return producer.output_bytes
    values = shape.batch * shape.seq * (shape.kv_heads or shape.heads) * \
        (shape.hidden // shape.heads) * shape.dtype
    return values if consumer == "attn.context" else producer.output_bytes - values
