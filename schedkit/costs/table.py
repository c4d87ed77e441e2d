"""The cost table (``schedkit-costs/v1``): measured times of a model's nodes on one device.

A cost table is what a measurement leaves behind: ``schedkit profile`` writes one from
onnxruntime's profiler, ``schedkit costs import`` from a profile or trace measured
elsewhere. ``schedkit convert onnx --costs`` puts its times into a problem and
``schedkit calibrate`` fits a device's roofline to it. Times are in the table's ``unit``
(milliseconds by default). Per node: the median, mean and 95th percentile over the profiled
runs of the node's time in one run (the sum of its ``calls`` kernel launches in that run),
the bytes of its outputs and, where the ONNX importer's cost rules know the operator, its
FLOPs and bytes moved (so that calibration needs the table alone). ``total`` is the whole
model's latency measured without the profiler, when the measurement had it.

**Time outside the nodes.** A run takes longer than its kernels: the call into the runtime,
allocation and dispatch between kernels, kernels the runtime made itself. A plan adds node
times, so each node that ran (``calls`` > 0) carries an equal share of that time
(:meth:`CostTable.overhead`, :meth:`CostTable.measured`): on one device the durations then
sum to the measured latency. The time is ``total.overhead`` when the profile measured it
(``schedkit profile``: the median over runs of an unprofiled run's latency minus the node
kernel time of the profiled run taken right after it, so that a change of the machine's
load weighs on both sides alike), else ``total.median`` minus the sum of the node medians.
The second is the fallback only: on a shared machine a median of whole runs and a sum of
per-node medians are different statistics (a run slowed by another process moves the first,
rarely the second). A negative difference (the profiler's own cost per kernel, within noise)
counts as 0: node times are never shortened.

Examples
--------
>>> table = CostTable(source="onnxruntime", runs=3,
...                   device={"type": "cpu", "host": "box", "provider": "CPUExecutionProvider"},
...                   model={"name": "mlp"},
...                   nodes=[{"name": "fc", "op_type": "Gemm", "median": 0.5, "mean": 0.52,
...                           "p95": 0.6, "calls": 1, "output_bytes": 256, "flops": 2e6}])
>>> table.nodes[0].median, table.unit, table.seconds(table.nodes[0].median)
(0.5, 'ms', 0.0005)
>>> parse_cost_table({**table.model_dump(), "runs": 0}, "t.json")
Traceback (most recent call last):
...
schedkit.errors.ProblemError: t.json: runs: Input should be greater than or equal to 1
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schedkit.errors import ProblemError, quoted
from schedkit.importers.measured import MeasuredTimes
from schedkit.importers.platform import TIME_UNITS
from schedkit.problem.reading import parse_format, read_data
from schedkit.problem.spec import Name, NonNegative

__all__ = ["COSTS_FORMAT", "SOURCES", "CostTable", "CostDevice", "ModelInfo", "NodeCost", "Total",
           "parse_cost_table", "read_cost_table"]

COSTS_FORMAT = "schedkit-costs/v1"
#: Where a table's times come from.
SOURCES = ("onnxruntime", "chrome-trace", "pytorch-profiler")

Count = Annotated[int, Field(ge=1)]
Whole = Annotated[int, Field(ge=0)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CostDevice(_Frozen):
    """The device the times were measured on."""

    type: Name
    """Device type (``cpu``, ``gpu``): ``convert onnx --costs`` gives the times to the
    platform's devices of this type unless told otherwise."""
    host: str | None = None
    """The machine (its host name)."""
    provider: str | None = None
    """The runtime's backend (onnxruntime's execution provider, ``CPUExecutionProvider``)."""
    threads: Count | None = None
    """Threads the runtime was given (intra-op), when known."""
    name: str | None = None
    """The device's own name (``NVIDIA H200``), when known."""


class ModelInfo(_Frozen):
    """The model measured."""

    name: Name
    """Model name (the file's stem)."""
    sha256: str | None = None
    """SHA-256 of the model file, when a file was measured."""

    @classmethod
    def of_file(cls, path: str | Path) -> ModelInfo:
        """The name (stem) and SHA-256 of a model file.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.onnx"
        >>> _ = path.write_bytes(b"")
        >>> ModelInfo.of_file(path).sha256[:12]
        'e3b0c44298fc'
        """
        import hashlib

        from schedkit.problem.reading import file_path

        path = file_path(path)
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise ProblemError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return cls(name=path.stem, sha256=digest)


class Total(_Frozen):
    """The whole model's latency, measured end to end without the profiler."""

    median: NonNegative
    mean: NonNegative
    overhead: float | None = None
    """Time of a run outside the table's nodes: the median over runs of the unprofiled
    latency minus the node kernel time of the paired profiled run (``schedkit profile``); may
    be slightly negative, as the profiler's own cost is inside the kernel times."""


class NodeCost(_Frozen):
    """Measured time of one node (operator) of the model."""

    name: Name
    """The node's name (the task's name in the converted problem)."""
    op_type: str
    """Operator type (``Conv``)."""
    median: NonNegative
    """Median over the runs of the node's time in one run."""
    mean: NonNegative
    """Mean over the runs."""
    p95: NonNegative
    """95th percentile over the runs."""
    calls: Whole = 1
    """Kernel executions of the node per run (its time in a run is their sum); 0 when the
    runtime ran nothing of its own for it (fused into a neighbour, folded into weights): its
    time is then 0 and counted in the node it was fused into."""
    output_bytes: Whole = 0
    """Bytes of the node's outputs."""
    flops: NonNegative | None = None
    """Floating-point operations of one execution (the ONNX importer's cost rules)."""
    bytes: NonNegative | None = None
    """Bytes one execution moves (the ONNX importer's cost rules)."""


class CostTable(_Frozen):
    """A ``schedkit-costs/v1`` table: per node of one model, its time on one device."""

    format: Literal["schedkit-costs/v1"] = COSTS_FORMAT
    unit: Literal["s", "ms", "us"] = "ms"
    """Unit of every time in the table."""
    source: Literal["onnxruntime", "chrome-trace", "pytorch-profiler"]
    """What measured the times."""
    device: CostDevice
    model: ModelInfo
    runs: Count
    """Number of measured runs the statistics are over."""
    total: Total | None = None
    """Whole-model latency without the profiler, when measured."""
    nodes: list[NodeCost] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_nodes(self) -> CostTable:
        seen: set[str] = set()
        for node in self.nodes:
            if node.name in seen:
                raise ValueError(f"duplicate node name {quoted(node.name)}")
            seen.add(node.name)
        return self

    def seconds(self, value: float) -> float:
        """``value`` (a time of this table) in seconds."""
        return value / (1.0 / TIME_UNITS[self.unit])  # 20 us -> 2e-05 s, not 1.9999999999999998e-05

    def medians(self) -> dict[str, float]:
        """Node name -> median time, in seconds.

        Examples
        --------
        >>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"},
        ...                   model={"name": "m"}, unit="us",
        ...                   nodes=[{"name": "a", "op_type": "Relu", "median": 20,
        ...                           "mean": 20, "p95": 20}])
        >>> table.medians()
        {'a': 2e-05}
        """
        return {node.name: self.seconds(node.median) for node in self.nodes}

    def ran(self) -> list[NodeCost]:
        """The nodes the runtime executed (``calls`` > 0 and a time above 0): those that share
        the time outside the nodes."""
        return [node for node in self.nodes if node.calls > 0 and node.median > 0]

    def overhead(self) -> float:
        """Seconds of a run spent outside the table's nodes (0 when unknown or negative).

        ``total.overhead`` when measured, else ``total.median`` minus the nodes' medians
        (see the module documentation).

        Examples
        --------
        >>> nodes = [{"name": n, "op_type": "Relu", "median": 1, "mean": 1, "p95": 1}
        ...          for n in "ab"]
        >>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"},
        ...                   model={"name": "m"}, nodes=nodes, total={"median": 3, "mean": 3})
        >>> table.overhead(), table.latency()
        (0.001, 0.003)
        >>> table.model_copy(update={"total": Total(median=5, mean=5, overhead=0.2)}).overhead()
        0.0002
        """
        if self.total is None:
            return 0.0
        gap = self.total.overhead if self.total.overhead is not None else \
            self.total.median - sum(node.median for node in self.nodes)
        return self.seconds(max(gap, 0.0)) if self.ran() else 0.0

    def latency(self) -> float:
        """Seconds the table predicts for a whole run on one device: its nodes' medians plus
        :meth:`overhead`, what the durations of ``convert onnx --costs`` sum to."""
        return sum(self.medians().values()) + self.overhead()

    def measured(self, target: str | None = None, source: str = "cost table") -> MeasuredTimes:
        """The table's times as plain data for the ONNX importer (``convert onnx --costs``):
        each node's median, plus an equal share of :meth:`overhead` for each node that ran.

        Parameters
        ----------
        target : str, optional
            A device or device type of the platform that gets these times (by default the
            platform's devices of the table's device type).
        source : str
            How messages name the table (its file).

        Examples
        --------
        >>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"},
        ...                   model={"name": "m"},
        ...                   nodes=[{"name": "a", "op_type": "Relu", "median": 2,
        ...                           "mean": 2, "p95": 2}])
        >>> m = table.measured("cpu1", "t.json")
        >>> m.times, m.device_type, m.target, m.model, m.overhead
        ({'a': 0.002}, 'cpu', 'cpu1', 'm', 0.0)
        >>> m = table.model_copy(update={"total": Total(median=2.5, mean=2.5)}).measured()
        >>> round(m.times["a"], 9), m.overhead
        (0.0025, 0.0005)
        """
        ran = self.ran()
        share = self.overhead() / len(ran) if ran else 0.0
        times = self.medians()
        for node in ran:
            times[node.name] += share
        return MeasuredTimes(times=times, device_type=self.device.type,
                             device_name=self.device.name, target=target, source=source,
                             model=self.model.name, ops={n.name: n.op_type for n in self.nodes},
                             overhead=share)

    def to_json(self) -> str:
        """The table as JSON text (fields left unset are omitted)."""
        return json.dumps(self.model_dump(exclude_none=True), indent=1) + "\n"

    def write(self, path: str | Path) -> None:
        """Write the table as JSON, atomically (a reader never sees half a file).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.json"
        >>> CostTable(source="onnxruntime", runs=1, device={"type": "cpu"}, model={"name": "m"},
        ...           nodes=[{"name": "a", "op_type": "Relu", "median": 1, "mean": 1,
        ...                   "p95": 1}]).write(out)
        >>> read_cost_table(out).nodes[0].name
        'a'
        """
        from schedkit.atomic import write_text_atomic

        write_text_atomic(path, self.to_json())


def parse_cost_table(data: Any, source: str = "cost table") -> CostTable:
    """Validate Python data as a :class:`CostTable` (one-line :class:`ProblemError` otherwise).

    Examples
    --------
    >>> parse_cost_table({"format": "schedkit/v1"}, "p.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: p.json: unsupported format 'schedkit/v1' (expected 'schedkit-costs/v1')
    """
    return parse_format(data, CostTable, COSTS_FORMAT, source, f"'nodes' (a {COSTS_FORMAT} file)", required=True)


def read_cost_table(path: str | Path) -> CostTable:
    """Read a cost table file (JSON; a key given twice is refused as in problem files).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = path.write_text('{"format": "schedkit-costs/v1", "format": "x"}')
    >>> read_cost_table(path)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: .../t.json: malformed JSON: duplicate key 'format'
    """
    return parse_cost_table(read_data(path), source=str(path))
