"""``schedkit costs import``: profiles measured elsewhere as cost tables, by the file's shape.

:func:`import_costs` reads a JSON file and hands it to the first format of
:data:`COST_FORMATS` whose ``detect`` accepts it. onnxruntime's own profile
(:mod:`~schedkit.costs.ort_profile`) is the first; another format slots in by appending a
:class:`CostFormat` (:func:`register_cost_format`): a ``detect(data)`` test on the parsed JSON and a
``read(data, source, options)`` that returns the table and notes for the user.

With ``model`` (the ONNX model measured), nodes are named as ``convert onnx`` names its tasks
and get their FLOPs and bytes, so that ``calibrate`` and ``convert onnx --costs`` can use the
table; without, the profile's own node names are kept.

Examples
--------
>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "ort.json"
>>> _ = path.write_text(json.dumps([
...     {"cat": "Session", "name": "model_run", "ts": 0, "dur": 90},
...     {"cat": "Node", "name": "fc_kernel_time", "ts": 1, "dur": 80,
...      "args": {"op_name": "Gemm", "output_size": "40", "provider": "CPUExecutionProvider"}}]))
>>> table, notes = import_costs(path)
>>> table.source, table.device.type, [(n.name, n.median) for n in table.nodes], notes
('onnxruntime', 'cpu', [('fc', 0.08)], [])
>>> _ = path.write_text('{"traceEvents": "none"}')
>>> import_costs(path)
Traceback (most recent call last):
...
schedkit.errors.ProblemError: .../ort.json: not a profile schedkit can import (known: onnxruntime, chrome-trace)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from schedkit.costs.ort_profile import is_ort_profile, kernel_runs, node_costs, provider_type
from schedkit.costs.table import CostTable, ModelInfo
from schedkit.costs.trace_table import is_chrome_trace, read_chrome_trace
from schedkit.errors import ProblemError
from schedkit.problem.reading import parse_json, read_text

__all__ = ["ImportOptions", "CostFormat", "COST_FORMATS", "register_cost_format", "import_costs"]


@dataclass(frozen=True)
class ImportOptions:
    """What ``costs import`` was told besides the file; a format ignores what it cannot use.

    Attributes
    ----------
    model : str or Path, optional
        The ONNX model the profile measured (``--model``).
    shape : list of str, optional
        ``--shape`` items for that model's symbolic dimensions.
    warmup : int
        Runs at the start of the profile to leave out (``--warmup``).
    device_type : str, optional
        The device type to record, instead of the one the file implies (``--device-type``).
    latency_ms : float, optional
        The model's latency per run measured without the profiler (``--latency-ms``): a
        trace's host times are scaled to it (:mod:`~schedkit.costs.trace_table`).
    """

    model: str | Path | None = None
    shape: Any = None
    warmup: int = 0
    device_type: str | None = None
    latency_ms: float | None = None


@dataclass(frozen=True)
class CostFormat:
    """A file format ``costs import`` reads: its name, a test on the parsed JSON, a reader."""

    name: str
    detect: Callable[[Any], bool]
    read: Callable[[Any, str, ImportOptions], tuple[CostTable, list[str]]]


def _read_ort(data: Any, source: str, options: ImportOptions) -> tuple[CostTable, list[str]]:
    runs = kernel_runs(data, source, skip=options.warmup)
    operators = None
    model = ModelInfo(name=Path(source).stem)
    if options.model is not None:
        from schedkit.importers.onnx import operator_costs

        operators, _ = operator_costs(options.model, options.shape)
        model = ModelInfo.of_file(options.model)
    rows, left_out = node_costs(runs, operators)
    notes = []
    if operators is not None and sum(row["calls"] for row in rows) == 0:
        raise ProblemError(f"{source}: none of its {len({k.node for run in runs for k in run})} profiled "
                           f"nodes is an operator of model '{model.name}' (a profile of another model?)")
    if left_out:
        shown = ", ".join(list(left_out)[:3]) + (", ..." if len(left_out) > 3 else "")
        notes.append(f"{len(left_out)} profiled node(s) are no operator of the model, left out "
                     f"({sum(left_out.values()):.6g} ms per run): {shown}")
    provider = next((k.provider for run in runs for k in run if k.provider), None)
    device = {"type": options.device_type or provider_type(provider), "provider": provider}
    return CostTable(source="onnxruntime", runs=len(runs), device=device, model=model, nodes=rows), notes


#: The formats ``costs import`` knows, tried in order.
COST_FORMATS: list[CostFormat] = [CostFormat("onnxruntime", is_ort_profile, _read_ort),
                                  CostFormat("chrome-trace", is_chrome_trace, read_chrome_trace)]


def register_cost_format(fmt: CostFormat, first: bool = False) -> None:
    """Add a format to :data:`COST_FORMATS` (replacing one of the same name).

    ``first`` tries it before the others (a test that accepts less than another's).

    Examples
    --------
    >>> fake = CostFormat("fake", lambda data: False, lambda data, source, options: None)
    >>> register_cost_format(fake); [f.name for f in COST_FORMATS][-1]
    'fake'
    >>> COST_FORMATS.remove(fake)
    """
    COST_FORMATS[:] = [f for f in COST_FORMATS if f.name != fmt.name]
    COST_FORMATS.insert(0, fmt) if first else COST_FORMATS.append(fmt)


def import_costs(path: str | Path, options: ImportOptions | None = None) -> tuple[CostTable, list[str]]:
    """Read a profile or trace file as a cost table (see the module documentation).

    Returns
    -------
    (CostTable, list of str)
        The table, and notes for the user (what was left out).

    Raises
    ------
    ProblemError
        A missing or malformed file, one of no known format, or one without durations.
    """
    source = str(path)
    data = parse_json(read_text(path), source)
    for fmt in COST_FORMATS:
        if fmt.detect(data):
            return fmt.read(data, source, options or ImportOptions())
    known = ", ".join(f.name for f in COST_FORMATS)
    raise ProblemError(f"{source}: not a profile schedkit can import (known: {known})")
