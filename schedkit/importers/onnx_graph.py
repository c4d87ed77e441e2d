"""The operator graph of an ONNX model, with constants folded away (no ``onnx`` import here).

:func:`operator_graph` works on plain data taken from the model (:class:`Node` rows and the
set of constant tensors): every node whose inputs are all constant (``Constant``,
``ConstantOfShape`` and whatever computes on weights only, such as ``Unsqueeze`` of a
weight) is *folded*: its outputs become weights of the nodes that read them, and it is not a
task. The remaining nodes are the operators that run for every input; a tensor that one of
them produces and another reads is an edge.

Examples
--------
>>> nodes = [Node("w", "ConstantOfShape", ["w_shape"], ["w"]),
...          Node("conv", "Conv", ["x", "w"], ["y"]),
...          Node("relu", "Relu", ["y"], ["z"])]
>>> graph = operator_graph(nodes, constants={"w_shape"})
>>> [n.name for n in graph.operators], graph.weights["conv"], graph.edges
(['conv', 'relu'], ['w'], {('conv', 'relu'): ['y']})
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Node", "OperatorGraph", "operator_graph", "unique_names"]

#: Operators whose outputs are not a function of their inputs: never folded.
_NOT_FOLDED = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike",
                         "RandomUniformLike", "Multinomial", "Bernoulli"})


@dataclass
class Node:
    """One ONNX node: its (unique) task name, operator type, inputs and outputs.

    ``inputs`` includes the outer-scope tensors a node's subgraphs (``If``, ``Loop``,
    ``Scan``) read, so that they order the node like ordinary inputs.
    """

    name: str
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict = field(default_factory=dict)


@dataclass
class OperatorGraph:
    """The operators left after folding, and what connects them.

    Attributes
    ----------
    operators : list of Node
        The nodes that become tasks, in model order.
    folded : list of Node
        The constant nodes folded into weights.
    weights : dict
        Task name -> the constant tensors it reads (initializers and folded outputs).
    edges : dict
        ``(producer, consumer)`` -> the tensors that flow between them.
    producer : dict
        Tensor name -> the task that produces it.
    """

    operators: list[Node]
    folded: list[Node]
    weights: dict[str, list[str]]
    edges: dict[tuple[str, str], list[str]]
    producer: dict[str, str]


def unique_names(nodes: list[tuple[str, str, list[str]]]) -> list[str]:
    """A unique task name per node: its name, else its first output, else ``op_k``.

    Parameters
    ----------
    nodes : list of (name, op, outputs)
        In model order.

    Examples
    --------
    >>> unique_names([("a", "Relu", ["y"]), ("", "Add", ["z"]), ("a", "Mul", []), ("", "Mul", [])])
    ['a', 'z', 'a_2', 'Mul_3']
    """
    taken: set[str] = set()
    names = []
    for k, (name, op, outputs) in enumerate(nodes):
        base = name or next((o for o in outputs if o), "") or f"{op}_{k}"
        candidate = base
        if candidate in taken:
            candidate = f"{base}_{k}"
            while candidate in taken:
                candidate += "_"
        taken.add(candidate)
        names.append(candidate)
    return names


def operator_graph(nodes: list[Node], constants: set[str]) -> OperatorGraph:
    """Fold the constant nodes and connect the remaining operators.

    Parameters
    ----------
    nodes : list of Node
        The model's nodes in topological order (the order ONNX requires).
    constants : set of str
        Tensors known before any node runs: the initializers.

    Returns
    -------
    OperatorGraph
    """
    constant = set(constants)
    operators, folded = [], []
    producer: dict[str, str] = {}
    for node in nodes:
        real_inputs = [t for t in node.inputs if t]
        if node.op not in _NOT_FOLDED and all(t in constant for t in real_inputs):
            folded.append(node)
            constant.update(o for o in node.outputs if o)
            continue
        operators.append(node)
        for out in node.outputs:
            if out:
                producer[out] = node.name
    weights: dict[str, list[str]] = {}
    edges: dict[tuple[str, str], list[str]] = {}
    for node in operators:
        seen = set()
        for tensor in node.inputs:
            if not tensor or tensor in seen:
                continue
            seen.add(tensor)
            if tensor in constant:
                weights.setdefault(node.name, []).append(tensor)
            elif tensor in producer and producer[tensor] != node.name:
                edges.setdefault((producer[tensor], node.name), []).append(tensor)
    return OperatorGraph(operators, folded, weights, edges, producer)
