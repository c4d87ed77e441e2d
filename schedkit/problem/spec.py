"""The ``schedkit/v1`` problem file: pydantic models, loading and validation.

A :class:`ProblemSpec` is plain, frozen data. It checks everything that can be
checked without building a model: numbers are finite and non-negative, names are
unique and known, the task graph is acyclic, every task fits at least one device.
Errors name the offending item in one line.

Examples
--------
>>> spec = ProblemSpec.model_validate({
...     "format": "schedkit/v1", "name": "tiny",
...     "devices": [{"name": "gpu"}, {"name": "cpu"}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 10}],
...     "tasks": [{"name": "a", "durations": {"gpu": 1, "cpu": 4}},
...               {"name": "b", "work": 2}],
...     "edges": [{"src": "a", "dst": "b", "size": 5}]})
>>> [t.name for t in spec.tasks]
['a', 'b']
"""

from __future__ import annotations

import math
import sys
from functools import cached_property
from typing import Annotated, Any, Literal

import numpy as np

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

from schedkit.errors import quoted
from schedkit.numerics import fits
from schedkit.problem.cluster import check_batch_sizes, check_names, devices_named, name_sets
from schedkit.problem.dag import acyclic
from schedkit.problem.reading import parse_format

FORMAT = "schedkit/v1"


_LARGEST_FLOAT = int(sys.float_info.max)


def _to_number(value: Any) -> float:
    # YAML 1.1 reads ``16e9`` (no dot) as a string: accept numeric strings, but
    # nothing that is not a finite number (booleans are ints in Python: refuse them).
    if isinstance(value, bool):
        raise ValueError(f"not a number: {quoted(value)}")
    if isinstance(value, int) and abs(value) > _LARGEST_FLOAT:  # float() would raise OverflowError
        raise ValueError(f"not a finite number: an integer of {len(str(abs(value)))} digits")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ValueError(f"not a number: {quoted(value)}") from None
    else:
        raise ValueError(f"not a number: {quoted(value)}")
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {quoted(value)}")
    return number


Number = Annotated[float, BeforeValidator(_to_number)]
NonNegative = Annotated[Number, Field(ge=0)]
Positive = Annotated[Number, Field(gt=0)]
Name = Annotated[str, Field(min_length=1)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class DeviceSpec(_Frozen):
    """A device: a CPU, GPU, accelerator or server."""

    name: Name
    """Unique device name."""
    memory: NonNegative | None = None
    """Memory capacity; ``None`` (the default) means unlimited."""
    speed: Positive = 1.0
    """Speed: a task that gives ``work`` runs ``work / speed`` time units here."""
    group: str | None = None
    """Identical devices share a group (used by symmetry breaking); a link's end may name a
    group (a server) to stand for each of its devices."""
    type: Name | None = None
    """Device type: a task's ``durations`` may key an entry by it, for every device of the
    type that has no entry of its own name. Spelled unlike any device name."""
    batch_sizes: list[Annotated[int, Field(ge=1)]] | None = None
    """Batch sizes this device supports (batching formulations)."""


class LinkSpec(_Frozen):
    """A communication link between two devices, or between the devices of groups.

    An end that names a device ``group`` stands for each of its devices; ``src == dst`` a
    group joins every two distinct devices of it. A link between two devices takes
    precedence over group links for its pairs (:mod:`schedkit.problem.cluster`).
    """

    src: Name
    """A device, or a device group."""
    dst: Name
    """A device, or a device group."""
    bandwidth: Positive
    """Data per time unit."""
    latency: NonNegative = 0.0
    """Fixed time added to every transfer over this link."""
    bidirectional: bool = True
    """A bidirectional link also carries data from ``dst`` to ``src``."""
    channel: str | None = None
    """The channel the link's transfers use: links (and both directions of a bidirectional
    link, and every pair of devices of a group link) that give one name share one channel (a
    PCIe switch, a NIC, a half-duplex bus); by default each direction between two devices is
    its own channel, named ``SRC->DST`` by device names. A transfer holds every
    channel of its route; under ``congestion`` no two transfers hold one at once."""


DurationValue = Number | dict[Annotated[int, Field(ge=1)], Number]


class TaskSpec(_Frozen):
    """A task (an operator or layer of the network)."""

    name: Name
    durations: dict[str, DurationValue] | None = None
    """Duration per device or per device ``type`` (a device's own entry first); the task may
    run only on the devices named here or of a type named here. A value may be a map
    ``{batch size: duration}`` for batching formulations."""
    work: NonNegative | None = None
    """Alternative to ``durations``: the task runs on every device, in ``work / speed``."""
    memory: NonNegative = 0.0
    """Static memory the task occupies on its device."""
    output_size: NonNegative = 0.0
    """Default size of the data on the task's outgoing edges."""
    pin: list[Name] | None = None
    """Devices the task is restricted to (intersected with ``durations``)."""
    colocate: str | None = None
    """Tasks with the same group name must share a device."""
    op: str | None = None
    """Operator type (used by operator-fusion coarsening)."""
    weight_memory: NonNegative | None = None
    """Weights kept on the device (memory timeline formulations)."""
    activation_memory: Number | None = None
    """Activations produced by the task (memory timeline formulations): under
    ``memory_timeline: {mode: deltas}`` a positive amount is taken when the task starts and
    a negative one released when it ends; under ``mode: lifetime`` the size of its output
    (never negative)."""

    def duration_on(self, device: DeviceSpec) -> float | None:
        """Duration of one input on ``device``, or ``None`` where the task cannot run."""
        if self.durations is None:
            return self.work / device.speed
        value = self.entry(device)
        if isinstance(value, dict):
            return value.get(1)
        return value

    def entry(self, device: DeviceSpec) -> DurationValue | None:
        """The ``durations`` entry ``device`` takes: of its name, else of its type (``None``:
        neither, or a task that gives ``work``).

        Examples
        --------
        >>> task = TaskSpec(name="t", durations={"a100": 2.0, "g1": {1: 3.0, 4: 9.0}})
        >>> [task.entry(DeviceSpec(name=n, type="a100")) for n in ("g0", "g1")]
        [2.0, {1: 3.0, 4: 9.0}]
        >>> task.duration_on(DeviceSpec(name="g1")), task.entry(DeviceSpec(name="cpu"))
        (3.0, None)
        """
        if self.durations is None:
            return None
        value = self.durations.get(device.name)
        if value is None and device.type is not None:
            value = self.durations.get(device.type)
        return value


class EdgeSpec(_Frozen):
    """A data dependency: ``dst`` starts after ``src`` ends and its data arrived."""

    src: Name
    dst: Name
    size: NonNegative | None = None
    """Data size; defaults to ``src``'s ``output_size``."""
    transfer_times: dict[str, NonNegative] | None = None
    """Transfer time of this edge's data from device ``U`` to device ``V``, keyed ``"U->V"``
    (MOIRAI's per-flow channel table), still over the route's channels; pairs not listed use
    size, bandwidth and latency. The edge's size must be positive; a time of 0 makes no transfer."""

    def pairs(self) -> dict[tuple[str, str], float]:
        """``transfer_times`` keyed by ``(U, V)`` device names."""
        return {tuple(key.split("->", 1)): t for key, t in (self.transfer_times or {}).items()}


class WorkloadSpec(_Frozen):
    """What is asked of the whole graph: ``inputs`` L inputs, split into batches (DiviML)."""

    inputs: Annotated[int, Field(ge=1)]
    """Number of inputs of the graph to process (the ``batching`` block splits them)."""


class ProblemSpec(_Frozen):
    """A whole problem: devices, links, tasks and edges (format ``schedkit/v1``)."""

    format: Literal["schedkit/v1"] = FORMAT
    name: Name = "problem"
    devices: list[DeviceSpec] = Field(min_length=1)
    links: list[LinkSpec] = []
    tasks: list[TaskSpec] = Field(min_length=1)
    edges: list[EdgeSpec] = []
    """The edges: a list, or where a large file's edges were loaded in bulk an
    :class:`~schedkit.problem.edge_table.EdgeTable`, a sequence of the same ``EdgeSpec``
    held as columns."""
    workload: WorkloadSpec | None = None
    """Optional workload ``{inputs: L}`` for batching formulations (by default one input)."""
    time_unit: Literal["s", "ms", "us"] | None = None
    """Unit of every time of the problem (durations, latencies; bandwidths are data per this
    unit), when known: importers of physical times record it and summaries and pictures show
    it. Absent, times are unit-free."""
    measured: dict[Name, Annotated[int, Field(ge=0)]] | None = None
    """Per device, how many task durations on it were measured (``convert onnx --costs``)
    rather than estimated by the roofline; absent when none was measured."""
    measured_overhead: dict[Name, NonNegative] | None = None
    """Per device, the time each measured duration on it includes beyond its node's kernels:
    its share of the time a measured run spends outside the nodes (dispatch, allocation, the
    call), so that on one device the durations sum to the measured latency
    (:meth:`schedkit.costs.CostTable.overhead`)."""

    @field_serializer("edges", mode="wrap")
    def _dump_edges(self, edges, handler):
        # An EdgeTable makes its EdgeSpec for the dump, which then writes each as before.
        return handler(edges if isinstance(edges, list) else list(edges))

    @model_validator(mode="after")
    def _check_consistency(self) -> ProblemSpec:
        names = [d.name for d in self.devices]
        devices = _unique(names, "device")
        by_name = {d.name: d for d in self.devices}
        tasks = _unique([t.name for t in self.tasks], "task")
        types, groups = name_sets(self.devices)
        check_names(names, types, groups)
        for key in ("measured", "measured_overhead"):
            for device in getattr(self, key) or {}:
                if device not in devices:
                    raise ValueError(f"{key}: unknown device '{device}'")
        end_kind = "device or group" if groups else "device"
        for link in self.links:
            for end in (link.src, link.dst):
                if end not in devices and end not in groups:
                    raise ValueError(f"link {link.src}->{link.dst}: unknown {end_kind} '{end}'")
            if link.src == link.dst and link.src in devices:
                raise ValueError(f"link {link.src}->{link.dst}: a link joins two different devices")
        key_kind = "device or type" if types else "device"
        for task in self.tasks:
            if (task.durations is None) == (task.work is None):
                raise ValueError(f"task '{task.name}': give exactly one of 'durations' or 'work'")
            for dev in task.durations or {}:
                if dev not in devices and dev not in types:
                    raise ValueError(f"task '{task.name}': unknown {key_kind} '{dev}'")
            for dev in task.pin or []:
                if dev not in devices:
                    raise ValueError(f"task '{task.name}': unknown device '{dev}'")
            for dev, value in (task.durations or {}).items():
                if isinstance(value, dict):
                    check_batch_sizes(task, dev, value, by_name, types, self.devices)
                    bad = [k for k, v in value.items() if v < 0]
                else:
                    bad = [value] if value < 0 else []
                if bad:
                    raise ValueError(f"task '{task.name}': negative duration on '{dev}'")
            # The devices the task may use: its durations' keys (or every device, for 'work'),
            # restricted by its pins; looked up by name and by type, not by trying every device.
            keys = task.durations.keys() if task.durations is not None else by_name.keys()
            room = None  # None: no device may run it; False: none has room for its memory
            for d in devices_named(keys, by_name, types, self.devices):
                if task.pin is None or d.name in task.pin:
                    room = d.memory is None or fits(task.memory, d.memory)
                    if room:
                        break
            if room is None:
                raise ValueError(f"task '{task.name}': no device can run it (durations and pin exclude all)")
            if not room:
                raise ValueError(f"task '{task.name}': its memory {task.memory:g} fits no device it may run on")
        seen = set()
        for edge in self.edges:
            label = f"edge {edge.src}->{edge.dst}"
            for end in (edge.src, edge.dst):
                if end not in tasks:
                    raise ValueError(f"{label}: unknown task '{end}'")
            if edge.src == edge.dst:
                raise ValueError(f"{label}: a task cannot depend on itself")
            if (edge.src, edge.dst) in seen:
                raise ValueError(f"{label}: duplicate edge")
            seen.add((edge.src, edge.dst))
            for key in edge.transfer_times or {}:
                ends = key.split("->")
                if len(ends) != 2:
                    raise ValueError(f"{label}: transfer time key '{key}' is not 'SRC->DST'")
                for end in ends:
                    if end not in devices:
                        raise ValueError(f"{label}: transfer time '{key}': unknown device '{end}'")
                if ends[0] == ends[1]:
                    raise ValueError(f"{label}: transfer time '{key}': data on one device does not move")
            if edge.transfer_times and self.edge_size(edge) == 0:
                raise ValueError(f"{label}: 'transfer_times' needs a positive size (an edge of size 0 "
                                 f"moves no data)")
        # Kahn's count on indices is cheap; networkx finds the cycle to name only when there is one.
        cycle = None if _acyclic(seen, self.tasks) else _find_cycle(seen)
        if cycle:
            path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
            raise ValueError(f"the task graph has a cycle: {path}")
        return self

    def edge_size(self, edge: EdgeSpec) -> float:
        """Size of the data on ``edge`` (its own size, else its source's output size)."""
        if edge.size is not None:
            return edge.size
        return self._output_sizes[edge.src]

    @cached_property
    def _output_sizes(self) -> dict[str, float]:
        return {t.name: t.output_size for t in self.tasks}


def _acyclic(edges: set[tuple[str, str]], tasks: list[TaskSpec]) -> bool:
    """Whether the graph of ``edges`` (between known tasks) has no cycle, checked on indices."""
    index = {t.name: k for k, t in enumerate(tasks)}
    ends = np.array([(index[a], index[b]) for a, b in edges], dtype=np.int64).reshape(-1, 2)
    return acyclic(ends[:, 0], ends[:, 1], len(tasks))


def _unique(names: list[str], what: str) -> set[str]:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"duplicate {what} name '{name}'")
        seen.add(name)
    return seen


def checked_spec(data: Any, source: str = "problem") -> ProblemSpec:
    """Python data validated as a :class:`ProblemSpec` in full, row by row: the path that names
    any error (:func:`schedkit.problem.loading.parse_spec` tries the bulk check first).

    Examples
    --------
    >>> checked_spec({"devices": [{"name": "d"}], "tasks": [{"name": "t", "durations": {"e": 1}}]})
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: problem: task 't': unknown device 'e'
    """
    return parse_format(data, ProblemSpec, FORMAT, source, "'devices' and 'tasks'")


def _find_cycle(edges) -> list:
    """A cycle of the directed ``edges`` (networkx, loaded only when a graph has one)."""
    import networkx as nx

    return nx.find_cycle(nx.DiGraph(list(edges)))
