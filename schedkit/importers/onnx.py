"""ONNX models as ``schedkit/v1`` problems: one task per operator, durations from a roofline.

``schedkit convert onnx MODEL.onnx --platform DEVICES.yaml -o P.json`` reads the model with
the ``onnx`` package (the ``onnx`` extra), fixes the shapes of its inputs (``--shape``),
runs ONNX shape inference, folds the constant subgraphs into weights
(:mod:`~schedkit.importers.onnx_graph`), counts FLOPs and bytes moved per operator
(:mod:`~schedkit.importers.onnx_costs`) and turns them into a duration on every device of
the devices file (:mod:`~schedkit.importers.platform`). Each task carries its ``op`` type
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
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError
from schedkit.importers.base import Importer, register_importer
from schedkit.importers.onnx_costs import OpCall, op_cost
from schedkit.importers.onnx_graph import Node, operator_graph, unique_names
from schedkit.importers.platform import Platform, load_platform, parse_platform
from schedkit.problem.reading import file_path

__all__ = ["Onnx", "OnnxImportWarning", "parse_shapes"]


class OnnxImportWarning(UserWarning):
    """Something the ONNX importer had to guess: an operator without a cost rule, an unknown shape."""


def parse_shapes(items: Any) -> dict[str, tuple[int, ...]]:
    """``--shape`` values as a map: ``"x=1,3,224,224"`` (an input) or ``"batch=1"`` (a symbolic dim).

    Parameters
    ----------
    items : None, str, list of str or dict
        Strings ``NAME=D1,D2,...`` (or a dict name -> int or list of ints).

    Examples
    --------
    >>> parse_shapes(["data=1,3,224,224", "batch=2"])
    {'data': (1, 3, 224, 224), 'batch': (2,)}
    >>> parse_shapes("seq=x")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: --shape seq=x: give NAME=D1,D2,... with positive integers
    >>> parse_shapes("seq=99999999999999999999")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: --shape seq=99999999999999999999: a dimension is above 9223372036854775807 (ONNX's int64)
    """
    if not items:
        return {}
    if not isinstance(items, (str, list, tuple, dict)):
        raise ProblemError(f"--shape: expected NAME=D1,D2,... strings or a dict, not {type(items).__name__}")
    if isinstance(items, dict):
        entries = [(str(k), list(v) if isinstance(v, (list, tuple)) else [v], f"{k}={v}")
                   for k, v in items.items()]
    else:
        entries = []
        for item in [items] if isinstance(items, str) else items:
            name, _, dims = str(item).partition("=")
            entries.append((name.strip(), dims.split(",") if dims.strip() else [], item))
    shapes = {}
    for name, dims, label in entries:
        try:
            values = tuple(_dimension(d) for d in dims)
        except (ValueError, TypeError):
            values = ()
        if not name or not values or min(values) < 1:
            raise ProblemError(f"--shape {label}: give NAME=D1,D2,... with positive integers")
        if max(values) > INT64_MAX:  # ONNX stores dimensions as int64
            raise ProblemError(f"--shape {label}: a dimension is above {INT64_MAX} (ONNX's int64)")
        shapes[name] = values
    return shapes


#: The largest dimension ONNX can store.
INT64_MAX = 2**63 - 1


def _dimension(value: Any) -> int:
    # Whole numbers in ASCII digits only: no float, bool, '1e3' or other scripts' digits.
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError(value)
    text = str(value).strip()
    if not text.isascii() or not text.lstrip("+").isdigit():
        raise ValueError(text)
    return int(text)


@register_importer("onnx")
class Onnx(Importer):
    """ONNX model: one task per operator (constants folded), durations from a device roofline.

    Options: ``platform`` (the devices file, required), ``shape`` (``NAME=D1,D2,...`` for
    inputs or symbolic dimensions left dynamic) and ``static_memory`` (also give each task
    its weights as static ``memory``, which the ``memory`` block of the ``latency``
    formulation checks against device capacities).
    """

    suffixes = (".onnx",)
    extra = "onnx"

    def read(self, path: str | Path, *, platform: str | Path | Platform | dict | None = None,
             shape: Any = None, static_memory: bool = False, **options: Any) -> dict:
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
        onnx = self.need("onnx")
        path = file_path(path)
        model = _load(onnx, path)
        _fix_input_shapes(model, parse_shapes(shape), path)
        try:
            model = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        except Exception as exc:  # onnx raises its own error types, or RuntimeError
            raise ProblemError(f"{path}: shape inference failed: {_first_line(exc)}") from None
        return _to_problem(onnx, model, path.stem, platform, static_memory)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _load(onnx: Any, path: Path) -> Any:
    if not path.is_file():
        raise ProblemError(f"{path}: no such file")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise ProblemError(f"{path}: not an ONNX model ({_first_line(exc)})") from None
    if not model.graph.node or not model.opset_import:
        raise ProblemError(f"{path}: not an ONNX model (no operators or no opset)")
    return model


def _fix_input_shapes(model: Any, shapes: dict[str, tuple[int, ...]], path: Path) -> None:
    """Give every model input a static shape (from ``--shape``), or fail naming the dynamic one."""
    graph = model.graph
    weights = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in weights]
    names = {i.name for i in inputs}
    params = {d.dim_param for i in inputs for d in i.type.tensor_type.shape.dim if d.dim_param}
    for name in shapes:
        if name not in names and name not in params:
            known = ", ".join(sorted(names | params)) or "none"
            raise ProblemError(f"--shape {name}: no model input or symbolic dimension called "
                               f"'{name}' (known: {known})")
    for given in inputs:
        tensor = given.type.tensor_type
        if not given.type.HasField("tensor_type"):
            raise ProblemError(f"{path}: model input '{given.name}' is not a tensor")
        dims = tensor.shape.dim
        if given.name in shapes:
            wanted = shapes[given.name]
            if tensor.HasField("shape") and len(dims) != len(wanted):
                raise ProblemError(f"--shape {given.name}: the input has {len(dims)} dimensions, "
                                   f"got {len(wanted)}")
            tensor.shape.ClearField("dim")
            for value in wanted:
                tensor.shape.dim.add().dim_value = value
            continue
        if not tensor.HasField("shape"):
            raise ProblemError(f"{path}: model input '{given.name}' has no shape: give "
                               f"--shape {given.name}=D1,D2,...")
        for k, dim in enumerate(dims):
            if dim.dim_param in shapes:
                dim.dim_value = shapes[dim.dim_param][0]
            elif not dim.HasField("dim_value") or dim.dim_value < 1:
                label = f"'{dim.dim_param}'" if dim.dim_param else f"{k}"
                hint = f"--shape {dim.dim_param}=N or " if dim.dim_param else ""
                raise ProblemError(f"{path}: model input '{given.name}' has a dynamic dimension "
                                   f"{label}: give {hint}--shape {given.name}=D1,D2,...")


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


def _outer_references(onnx: Any, node: Any) -> list[str]:
    """Tensors of the enclosing graph that the subgraphs of ``node`` read."""
    found: list[str] = []
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else \
            list(attr.graphs) if attr.type == onnx.AttributeProto.GRAPHS else []
        for sub in graphs:
            local = {i.name for i in sub.input} | {t.name for t in sub.initializer}
            for inner in sub.node:
                for name in list(inner.input) + _outer_references(onnx, inner):
                    if name and name not in local and name not in found:
                        found.append(name)
                local.update(inner.output)
    return found


def _attrs(onnx: Any, node: Any) -> dict[str, Any]:
    plain = {}
    for attr in node.attribute:
        if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            continue
        value = onnx.helper.get_attribute_value(attr)
        plain[attr.name] = value.decode() if isinstance(value, bytes) else value
    return plain


def _to_problem(onnx: Any, model: Any, name: str, platform: Platform, static_memory: bool) -> dict:
    graph = model.graph
    table = _tensor_table(onnx, graph)
    names = unique_names([(n.name, n.op_type, list(n.output)) for n in graph.node])
    nodes = [Node(task, n.op_type, list(n.input) + _outer_references(onnx, n), list(n.output),
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
    tasks = []
    for node in ops.operators:
        ins = [e for e in (size(t) for t in node.inputs if t) if e is not None]
        outs = [e for e in (size(t) for t in node.outputs if t) if e is not None]
        cost = _cost(OpCall(node.op, node.attrs, ins, outs))
        if not cost.known:
            no_rule[node.op] += 1
        # Six significant digits: far below the roofline's own accuracy, and short files.
        durations = {d.name: float(f"{platform.duration(d, cost.flops, cost.bytes):.6g}")
                     for d in platform.devices if node.op not in d.unsupported_ops}
        weights = nbytes(ops.weights.get(node.name, []))
        task: dict[str, Any] = {"name": node.name, "op": node.op, "durations": durations,
                                "weight_memory": weights,
                                "activation_memory": nbytes([o for o in node.outputs if o])}
        if static_memory:
            task["memory"] = weights
        tasks.append(task)
    edges = [{"src": src, "dst": dst, "size": nbytes(tensors)}
             for (src, dst), tensors in ops.edges.items()]
    if no_rule:
        listed = ", ".join(f"{op} ({n})" for op, n in sorted(no_rule.items()))
        warnings.warn(f"{name}: no cost rule for {sum(no_rule.values())} operator(s), costed by "
                      f"bytes moved only: {listed}", OnnxImportWarning, stacklevel=3)
    if unknown_shapes:
        shown = ", ".join(unknown_shapes[:5]) + (f" (+{len(unknown_shapes) - 5} more)"
                                                 if len(unknown_shapes) > 5 else "")
        warnings.warn(f"{name}: shape inference left {len(unknown_shapes)} tensor(s) without a "
                      f"static shape, counted as 0 bytes: {shown}", OnnxImportWarning, stacklevel=3)
    return {"format": "schedkit/v1", "name": name, "devices": platform.problem_devices(),
            "links": platform.problem_links(), "tasks": tasks, "edges": edges}


def _cost(call: OpCall):
    try:
        return op_cost(call)
    except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        # A rule met inputs it cannot read (a shape left unknown): bytes moved only.
        return op_cost(OpCall("?" + call.op, call.attrs, call.inputs, call.outputs))
