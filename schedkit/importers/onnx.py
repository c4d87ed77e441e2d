"""ONNX models as ``schedkit/v1`` problems: one task per operator, durations from a roofline.

``schedkit convert onnx MODEL.onnx --platform DEVICES.yaml -o P.json`` reads the model with
the ``onnx`` package (the ``onnx`` extra), fixes the shapes of its inputs (``--shape``),
runs ONNX shape inference, folds the constant subgraphs into weights
(:mod:`~schedkit.importers.onnx_graph`), counts FLOPs and bytes moved per operator
(:mod:`~schedkit.importers.onnx_costs`) and turns them into a duration on every device of
the devices file (:mod:`~schedkit.importers.platform`), or takes the times a cost table
measured (``--costs``, :mod:`~schedkit.importers.measured`). Each task carries its ``op`` type
(for fusion), its weights as ``weight_memory`` and its outputs as ``activation_memory``;
each edge the bytes of the tensors it carries. Operators without a cost rule, and tensors
whose shape inference left unknown, are listed in a :class:`OnnxImportWarning`.

Examples
--------
>>> import pathlib, tempfile
>>> from onnx import TensorProto, helper, save
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
>>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["h"], name="relu"),
...                            helper.make_node("Sigmoid", ["h"], ["y"], name="gate")],
...                           "mlp", [x], [y])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "mlp.onnx"
>>> save(helper.make_model(graph), path)
>>> data = Onnx().read(path, platform="examples/platform_cpu_2gpu.yaml")
>>> [(t["name"], t["op"]) for t in data["tasks"]], data["edges"]
([('relu', 'Relu'), ('gate', 'Sigmoid')], [{'src': 'relu', 'dst': 'gate', 'size': 256}])
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError
from schedkit.importers.base import Importer, need, register_importer
from schedkit.importers.measured import MeasuredTimes, assign_devices, check_nodes
from schedkit.importers.onnx_costs import OpCall, op_cost
from schedkit.importers.onnx_graph import Node, operator_graph, unique_names
from schedkit.importers.onnx_model import inferred_model, outer_references, parse_shapes, prepared_model
from schedkit.importers.platform import Platform, load_platform, parse_platform
from schedkit.problem.reading import file_path

__all__ = ["Onnx", "OnnxImportWarning", "OperatorCost", "operator_costs", "parse_shapes"]


class OnnxImportWarning(UserWarning):
    """Something the ONNX importer had to guess: an operator without a cost rule, an unknown shape."""


@register_importer("onnx")
class Onnx(Importer):
    """ONNX model: one task per operator (constants folded), durations from a device roofline.

    Options: ``platform`` (the devices file, required), ``shape`` (``NAME=D1,D2,...`` for
    inputs or symbolic dimensions left dynamic), ``static_memory`` (also give each task
    its weights as static ``memory``, which the ``memory`` block of the ``latency``
    formulation checks against device capacities) and ``costs`` (measured times,
    :class:`~schedkit.importers.measured.MeasuredTimes` such as ``CostTable.measured()``
    gives, used instead of the roofline on the devices they go to; the problem then records
    ``measured: {device: count}`` and ``measured_overhead: {device: time}``, the share of a
    run's time outside the nodes that each measured duration includes). The problem records
    the platform's ``time_unit``.
    """

    suffixes = (".onnx",)
    extra = "onnx"

    def read(self, path: str | Path, *, platform: str | Path | Platform | dict | None = None,
             shape: Any = None, static_memory: bool = False,
             costs: list[MeasuredTimes] | None = None, **options: Any) -> dict:
        """Read an ONNX model; see the module documentation."""
        if options:
            raise ProblemError(f"onnx import takes no option '{next(iter(options))}'")
        if platform is None:
            raise ProblemError("onnx import needs a devices file: --platform DEVICES.yaml "
                               "('schedkit generate platform' writes one)")
        if isinstance(platform, dict):
            platform = parse_platform(platform)
        elif not isinstance(platform, Platform):
            platform = load_platform(platform)
        measured = _measured(costs)
        onnx = self.need("onnx")
        path = file_path(path)
        model = inferred_model(onnx, prepared_model(onnx, path, shape), path)
        return _to_problem(onnx, model, path.stem, platform, static_memory, measured)


def _measured(costs: Any) -> list[MeasuredTimes]:
    if costs is None:
        return []
    items = list(costs) if isinstance(costs, (list, tuple)) else [costs]
    for item in items:
        if not isinstance(item, MeasuredTimes):
            raise ProblemError(f"onnx import: costs: expected MeasuredTimes (CostTable.measured()), "
                               f"not {type(item).__name__}")
    return items


def _tensor_table(onnx: Any, graph: Any) -> dict[str, tuple[tuple[int, ...], int] | None]:
    """Tensor name -> (shape, bytes per element), or ``None`` when the shape is not static."""
    table: dict[str, tuple[tuple[int, ...], int] | None] = {}

    def itemsize(elem_type: int) -> int:
        try:
            return int(onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize)
        except Exception:  # strings, undefined: no fixed size
            return 0

    for info in list(graph.value_info) + list(graph.input) + list(graph.output):
        tensor = info.type.tensor_type
        dims = tensor.shape.dim
        static = info.type.HasField("tensor_type") and tensor.HasField("shape") and \
            all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims)
        table[info.name] = (tuple(d.dim_value for d in dims), itemsize(tensor.elem_type)) \
            if static else table.get(info.name)
    for init in graph.initializer:
        table[init.name] = (tuple(init.dims), itemsize(init.data_type))
    return table


def _attrs(onnx: Any, node: Any) -> dict[str, Any]:
    plain = {}
    for attr in node.attribute:
        if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            continue
        value = onnx.helper.get_attribute_value(attr)
        plain[attr.name] = value.decode() if isinstance(value, bytes) else value
    return plain


@dataclass(frozen=True)
class OperatorCost:
    """One operator of a model as the importer costs it.

    Attributes
    ----------
    name, op : str
        Task name (unique) and operator type.
    index : int
        Position of the node in the model's graph (runtimes' profiles name nodes by it).
    flops, bytes : int
        Its FLOPs and bytes moved (:func:`~schedkit.importers.onnx_costs.op_cost`).
    known : bool
        Whether a cost rule covers the operator (else only bytes moved count).
    weight_bytes, output_bytes : int
        Bytes of the constants it reads and of the outputs it writes.
    """

    name: str
    op: str
    index: int
    flops: int
    bytes: int
    known: bool
    weight_bytes: int
    output_bytes: int


def operator_costs(path: str | Path, shape: Any = None) -> tuple[list[OperatorCost], Any]:
    """The operators of an ONNX model with their costs, and the model with its inputs fixed.

    The model is read as ``convert onnx`` reads it (``shape`` as ``--shape``), so that its
    operators are the tasks ``convert onnx`` writes, under the same names.

    Returns
    -------
    (list of OperatorCost, onnx.ModelProto)
        The operators in model order, and the model with static input shapes (before
        shape inference).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from onnx import TensorProto, helper, save
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])
    >>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "relu.onnx"
    >>> save(helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])],
    ...                                          "g", [x], [y])), path)
    >>> ops, model = operator_costs(path, ["n=2"])
    >>> [(o.name, o.op, o.flops, o.bytes, o.output_bytes) for o in ops]
    [('y', 'Relu', 16, 128, 64)]
    """
    onnx = need("onnx", importer="onnx", extra="onnx")
    model = prepared_model(onnx, file_path(path), shape)
    return _operators(onnx, inferred_model(onnx, model, file_path(path)), file_path(path).stem)[0], model


def _operators(onnx: Any, model: Any, name: str) -> tuple[list[OperatorCost], Any]:
    """The costed operators, and the operator graph (warns what it had to guess)."""
    graph = model.graph
    table = _tensor_table(onnx, graph)
    names = unique_names([(n.name, n.op_type, list(n.output)) for n in graph.node])
    index = {task: k for k, task in enumerate(names)}
    nodes = [Node(task, n.op_type, list(n.input) + outer_references(onnx, n), list(n.output),
                  _attrs(onnx, n)) for task, n in zip(names, graph.node)]
    ops = operator_graph(nodes, constants={t.name for t in graph.initializer})
    if not ops.operators:
        raise ProblemError(f"{name}: every operator of the model is constant: nothing to schedule")
    unknown_shapes: list[str] = []
    # An output nobody reads (a Dropout mask) may stay shapeless without harm.
    used = {t for node in nodes for t in node.inputs} | {o.name for o in graph.output}

    def size(tensor: str) -> tuple[tuple[int, ...], int] | None:
        entry = table.get(tensor)
        if entry is None and tensor in used and tensor not in unknown_shapes:
            unknown_shapes.append(tensor)
        return entry

    def nbytes(tensors: list[str]) -> int:
        total = 0
        for tensor in tensors:
            entry = size(tensor)
            if entry is not None:
                shape, item = entry
                count = 1
                for d in shape:
                    count *= d
                total += count * item
        return total

    no_rule: Counter = Counter()
    rows = []
    for node in ops.operators:
        ins = [e for e in (size(t) for t in node.inputs if t) if e is not None]
        outs = [e for e in (size(t) for t in node.outputs if t) if e is not None]
        cost = _cost(OpCall(node.op, node.attrs, ins, outs))
        if not cost.known:
            no_rule[node.op] += 1
        rows.append(OperatorCost(node.name, node.op, index[node.name], cost.flops, cost.bytes,
                                 cost.known, nbytes(ops.weights.get(node.name, [])),
                                 nbytes([o for o in node.outputs if o])))
    if no_rule:
        listed = ", ".join(f"{op} ({n})" for op, n in sorted(no_rule.items()))
        warnings.warn(f"{name}: no cost rule for {sum(no_rule.values())} operator(s), costed by "
                      f"bytes moved only: {listed}", OnnxImportWarning, stacklevel=4)
    if unknown_shapes:
        shown = ", ".join(unknown_shapes[:5]) + (f" (+{len(unknown_shapes) - 5} more)"
                                                 if len(unknown_shapes) > 5 else "")
        warnings.warn(f"{name}: shape inference left {len(unknown_shapes)} tensor(s) without a "
                      f"static shape, counted as 0 bytes: {shown}", OnnxImportWarning, stacklevel=4)
    edges = [{"src": src, "dst": dst, "size": nbytes(tensors)}
             for (src, dst), tensors in ops.edges.items()]
    return rows, edges


def _to_problem(onnx: Any, model: Any, name: str, platform: Platform, static_memory: bool,
                measured: list[MeasuredTimes]) -> dict:
    rows, edges = _operators(onnx, model, name)
    check_nodes(measured, {row.name: row.op for row in rows}, name)
    taking = assign_devices(platform, measured)
    counts: Counter = Counter()
    tasks = []
    for row in rows:
        durations = {}
        for d in platform.devices:
            if row.op in d.unsupported_ops:
                continue
            table = taking.get(d.name)
            if table is not None and row.name in table.times:
                value = table.times[row.name] / platform.seconds
                counts[d.name] += 1
            else:
                value = platform.duration(d, row.flops, row.bytes)
            # Six significant digits: far below the roofline's own accuracy, and short files.
            durations[d.name] = float(f"{value:.6g}")
        task: dict[str, Any] = {"name": row.name, "op": row.op, "durations": platform.keyed(durations),
                                "weight_memory": row.weight_bytes, "activation_memory": row.output_bytes}
        if static_memory:
            task["memory"] = row.weight_bytes
        tasks.append(task)
    for table in measured:
        absent = [row.name for row in rows if row.name not in table.times]
        if absent:  # a partial table (a trace of some kernels): the rest keeps the roofline
            warnings.warn(f"{name}: {table.source} gives no time for {len(absent)} of the "
                          f"{len(rows)} operators ({', '.join(absent[:3])}"
                          f"{', ...' if len(absent) > 3 else ''}): roofline time on its devices",
                          OnnxImportWarning, stacklevel=3)
    data = {"format": "schedkit/v1", "name": name, "time_unit": platform.time_unit,
            "devices": platform.problem_devices(), "links": platform.problem_links(), "tasks": tasks,
            "edges": edges}
    if measured:
        data["measured"] = {d.name: counts[d.name] for d in platform.devices if d.name in taking}
        # What each measured duration holds beyond its kernels (the run's time outside the
        # nodes, shared): a reader can take it out again, or see why durations exceed a profile.
        data["measured_overhead"] = {d.name: float(f"{taking[d.name].overhead / platform.seconds:.6g}")
                                     for d in platform.devices if d.name in taking}
    return data


def _cost(call: OpCall):
    try:
        return op_cost(call)
    except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        # A rule met inputs it cannot read (a shape left unknown): bytes moved only.
        return op_cost(OpCall("?" + call.op, call.attrs, call.inputs, call.outputs))
