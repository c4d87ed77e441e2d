"""A PyTorch trace as a cost table: which time of an operator is its time on the GPU.

:func:`trace_table` turns the calls of a :class:`~schedkit.costs.traces.Trace` into a
``schedkit-costs/v1`` table: grouped by operator name, or, with ``model``, matched onto an
ONNX model's nodes (:func:`~schedkit.costs.torch_ops.match_calls`) so that the table names
the nodes ``convert onnx`` writes and carries their FLOPs and bytes. As in every cost table,
a node's median, mean and p95 are over runs of its time in one run (all its calls in that
run). ``schedkit costs import TRACE.json [--model M.onnx] [--latency-ms MS] -o T.json``
reads a trace through :func:`read_chrome_trace`.

**The time of a node.** A schedule adds node times: on one device their sum is the
predicted latency, so the per-node time must sum to what a run really takes. The shared
H200 traces show that neither raw time does. ResNet-50, float32, batch 1: 175 operator
calls whose kernels take 0.80 ms in all, whose host calls take 9.8 ms under the profiler
(9.6 ms with the Python between calls and without the profiler's 2.3 ms buffer request),
and a measured unprofiled latency of 4.45 ms. Kernel time predicts 18 % of the latency:
the GPU idles between launches, a batch-1 run is bound by the eager loop on the host. Host
time predicts 2.2 times the latency: the profiler's own work (shapes, CUPTI callbacks) is
inside every host event. So a node's time is

    ``max(gpu, s * host)``

``host`` its share of the eager loop (its own call and the Python before it), ``gpu`` the
device time of its kernels (in a GPU-bound run, a large batch, the host runs ahead and the
kernels set the pace; the larger of the two is the usual approximation in between), and
``s`` one factor that takes the profiler's overhead out of host times: the one that makes a
run's node times sum to the unprofiled latency, when that is known (``latency_ms``, or the
``.ops.json`` the traces come with: :func:`ops_latency`). It is 0.465 for the float32 trace,
0.488 for the bfloat16 one (7.95 ms measured, 16.3 ms of host time) and 0.413 for the GPT
training step (6.88 ms measured, 16.7 ms of host time per step): the overhead is
close to proportional to the host work recorded, which one factor per trace follows better
than a fixed cost per recorded event (4.2 and 5.7 microseconds for the two ResNet traces). The table's ``total``
is then that latency. Without it ``s`` is 1: the profiled times, an overestimate, and no
``total``. The factor takes the overhead out of the sum, not out of each node: a node's
share of the profiler's cost may differ from its share of the host work.

Examples
--------
>>> from schedkit.costs.traces import parse_trace
>>> events = [{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "tid": 1, "ts": 0, "dur": 40},
...           {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "tid": 1, "ts": 40, "dur": 60}]
>>> result = trace_table(parse_trace(events, "t.json"), latency_ms=0.05)
>>> result.scale, [(n.name, n.median, n.calls) for n in result.table.nodes]
(0.5, [('aten::relu', 0.05, 2)])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from schedkit.costs.table import CostDevice, CostTable, ModelInfo
from schedkit.costs.torch_ops import match_calls, model_nodes, onnx_types
from schedkit.costs.traces import Trace, TracedCall, parse_trace
from schedkit.errors import ProblemError
from schedkit.problem.reading import read_data

__all__ = ["TraceTable", "trace_table", "scale_to_latency", "ops_latency", "ops_beside",
           "is_chrome_trace", "read_chrome_trace"]


@dataclass(frozen=True)
class TraceTable:
    """A cost table made from a trace, and how it was made.

    Attributes
    ----------
    table : CostTable
    scale : float
        The factor ``s`` on host times (1 when no latency was given).
    profiled_ms : float
        A run's node times with ``s = 1`` (what the profiled run took by this rule).
    unmatched_nodes : list of str
        Model nodes the trace never ran (they keep the roofline in ``convert onnx --costs``).
    """

    table: CostTable
    scale: float
    profiled_ms: float
    unmatched_nodes: list[str]


def scale_to_latency(host: list[float], gpu: list[float], target: float) -> float:
    """The ``s`` with ``sum(max(gpu, s * host)) == target`` (see the module documentation).

    Raises
    ------
    ProblemError
        When the kernels alone take longer than ``target`` (no ``s`` reaches it).

    Examples
    --------
    >>> scale_to_latency([10.0, 10.0], [1.0, 8.0], 13.0)
    0.5
    """
    def total(s: float) -> float:
        return sum(max(g, s * h) for h, g in zip(host, gpu))

    if total(0.0) > target * (1 + 1e-9) or (total(0.0) < target and not any(host)):
        raise ProblemError(f"the unprofiled latency {target / 1e3:.4g} ms cannot be met: the trace's "
                           f"kernels take {total(0.0) / 1e3:.4g} ms and its host calls "
                           f"{sum(host) / 1e3:.4g} ms per run")
    lo, hi = 0.0, 1.0
    while total(hi) < target:
        hi *= 2
    for _ in range(100):  # the sum is monotone in s: bisection to float precision
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < target else (lo, mid)
    return float(f"{hi:.6g}")


def ops_latency(path: str | Path, trace_source: str, by_tag: bool = False) -> tuple[float, int]:
    """The unprofiled latency (ms per run) an ``.ops.json`` file records for a trace, and the
    runs the trace holds.

    A file with ``runs`` (the ResNet-50 profiles) gives the latency per run tag, the trace
    file's name without ``.trace.json``, for a trace of one run; a file with
    ``step_seconds_unprofiled`` (the GPT profile) per training step, for a trace of
    ``profiled_steps`` steps (refused with ``by_tag``: such a file does not name its trace).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.ops.json"
    >>> _ = path.write_text(json.dumps({"runs": [{"tag": "m_b1", "latency_ms_unprofiled": 4.5}]}))
    >>> ops_latency(path, "x/m_b1.trace.json")
    (4.5, 1)
    >>> ops_latency(path, "x/m_b16.trace.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: .../m.ops.json: no run tagged 'm_b16' (the trace's name); tags: m_b1
    """
    data = read_data(path)
    if isinstance(data, dict) and isinstance(data.get("step_seconds_unprofiled"), (int, float)) \
            and not by_tag:
        steps = data.get("profiled_steps", 1)
        return float(data["step_seconds_unprofiled"]) * 1e3, steps if isinstance(steps, int) and \
            steps >= 1 else 1
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list):
        raise ProblemError(f"{path}: no unprofiled latency ('runs' with 'latency_ms_unprofiled', or "
                           f"'step_seconds_unprofiled')")
    tag = Path(trace_source).name.removesuffix(".json").removesuffix(".trace")
    for run in runs:
        if isinstance(run, dict) and run.get("tag") == tag and \
                isinstance(run.get("latency_ms_unprofiled"), (int, float)):
            return float(run["latency_ms_unprofiled"]), 1
    tags = ", ".join(str(r.get("tag")) for r in runs if isinstance(r, dict)) or "none"
    raise ProblemError(f"{path}: no run tagged '{tag}' (the trace's name); tags: {tags}")


def _stats(values: list[float]) -> dict[str, float]:
    def ms(v: float) -> float:  # six significant digits, like the problem files
        return float(f"{v / 1e3:.6g}")
    return {"median": ms(float(np.median(values))), "mean": ms(float(np.mean(values))),
            "p95": ms(float(np.percentile(values, 95)))}


def _run_of(call: TracedCall, steps: list[tuple[float, float]]) -> int:
    for k, (start, end) in enumerate(steps):
        if start <= call.start <= end:
            return k
    return 0


def trace_table(trace: Trace, *, model: str | Path | None = None, shape: Any = None,
                latency_ms: float | None = None, runs: int | None = None) -> TraceTable:
    """The cost table of a trace (see the module documentation).

    Parameters
    ----------
    trace : Trace
        From :func:`~schedkit.costs.traces.read_trace`.
    model : str or Path, optional
        An ONNX model of the traced network: the table then names its nodes.
    shape : optional
        ``--shape`` values for the model's symbolic inputs.
    latency_ms : float, optional
        The network's latency per run measured without the profiler.
    runs : int, optional
        Runs the trace holds, where it does not mark them (no ``ProfilerStep`` ranges, no
        model to count passes over): each node's time in a run is then its total over the
        trace divided by ``runs``, its median, mean and p95 alike.

    Examples
    --------
    >>> from schedkit.costs.traces import parse_trace
    >>> events = [{"ph": "X", "cat": "cpu_op", "name": "aten::lstm", "tid": 1, "ts": 0, "dur": 4}]
    >>> trace_table(parse_trace(events, "t.json"), latency_ms=0)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: t.json: latency_ms must be positive, not 0
    """
    if latency_ms is not None and not (isinstance(latency_ms, (int, float)) and latency_ms > 0):
        raise ProblemError(f"{trace.source}: latency_ms must be positive, not {latency_ms}")
    if runs is not None and not (isinstance(runs, int) and runs >= 1):
        raise ProblemError(f"{trace.source}: runs must be a positive whole number, not {runs}")
    calls, spread = trace.calls, 1
    if model is None:
        groups = {k: (c.name, _run_of(c, trace.steps)) for k, c in enumerate(calls)}
        unmatched, nodes, folded = [], {}, {}
        marked = max(1, len(trace.steps))
        # Runs the trace does not mark: one pooled run, spread evenly over the runs it holds.
        spread = runs if runs is not None and marked == 1 else 1
        runs = marked * spread
    else:
        found = model_nodes(model, shape)
        match = match_calls([(c.name, c.inputs) for c in calls], found, str(model))
        groups = {k: (name, it) for k, name, it in match.pairs}
        folded = match.folded
        groups.update({k: groups[into] for k, into in folded.items()})
        runs, unmatched, nodes = match.iterations, match.unmatched_nodes, {n.name: n for n in found}
    # A run's share of each node: host and GPU time summed over its calls in that run.
    host: dict[tuple[str, int], float] = {}
    gpu: dict[tuple[str, int], float] = {}
    count: dict[str, int] = {}
    for k, key in groups.items():
        host[key] = host.get(key, 0.0) + calls[k].host
        gpu[key] = gpu.get(key, 0.0) + calls[k].gpu
        if k not in folded:  # bookkeeping lends its time, not a call
            count[key[0]] = count.get(key[0], 0) + 1
    if spread > 1:
        host = {k: v / spread for k, v in host.items()}
        gpu = {k: v / spread for k, v in gpu.items()}
    keys = list(host)
    profiled = sum(max(gpu[k], host[k]) for k in keys) * spread / runs
    share = spread / runs  # each key holds one run's time, or a pooled run spread evenly
    scale = 1.0 if latency_ms is None else \
        scale_to_latency([host[k] * share for k in keys], [gpu[k] * share for k in keys],
                         latency_ms * 1e3)
    times: dict[str, list[float]] = {}
    for key in keys:
        times.setdefault(key[0], []).extend([max(gpu[key], scale * host[key])] * spread)
    rows = []
    for name, values in times.items():
        values += [0.0] * (runs - len(values))  # a run without a call of it spent nothing on it
        row: dict[str, Any] = {"name": name, **_stats(values), "calls": max(1, count[name] // runs)}
        if model is None:
            row["op_type"] = next(iter(onnx_types(name)), name)
        else:
            node = nodes[name]
            row.update(op_type=node.op, output_bytes=node.output_bytes, flops=node.flops,
                       bytes=node.bytes)
        rows.append(row)
    table = CostTable(
        source="pytorch-profiler" if trace.kind == "pytorch-profiler" else "chrome-trace",
        device=_device(trace), model=_model(trace, model), runs=runs, nodes=rows,
        total=None if latency_ms is None else {"median": latency_ms, "mean": latency_ms})
    return TraceTable(table, scale, profiled / 1e3, unmatched)


def _device(trace: Trace) -> dict[str, Any]:
    on_gpu = trace.device is not None or trace.gpu_total > 0
    device: dict[str, Any] = {"type": "gpu" if on_gpu else "cpu"}
    if trace.kind == "pytorch-profiler":
        device["provider"] = "pytorch-cuda" if on_gpu else "pytorch-cpu"
    if trace.device:
        device["name"] = trace.device
    return device


def _model(trace: Trace, model: str | Path | None) -> ModelInfo:
    if model is None:
        return ModelInfo(name=Path(trace.source).name.removesuffix(".json").removesuffix(".trace"))
    return ModelInfo.of_file(model)


def ops_beside(trace_source: str) -> tuple[Path, float, int] | None:
    """The ``.ops.json`` file beside a trace that records its unprofiled latency, if any.

    The file named like the trace (``NAME.ops.json`` beside ``NAME.trace.json``), else one
    that tags a run with the trace's name (:func:`ops_latency`).

    Returns
    -------
    (Path, float, int) or None
        The file, the latency (ms per run) and the runs the trace holds.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> ops_beside(str(pathlib.Path(tempfile.mkdtemp()) / "m.trace.json")) is None
    True
    """
    path = Path(trace_source)
    stem = path.name.removesuffix(".json").removesuffix(".trace")
    own = path.parent / f"{stem}.ops.json"
    for candidate in [own] + sorted(p for p in path.parent.glob("*.ops.json") if p != own):
        if not candidate.is_file():
            continue
        try:
            latency, runs = ops_latency(candidate, trace_source, by_tag=candidate != own)
        except ProblemError:  # another trace's file, or not one of these files at all
            continue
        return candidate, latency, runs
    return None


def is_chrome_trace(data: Any) -> bool:
    """Whether parsed JSON is a Chrome trace: an object with a ``traceEvents`` list, or a list
    of events with a phase ``ph``.

    Examples
    --------
    >>> is_chrome_trace({"traceEvents": []}), is_chrome_trace([{"ph": "X"}]), is_chrome_trace([])
    (True, True, False)
    """
    if isinstance(data, dict):
        return isinstance(data.get("traceEvents"), list)
    return isinstance(data, list) and any(isinstance(e, dict) and "ph" in e for e in data)


def read_chrome_trace(data: Any, source: str, options: Any) -> tuple[CostTable, list[str]]:
    """``costs import`` of a Chrome trace: the table and notes for the user.

    ``options`` (:class:`~schedkit.costs.imports.ImportOptions`): ``model`` and ``shape``
    name the nodes, ``latency_ms`` is the unprofiled latency (else an ``.ops.json`` beside
    the trace gives it, :func:`ops_beside`), ``device_type`` replaces the recorded type.
    ``warmup`` is onnxruntime's: a trace's runs are all kept.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> options = SimpleNamespace(model=None, shape=None, latency_ms=0.05, warmup=0,
    ...                           device_type=None)
    >>> events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 1, "ts": 0, "dur": 100}]
    >>> table, notes = read_chrome_trace(events, "mm.trace.json", options)
    >>> table.nodes[0].median, table.total.median, notes
    (0.05, 0.05, ['host times x 0.5: the profiled 0.1 ms per run brought to the unprofiled 0.05 ms'])
    """
    trace = parse_trace(data, source)
    latency, runs, notes = options.latency_ms, None, []
    if latency is None and (found := ops_beside(source)) is not None:
        path, latency, runs = found
        notes.append(f"unprofiled latency {latency:.4g} ms per run from {path.name}")
    made = trace_table(trace, model=options.model, shape=options.shape, latency_ms=latency, runs=runs)
    if latency is not None:
        notes.append(f"host times x {made.scale:.3g}: the profiled {made.profiled_ms:.4g} ms per run "
                     f"brought to the unprofiled {latency:.4g} ms")
    if made.unmatched_nodes:
        shown = ", ".join(made.unmatched_nodes[:3]) + (", ..." if len(made.unmatched_nodes) > 3 else "")
        notes.append(f"{len(made.unmatched_nodes)} model node(s) the trace never ran get no time "
                     f"(the roofline's in 'convert onnx --costs'): {shown}")
    if options.warmup:
        notes.append("--warmup is for onnxruntime profiles: every run of a trace is kept")
    table = made.table
    if options.device_type:
        device = CostDevice(**{**table.device.model_dump(), "type": options.device_type})
        table = CostTable(**{**dict(table), "device": device})
    return table, notes
