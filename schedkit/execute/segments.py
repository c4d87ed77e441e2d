"""Cut a placed model into segments: consecutive tasks of one device that run as one sub-model.

A device runs its tasks in the schedule's order. :func:`cut` groups consecutive tasks of a
device into one **segment** (one onnxruntime session) as long as running them as a unit
keeps the plan: a segment starts when every tensor it reads from elsewhere has arrived and
hands its outputs on when it ends, so a task ``t`` starts a new segment when

- one of its inputs from another device depends on a task of the current segment (running
  them as one unit would wait forever),
- one of its inputs from another device ends, in the schedule, after the current segment
  starts (the segment's earlier tasks would wait for it, later than planned), or
- a task of the current segment has a consumer on another device that the schedule starts
  before ``t`` ends (that consumer would wait for ``t`` as well).

:func:`segments` adds what each segment reads and hands on, and :func:`sub_model` writes it
as an ONNX model: its nodes in model order, the tensors it waits for as inputs, the ones other
segments (or the model's outputs) read as outputs, and the constants it reads as
initializers (folded weights given by their computed values).

Examples
--------
>>> order = {"cpu0": ["a", "b", "d"], "cpu1": ["c"]}
>>> preds = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}
>>> start = {"a": 0, "b": 1, "c": 2, "d": 3}
>>> end = {"a": 1, "b": 2, "c": 3, "d": 4}
>>> cut(order, preds, start, end)
{'cpu0': [['a', 'b'], ['d']], 'cpu1': [['c']]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedkit.errors import ScheduleError
from schedkit.execute.graph import ModelTasks
from schedkit.importers.base import need

__all__ = ["Segment", "cut", "segments", "sub_model"]


@dataclass(frozen=True)
class Segment:
    """Consecutive tasks of one device, run as one sub-model.

    Attributes
    ----------
    device : str
        The schedule's device that runs it.
    tasks : tuple of str
        Its tasks, in model (topological) order.
    inputs : tuple of str
        The tensors it waits for: model inputs and tensors of other segments.
    outputs : tuple of str
        The tensors it hands on: read by another segment, or outputs of the model.
    constants : tuple of str
        The initializers and folded weights it reads.
    """

    device: str
    tasks: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    constants: tuple[str, ...]

    @property
    def label(self) -> str:
        """``DEVICE[first..last]``, for messages."""
        span = self.tasks[0] if len(self.tasks) == 1 else f"{self.tasks[0]}..{self.tasks[-1]}"
        return f"{self.device}[{span}]"


def cut(order: dict[str, list[str]], preds: dict[str, list[str]], start: dict[str, float],
        end: dict[str, float], tolerance: float = 1e-9) -> dict[str, list[list[str]]]:
    """Group each device's tasks into segments (see the module documentation).

    Parameters
    ----------
    order : dict
        Device -> its tasks in the schedule's order (a topological order of the graph).
    preds : dict
        Task -> the tasks whose outputs it reads.
    start, end : dict
        Task -> its start and end in the schedule.
    tolerance : float
        Times closer than this are equal.

    Returns
    -------
    dict
        Device -> its segments, each a list of tasks in the schedule's order.

    Raises
    ------
    ScheduleError
        When the segments would wait on each other in a circle: the order of a device
        contradicts the model's dependencies.

    Examples
    --------
    >>> zero = {"a": 0, "b": 0, "c": 0}
    >>> cut({"d": ["b", "c"], "e": ["a"]}, {"a": ["c"], "b": ["a"], "c": []}, zero, zero)
    Traceback (most recent call last):
    ...
    schedkit.errors.ScheduleError: the schedule's order contradicts the model's dependencies: e[a] waits for d[b..c], which waits for e[a]
    """
    device_of = {t: d for d, tasks in order.items() for t in tasks}
    rank = {t: k for k, t in enumerate(_topological(preds))}
    ancestors: dict[str, int] = {}  # a bit set over ``rank``
    for task in sorted(preds, key=rank.__getitem__):
        bits = 0
        for p in preds[task]:
            bits |= ancestors[p] | (1 << rank[p])
        ancestors[task] = bits
    succs: dict[str, list[str]] = {t: [] for t in preds}
    for task, sources in preds.items():
        for p in sources:
            succs[p].append(task)
    result: dict[str, list[list[str]]] = {}
    for device, tasks in order.items():
        groups: list[list[str]] = []
        current: list[str] = []
        members = 0
        for task in tasks:
            if current and _breaks(task, current, members, device, device_of, preds, succs, ancestors,
                                   rank, start, end, tolerance):
                groups.append(current)
                current, members = [], 0
            current.append(task)
            members |= 1 << rank[task]
        if current:
            groups.append(current)
        result[device] = groups
    _check_no_circle(result, preds)
    return result


def _breaks(task, current, members, device, device_of, preds, succs, ancestors, rank, start, end,
            tolerance) -> bool:
    """Whether ``task`` must start a new segment after ``current`` (the module's three rules)."""
    first = start[current[0]]
    for p in preds[task]:
        if device_of[p] != device and ((ancestors[p] | (1 << rank[p])) & members
                                       or end[p] > first + tolerance):
            return True
    return any(device_of[c] != device and start[c] < end[task] - tolerance
               for member in current for c in succs[member])


def _topological(preds: dict[str, list[str]]) -> list[str]:
    """The tasks in an order where every task follows its predecessors."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(preds)
    graph.add_edges_from((p, t) for t, sources in preds.items() for p in sources)
    try:
        return list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        raise ScheduleError("the model's task graph has a cycle") from None


def _check_no_circle(groups: dict[str, list[list[str]]], preds: dict[str, list[str]]) -> None:
    """Refuse segments that wait on each other in a circle (they would never run)."""
    import networkx as nx

    where = {t: (d, k) for d, parts in groups.items() for k, part in enumerate(parts) for t in part}
    waits = nx.DiGraph()  # an edge (a, b): segment a waits for segment b
    for device, parts in groups.items():
        waits.add_edges_from(((device, k), (device, k - 1)) for k in range(1, len(parts)))
    waits.add_edges_from((where[t], where[p]) for t, sources in preds.items() for p in sources
                         if where[p] != where[t])
    try:
        (a, b), *_ = nx.find_cycle(waits)
    except nx.NetworkXNoCycle:
        return

    def show(key: tuple) -> str:
        part = groups[key[0]][key[1]]
        return f"{key[0]}[{part[0]}{'..' + part[-1] if len(part) > 1 else ''}]"
    raise ScheduleError("the schedule's order contradicts the model's dependencies: "
                        f"{show(a)} waits for {show(b)}, which waits for {show(a)}")


def segments(model: ModelTasks, groups: dict[str, list[list[str]]]) -> list[Segment]:
    """What each group of :func:`cut` reads and hands on, as :class:`Segment` rows.

    Parameters
    ----------
    model : ModelTasks
        The model.
    groups : dict
        Device -> its segments' tasks.

    Returns
    -------
    list of Segment
        Per device in turn, its segments in run order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from onnx import TensorProto, helper, save
    >>> from schedkit.execute.graph import load_model
    >>> v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])
    >>> nodes = [helper.make_node("Relu", ["x"], ["h"], name="a"), helper.make_node("Neg", ["h"], ["y"], name="b")]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.onnx"
    >>> save(helper.make_model(helper.make_graph(nodes, "g", [v("x")], [v("y")])), path)
    >>> [(s.label, s.inputs, s.outputs) for s in segments(load_model(path), {"c0": [["a"]], "c1": [["b"]]})]
    [('c0[a]', ('x',), ('h',)), ('c1[b]', ('h',), ('y',))]
    """
    rank = {t: k for k, t in enumerate(model.order)}
    owner = {t: (d, k) for d, parts in groups.items() for k, part in enumerate(parts) for t in part}
    wanted_outside: dict[tuple, set[str]] = {}
    for task in model.order:
        for tensor in model.inputs[task]:
            producer = model.producer.get(tensor)
            if producer is not None and owner[producer] != owner[task]:
                wanted_outside.setdefault(owner[producer], set()).add(tensor)
    finals = set(model.graph_outputs)
    rows = []
    for device, parts in groups.items():
        for k, part in enumerate(parts):
            tasks = sorted(part, key=rank.__getitem__)
            written = {t for task in tasks for t in model.outputs[task]}
            read = list(dict.fromkeys(t for task in tasks for t in model.inputs[task]))
            handed = wanted_outside.get((device, k), set()) | finals
            outputs = tuple(t for task in tasks for t in model.outputs[task] if t in handed)
            if not outputs:  # nobody reads them, yet a model needs an output and the tasks must run
                outputs = tuple(model.outputs[tasks[-1]][:1])
            rows.append(Segment(
                device, tuple(tasks),
                inputs=tuple(t for t in read if t not in written and t not in model.constants),
                outputs=outputs, constants=tuple(t for t in read if t in model.constants)))
    return rows


def sub_model(model: ModelTasks, segment: Segment, values: dict[str, Any]) -> Any:
    """The ONNX model of one segment.

    Parameters
    ----------
    model : ModelTasks
        The whole model.
    segment : Segment
        What to cut out.
    values : dict
        Folded tensor -> its value (:func:`~schedkit.execute.graph.constant_values`).

    Returns
    -------
    onnx.ModelProto
        Its nodes, its inputs and outputs typed by shape inference, its constants as
        initializers; the opset, IR version and local functions of the whole model.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from onnx import TensorProto, helper, save
    >>> from schedkit.execute.graph import load_model
    >>> v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])
    >>> nodes = [helper.make_node("Relu", ["x"], ["h"], name="a"), helper.make_node("Neg", ["h"], ["y"], name="b")]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.onnx"
    >>> save(helper.make_model(helper.make_graph(nodes, "g", [v("x")], [v("y")])), path)
    >>> model = load_model(path)
    >>> part = sub_model(model, segments(model, {"c0": [["a", "b"]]})[0], {})
    >>> [n.name for n in part.graph.node], [i.name for i in part.graph.output]
    (['a', 'b'], ['y'])
    """
    onnx = need("onnx", importer="execute", extra="onnx")
    from onnx import numpy_helper

    stored = {t.name: t for t in model.model.graph.initializer}
    initializers = [stored[name] if name in stored else numpy_helper.from_array(values[name], name)
                    for name in segment.constants]
    graph = onnx.helper.make_graph(
        [model.nodes[t] for t in segment.tasks], segment.label,
        [model.value_info(t) for t in segment.inputs], [model.value_info(t) for t in segment.outputs],
        initializers)
    return model.part_model(graph)
