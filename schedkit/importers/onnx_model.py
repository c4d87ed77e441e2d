"""Reading an ONNX model with static input shapes: the first step of every ONNX reader.

``convert onnx``, ``profile`` and the trace importers read a model the same way: the file is
loaded without external data, its inputs get the static shapes ``--shape`` gives
(:func:`parse_shapes`: ``NAME=D1,D2,...`` for an input, ``NAME=N`` for a symbolic dimension),
and shape inference runs on it. Every failure is a one-line
:class:`~schedkit.errors.ProblemError` naming the file or the ``--shape`` item.

Examples
--------
>>> import pathlib, tempfile
>>> from onnx import TensorProto, helper, save
>>> import onnx
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "relu.onnx"
>>> save(helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])],
...                                          "g", [x], [y])), path)
>>> model = prepared_model(onnx, path, ["batch=4"])
>>> [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
[4, 8]
>>> prepared_model(onnx, path, None)
Traceback (most recent call last):
...
schedkit.errors.ProblemError: .../relu.onnx: model input 'x' has a dynamic dimension 'batch': give --shape batch=N or --shape x=D1,D2,...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError

__all__ = ["INT64_MAX", "parse_shapes", "prepared_model", "inferred_model", "outer_references"]


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


def prepared_model(onnx: Any, path: Path, shape: Any) -> Any:
    """The model at ``path`` (loaded by the ``onnx`` module given) with static input shapes."""
    model = _load(onnx, path)
    _fix_input_shapes(model, parse_shapes(shape), path)
    return model


def inferred_model(onnx: Any, model: Any, path: Path) -> Any:
    """``model`` after ONNX shape inference (with data propagation)."""
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as exc:  # onnx raises its own error types, or RuntimeError
        raise ProblemError(f"{path}: shape inference failed: {_first_line(exc)}") from None


def outer_references(onnx: Any, node: Any) -> list[str]:
    """Tensors of the enclosing graph that the subgraphs of ``node`` (``If``, ``Loop``, ``Scan``) read:
    inputs of the node as much as its own, for the task graph and for cutting the model."""
    found: list[str] = []
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else \
            list(attr.graphs) if attr.type == onnx.AttributeProto.GRAPHS else []
        for sub in graphs:
            local = {i.name for i in sub.input} | {t.name for t in sub.initializer}
            for inner in sub.node:
                for name in list(inner.input) + outer_references(onnx, inner):
                    if name and name not in local and name not in found:
                        found.append(name)
                local.update(inner.output)
    return found
