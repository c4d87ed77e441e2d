"""An ONNX model seen as ``convert onnx`` sees it: its tasks, their tensors, its constants.

:func:`load_model` reads a model with the ``onnx`` package, gives its inputs static shapes
(``--shape``, as ``convert onnx`` takes them), runs shape inference (the types of the tensors a
cut hands between sub-models) and names one task per operator exactly as the importer does
(:func:`~schedkit.importers.onnx_graph.unique_names`, constants folded by
:func:`~schedkit.importers.onnx_graph.operator_graph`), so that a schedule of the converted
problem names the model's operators. Folded nodes (``Constant``, ``ConstantOfShape`` weights
of the onnx wheel's light models, arithmetic on weights) are not tasks: the importer counts
their outputs as weights, and :func:`constant_values` computes them once, so that every
sub-model receives them as initializers, as the problem assumed.

Examples
--------
>>> import pathlib, tempfile
>>> from onnx import TensorProto, helper, save
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
>>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["h"], name="relu"),
...                            helper.make_node("Neg", ["h"], ["y"])], "g", [x], [y])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "g.onnx"
>>> save(helper.make_model(graph), path)
>>> model = load_model(path)
>>> model.order, model.inputs["y"], model.outputs["relu"], model.graph_inputs
(['relu', 'y'], ['h'], ['h'], ['x'])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError
from schedkit.importers.base import need
from schedkit.importers.onnx_model import inferred_model, outer_references, prepared_model
from schedkit.importers.onnx_graph import Node, operator_graph, unique_names

__all__ = ["ModelTasks", "load_model", "constant_values", "first_line"]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (or its type), for one-line errors.

    Examples
    --------
    >>> first_line(ValueError("bad shape\\nat node 3"))
    'bad shape'
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass
class ModelTasks:
    """A model's operators as tasks, with what each one reads and writes.

    Attributes
    ----------
    model : onnx.ModelProto
        The model, its input shapes fixed and shapes inferred.
    path : Path
        Where it was read from (for messages).
    nodes : dict
        Task name -> its ``NodeProto``.
    order : list of str
        The tasks in model (topological) order.
    inputs, outputs : dict
        Task name -> the tensors it reads (constants and the outer-scope tensors of its
        subgraphs included), and those it writes.
    producer : dict
        Tensor -> the task that writes it.
    folded : list
        The ``NodeProto`` of every folded (constant) node, in model order.
    constants : set of str
        Tensors known before any operator runs: initializers and folded outputs.
    graph_inputs, graph_outputs : list of str
        The model inputs to feed (initializers excluded) and its outputs.
    types : dict
        Tensor -> its ``TypeProto``, where shape inference knows it.
    """

    model: Any
    path: Path
    nodes: dict[str, Any]
    order: list[str]
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    producer: dict[str, str]
    folded: list[Any]
    constants: set[str]
    graph_inputs: list[str]
    graph_outputs: list[str]
    types: dict[str, Any]

    def input_shape(self, name: str) -> tuple[int, ...]:
        """The static shape of model input ``name`` (fixed by :func:`load_model`)."""
        return tuple(d.dim_value for d in self.types[name].tensor_type.shape.dim)

    def part_model(self, graph: Any) -> Any:
        """A model of ``graph`` with this model's opsets and local functions.

        Its IR version is at least 4: before it, every initializer had to be a graph input
        too (the light models are IR 3), which a part's initializers are not.
        """
        onnx = need("onnx", importer="execute", extra="onnx")
        part = onnx.helper.make_model(graph, opset_imports=list(self.model.opset_import),
                                      ir_version=max(self.model.ir_version, 4))
        part.functions.extend(self.model.functions)
        return part

    def value_info(self, name: str) -> Any:
        """A ``ValueInfoProto`` of tensor ``name`` for a sub-model's inputs and outputs.

        Raises
        ------
        ProblemError
            When shape inference left the tensor's type unknown.
        """
        onnx = need("onnx", importer="execute", extra="onnx")
        kind = self.types.get(name)
        if kind is None or not kind.HasField("tensor_type") or not kind.tensor_type.elem_type:
            raise ProblemError(f"{self.path}: shape inference left the type of tensor '{name}' "
                               f"unknown, so the model cannot be cut there")
        info = onnx.ValueInfoProto()
        info.name = name
        info.type.CopyFrom(kind)
        return info


def load_model(path: str | Path, shape: Any = None) -> ModelTasks:
    """Read ``path`` and name its tasks as ``schedkit convert onnx`` does.

    Parameters
    ----------
    path : str or Path
        The ONNX model.
    shape : str, list of str or dict, optional
        ``NAME=D1,D2,...`` for an input, or ``NAME=N`` for a symbolic dimension
        (:func:`~schedkit.importers.onnx_model.parse_shapes`).

    Raises
    ------
    ProblemError
        When the file is missing or not a model, an input keeps a dynamic dimension, or
        shape inference fails.
    """
    onnx = need("onnx", importer="execute", extra="onnx")
    path = Path(path)
    model = prepared_model(onnx, path, shape)
    try:  # the weights of a large model live beside it; the sub-models copy them
        onnx.external_data_helper.load_external_data_for_model(model, str(path.parent))
    except Exception as exc:  # a missing or short external-data file
        raise ProblemError(f"{path}: its external data cannot be read ({first_line(exc)})") from None
    model = inferred_model(onnx, model, path)
    weights = {t.name for t in model.graph.initializer}
    graph = model.graph
    names = unique_names([(n.name, n.op_type, list(n.output)) for n in graph.node])
    protos = dict(zip(names, graph.node))
    nodes = [Node(task, n.op_type, list(n.input) + outer_references(onnx, n), list(n.output))
             for task, n in zip(names, graph.node)]
    ops = operator_graph(nodes, constants=weights)
    folded_names = {n.name for n in ops.folded}
    constants = weights | {o for n in ops.folded for o in n.outputs if o}
    types = {i.name: i.type for i in list(graph.value_info) + list(graph.input) + list(graph.output)}
    for init in graph.initializer:
        types.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
    return ModelTasks(
        model=model, path=path, nodes={n.name: protos[n.name] for n in ops.operators},
        order=[n.name for n in ops.operators],
        inputs={n.name: list(dict.fromkeys(t for t in n.inputs if t)) for n in ops.operators},
        outputs={n.name: [t for t in n.outputs if t] for n in ops.operators},
        producer=dict(ops.producer), folded=[protos[name] for name in names if name in folded_names],
        constants=constants, graph_inputs=[i.name for i in graph.input if i.name not in weights],
        graph_outputs=[o.name for o in graph.output], types=types)


def constant_values(tasks: ModelTasks, runtime: Any) -> dict[str, Any]:
    """The value of every folded tensor an operator or the model's output reads, computed once.

    Parameters
    ----------
    tasks : ModelTasks
        The model.
    runtime : module
        ``onnxruntime``.

    Returns
    -------
    dict
        Tensor name -> numpy array (initializers are not included: sub-models copy them).

    Examples
    --------
    >>> import pathlib, tempfile, onnxruntime
    >>> from onnx import TensorProto, helper, save
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    >>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    >>> shape = helper.make_tensor("s", TensorProto.INT64, [1], [2])
    >>> nodes = [helper.make_node("ConstantOfShape", ["s"], ["w"]), helper.make_node("Add", ["x", "w"], ["y"])]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.onnx"
    >>> save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [shape])), path)
    >>> constant_values(load_model(path), onnxruntime)
    {'w': array([0., 0.], dtype=float32)}
    """
    if not tasks.folded:
        return {}
    onnx = need("onnx", importer="execute", extra="onnx")
    read = {t for name in tasks.order for t in tasks.nodes[name].input} | set(tasks.graph_outputs)
    wanted = [o for node in tasks.folded for o in node.output if o and o in read]
    if not wanted:
        return {}
    used = {t for node in tasks.folded for t in node.input}
    graph = onnx.helper.make_graph(list(tasks.folded), "constants", [],
                                   [tasks.value_info(name) for name in wanted],
                                   [t for t in tasks.model.graph.initializer if t.name in used])
    model = tasks.part_model(graph)
    try:
        options = runtime.SessionOptions()
        options.log_severity_level = 3  # errors only: its warnings about folding are no news
        session = runtime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
        values = session.run(wanted, {})
    except Exception as exc:  # onnxruntime's own error types
        raise ProblemError(f"{tasks.path}: the model's constants cannot be computed: "
                           f"{first_line(exc)}") from None
    return dict(zip(wanted, values))
