"""The operator graph of a decoder-only transformer, timed on a devices file's rooflines.

:func:`transformer` writes ``schedkit/v1`` data: one task per operator, its FLOPs and bytes
from the shapes (:mod:`~schedkit.generators.transformer_costs`, the ONNX importer's cost rules)
and its duration on every device from the platform's roofline
(:meth:`~schedkit.importers.platform.Platform.duration`, as ``convert onnx`` times an ONNX
model), in the platform's ``time_unit``, with the platform's devices and links.

Tasks
    Per layer ``l`` (from 0): ``L{l}.attn.norm``, ``.attn.qkv``, ``.attn.scores`` (Q K^T),
    ``.attn.softmax``, ``.attn.context`` (attention-weighted values), ``.attn.out``,
    ``.attn.residual``, ``.mlp.norm``, ``.mlp.up``, ``.mlp.act``, ``.mlp.down``,
    ``.mlp.residual``: 12 per layer. With ``vocab``: ``embed`` first, ``final_norm`` and
    ``lm_head`` last (the loss is left out). Each task gives its ``op`` (ONNX operator type),
    its parameters as ``weight_memory`` and its outputs as ``activation_memory``, as
    ``convert onnx`` does (``static_memory``: the parameters as static ``memory`` too).
Edges
    The data flow, each edge the bytes of its tensor: a layer's input goes to its first norm and
    to its first residual add, QKV sends Q and K to the scores and V to the context, and so on:
    13 edges inside a layer and 2 into it, ``15 L - 2`` in all (``15 L + 2`` with ``vocab``).
Backward (``forward_backward``)
    Every product with a weight matrix gets an input gradient ``NAME.bwd_input`` and a weight
    gradient ``NAME.bwd_weight``, each with the forward's FLOPs and bytes; every other operator
    one ``NAME.bwd`` with twice its forward FLOPs and bytes (a norm's parameter gradient
    included). The backward of an operator needs the gradient of its output: an edge from the
    input-gradient task of each of its consumers (of the tensor's size); and what its forward
    left: an edge from its forward task (to ``bwd_input``: its weights; to the others: the
    activations the forward saved, its inputs, or for the softmax its output; none for an add).
    28 tasks and 51 edges per layer, ``28 L`` tasks and ``51 L - 4`` edges in all
    (``28 L + 7`` and ``51 L + 8`` with ``vocab``).
Micro-batches (``micro_batches = M``)
    ``batch`` is the global batch: M copies of the graph, each of ``batch / M`` sequences (M
    must divide it), every name suffixed ``_mb{m}``, no edge between copies. The parameters
    count once: only micro-batch 0's forward tasks carry ``weight_memory`` (and ``memory``).

The sizes of the graph are checked against the memory free before anything is built
(:func:`~schedkit.machine.ensure_fits`); a bad argument is a one-line
:class:`~schedkit.errors.ProblemError` naming its command-line flag.

Examples
--------
>>> from schedkit import Problem
>>> data = transformer(layers=2, hidden=64, heads=4, seq=16, batch=2,
...                    platform="examples/platform_cpu_2gpu.yaml", forward_backward=True)
>>> Problem.from_dict(data)
Problem('transformer-l2-h64-a4-s16-b2-fb': 56 tasks, 98 edges, 3 devices)
>>> [t["name"] for t in data["tasks"] if t["name"].startswith("L1.attn.qkv")]
['L1.attn.qkv', 'L1.attn.qkv.bwd_input', 'L1.attn.qkv.bwd_weight']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError
from schedkit.generators.random_dags import DURATION_BYTES, EDGE_BYTES, TASK_BYTES
from schedkit.generators.transformer_costs import (LAYER_EDGES, MLPS, NORMS, LayerShape, Operator,
                                                   edge_bytes, embedding_op, head_ops, layer_ops)
from schedkit.importers.platform import Platform, load_platform, parse_platform
from schedkit.machine import ensure_fits

__all__ = ["transformer", "graph_size"]


def _count(flag: str, value: Any) -> int:
    if value is None:
        raise ProblemError(f"{flag}: needed (an integer >= 1)")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProblemError(f"{flag}: needs an integer >= 1, got {value!r}")
    return value


def _divides(flag: str, part: int, whole_flag: str, whole: int) -> None:
    if whole % part:
        raise ProblemError(f"{flag}: {part} does not divide {whole_flag} {whole}")


def graph_size(layers: int, vocab: int | None = None, forward_backward: bool = False,
               micro_batches: int | None = None) -> tuple[int, int]:
    """Tasks and edges of the graph :func:`transformer` writes (see the module's counts).

    Examples
    --------
    >>> graph_size(96), graph_size(96, vocab=50257, forward_backward=True, micro_batches=4)
    ((1152, 1438), (10780, 19616))
    """
    head = vocab is not None
    if forward_backward:
        tasks, edges = 28 * layers + 7 * head, 51 * layers - 4 + 12 * head
    else:
        tasks, edges = 12 * layers + 3 * head, 15 * layers - 2 + 4 * head
    copies = micro_batches or 1
    return tasks * copies, edges * copies


def _platform(platform: Any) -> Platform:
    if platform is None:
        raise ProblemError("--platform: needed: a devices file with the rooflines to time the "
                           "operators on ('schedkit generate platform' writes one)")
    if isinstance(platform, Platform):
        return platform
    if isinstance(platform, dict):
        return parse_platform(platform)
    return load_platform(platform)


def _forward(shape: LayerShape, layers: int, vocab: int | None) -> tuple[list, list]:
    """Named operators in execution order, and the data edges (src, dst, bytes) between them."""
    layer = layer_ops(shape)
    by_key = {op.key: op for op in layer}
    ops: list[tuple[str, Operator]] = []
    edges: list[tuple[str, str, int]] = []
    previous: tuple[str, Operator] | None = None  # what feeds the next layer
    if vocab is not None:
        previous = ("embed", embedding_op(shape, vocab))
        ops.append(previous)
    for lay in range(layers):
        prefix = f"L{lay}."
        ops += [(prefix + op.key, op) for op in layer]
        if previous is not None:  # the residual stream enters the norm and skips to the add
            for key in ("attn.norm", "attn.residual"):
                edges.append((previous[0], prefix + key, previous[1].output_bytes))
        edges += [(prefix + src, prefix + dst, edge_bytes(shape, by_key[src], dst)) for src, dst in LAYER_EDGES]
        previous = (prefix + "mlp.residual", by_key["mlp.residual"])
    if vocab is not None:
        norm, lm_head = head_ops(shape, vocab)
        ops += [("final_norm", norm), ("lm_head", lm_head)]
        edges += [(previous[0], "final_norm", previous[1].output_bytes),
                  ("final_norm", "lm_head", norm.output_bytes)]
    return ops, edges


def _backward(ops: list, edges: list) -> tuple[list, list]:
    """Backward rows (name, op type, flops, bytes, output bytes) in reverse order, and their edges."""
    rows, out_edges, tasks_of, gradient_of = [], [], {}, {}
    for name, op in reversed(ops):
        if op.split:
            mine = [(f"{name}.bwd_input", op.flops, op.bytes, op.input_bytes, op.weight_bytes),
                    (f"{name}.bwd_weight", op.flops, op.bytes, op.weight_bytes, op.saved_bytes)]
        else:
            mine = [(f"{name}.bwd", 2 * op.flops, 2 * op.bytes, op.input_bytes + op.weight_bytes,
                     op.saved_bytes)]
        tasks_of[name] = [m[0] for m in mine]
        gradient_of[name] = mine[0][0]  # the task that writes the gradient of the op's inputs
        for task, flops, moved, written, read in mine:
            rows.append((task, op.op + "Grad", flops, moved, written))
            out_edges.append((name, task, read))  # what the forward left for it
    for src, dst, size in edges:  # the gradient of src's output comes from each consumer dst
        out_edges += [(gradient_of[dst], task, size) for task in tasks_of[src]]
    return rows, out_edges


def transformer(layers: int, hidden: int, heads: int, seq: int, batch: int,
                platform: str | Path | Platform | dict | None, *, forward_backward: bool = False,
                micro_batches: int | None = None, vocab: int | None = None, ffn: int | None = None,
                kv_heads: int | None = None, dtype: int = 2, norm: str = "layer", mlp: str = "gelu",
                static_memory: bool = False, name: str | None = None) -> dict:
    """A decoder-only transformer's operator graph on ``platform`` (see the module documentation).

    Parameters
    ----------
    layers, hidden, heads, seq, batch : int
        Decoder layers, model width, attention heads, tokens per sequence, sequences (the global
        batch, split over the micro-batches).
    platform : str, Path, Platform or dict
        The devices file (``schedkit-platform/v1``) whose rooflines time the operators.
    forward_backward : bool
        Add the backward operators (training).
    micro_batches : int or None
        M copies of the graph, each of ``batch / M`` sequences, named ``_mb{m}``.
    vocab : int or None
        Add the token embedding and the LM head over ``vocab`` tokens.
    ffn, kv_heads : int or None
        MLP inner size (default ``4 * hidden``) and key/value heads (grouped-query attention;
        default ``heads``).
    dtype : int
        Bytes per element (default 2).
    norm, mlp : str
        ``layer`` (LayerNorm) or ``rms`` (RMSNorm); ``gelu`` (GPT) or ``swiglu`` (LLaMA).
    static_memory : bool
        Also give each task its parameters as static ``memory`` (as ``convert onnx --static-memory``).
    name : str or None
        Problem name (default from the sizes).

    Returns
    -------
    dict
        ``schedkit/v1`` data.

    Examples
    --------
    >>> data = transformer(1, 64, 4, 16, 4, "examples/platform_cpu_2gpu.yaml", micro_batches=2)
    >>> len(data["tasks"]), len(data["edges"]), data["tasks"][1]["name"], data["time_unit"]
    (24, 26, 'L0.attn.qkv_mb0', 'ms')
    >>> transformer(1, 64, 6, 16, 4, "examples/platform_cpu_2gpu.yaml")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: --heads: 6 does not divide --hidden 64
    """
    for flag, value in (("--layers", layers), ("--hidden", hidden), ("--heads", heads), ("--seq", seq),
                        ("--batch", batch), ("--dtype", dtype)):
        _count(flag, value)
    for flag, value in (("--micro-batches", micro_batches), ("--vocab", vocab), ("--ffn", ffn),
                        ("--kv-heads", kv_heads)):
        if value is not None:
            _count(flag, value)
    _divides("--heads", heads, "--hidden", hidden)
    if kv_heads is not None:
        _divides("--kv-heads", kv_heads, "--heads", heads)
    if micro_batches is not None:
        _divides("--micro-batches", micro_batches, "--batch", batch)
    if not isinstance(norm, str) or norm not in NORMS:
        raise ProblemError(f"--norm: {norm!r} is not a norm ({', '.join(NORMS)})")
    if not isinstance(mlp, str) or mlp not in MLPS:
        raise ProblemError(f"--mlp: {mlp!r} is not an MLP kind ({', '.join(MLPS)})")
    plat = _platform(platform)
    n_tasks, n_edges = graph_size(layers, vocab, forward_backward, micro_batches)
    ensure_fits(f"--layers {layers}: {n_tasks:,} tasks and {n_edges:,} edges on {len(plat.devices):,} devices",
                n_tasks * (TASK_BYTES + DURATION_BYTES * len(plat.devices)) + n_edges * EDGE_BYTES)
    copies = micro_batches or 1
    shape = LayerShape(batch // copies, seq, hidden, heads, kv_heads, ffn, dtype, norm, mlp)
    ops, edges = _forward(shape, layers, vocab)
    rows = [(n, op.op, op.flops, op.bytes, op.output_bytes) for n, op in ops]
    weights = {n: op.weight_bytes for n, op in ops}
    if forward_backward:
        back_rows, back_edges = _backward(ops, edges)
        rows, edges = rows + back_rows, edges + back_edges
    times = _durations(plat, rows)
    tasks, out_edges = [], []
    for m in range(copies):
        # (names carry the suffix whenever micro-batches are asked for, M = 1 included)
        suffix = "" if micro_batches is None else f"_mb{m}"
        for task, op, flops, moved, written in rows:
            row: dict[str, Any] = {"name": task + suffix, "op": op, "durations": dict(times[op, flops, moved]),
                                   "weight_memory": weights.get(task, 0) if m == 0 else 0,
                                   "activation_memory": written}
            if static_memory:
                row["memory"] = row["weight_memory"]
            tasks.append(row)
        out_edges += [{"src": src + suffix, "dst": dst + suffix, "size": size} for src, dst, size in edges]
    if name is None:
        name = f"transformer-l{layers}-h{hidden}-a{heads}-s{seq}-b{batch}" + \
            ("-fb" if forward_backward else "") + ("" if micro_batches is None else f"-m{micro_batches}")
    return {"format": "schedkit/v1", "name": name, "time_unit": plat.time_unit,
            "devices": plat.problem_devices(), "links": plat.problem_links(), "tasks": tasks,
            "edges": out_edges}


def _durations(platform: Platform, rows: list) -> dict:
    """Roofline time per distinct (op, flops, bytes) on each device that runs the op.

    Every layer has the same operators: a 96-layer model has a few dozen distinct costs, so each
    is timed once. A backward ``XGrad`` runs where its forward ``X`` runs.
    """
    times: dict = {}
    for task, op, flops, moved, _ in rows:
        if (op, flops, moved) in times:
            continue
        forward = op.removesuffix("Grad")
        # Six significant digits, as ``convert onnx`` writes them.
        durations = {d.name: float(f"{platform.duration(d, flops, moved):.6g}") for d in platform.devices
                     if op not in d.unsupported_ops and forward not in d.unsupported_ops}
        if not durations:
            raise ProblemError(f"task '{task}': every device of platform '{platform.name}' lists "
                               f"'{forward}' in its unsupported_ops: it can run nowhere")
        times[op, flops, moved] = platform.keyed(durations)  # one entry per type where all agree
    return times
