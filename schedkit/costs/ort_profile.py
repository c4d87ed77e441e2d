"""onnxruntime's profile JSON as per-node statistics (no onnxruntime import here).

With ``SessionOptions.enable_profiling``, onnxruntime writes a Chrome-trace list of events:
per model run one ``Session`` event ``model_run``, and per kernel execution one ``Node``
event named ``<node>_kernel_time`` with its duration ``dur`` in microseconds and
``args.op_name``, ``args.output_size`` (bytes) and ``args.node_index``.
:func:`kernel_runs` reads those events into runs, :func:`node_costs` turns the runs into
the rows of a cost table. With the model's operators (what ``convert onnx`` makes tasks of,
:func:`~schedkit.importers.onnx.operator_costs`), a kernel is the task of the same name,
else of the same position in the model (onnxruntime names unnamed nodes itself); operators
the runtime fused into a neighbour (a ``BatchNormalization`` folded into its ``Conv``) get
time 0 and ``calls`` 0, and kernels of nodes the runtime made itself are left out and
counted.

Examples
--------
>>> events = [{"cat": "Session", "name": "model_run", "ts": 0, "dur": 100},
...           {"cat": "Node", "name": "conv_kernel_time", "ts": 5, "dur": 40,
...            "args": {"op_name": "Conv", "output_size": "4096", "node_index": "0"}},
...           {"cat": "Session", "name": "model_run", "ts": 200, "dur": 100},
...           {"cat": "Node", "name": "conv_kernel_time", "ts": 205, "dur": 60,
...            "args": {"op_name": "Conv", "output_size": "4096", "node_index": "0"}}]
>>> runs = kernel_runs(events, "p.json")
>>> [[k.dur for k in run] for run in runs]
[[40.0], [60.0]]
>>> rows, left_out = node_costs(runs)
>>> rows[0]["name"], rows[0]["median"], rows[0]["calls"], rows[0]["output_bytes"], left_out
('conv', 0.05, 1, 4096, {})
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from schedkit.errors import ProblemError

__all__ = ["Kernel", "kernel_runs", "node_costs", "is_ort_profile", "provider_type"]

_SUFFIX = "_kernel_time"


@dataclass(frozen=True)
class Kernel:
    """One kernel execution of an onnxruntime profile (``dur`` in microseconds)."""

    node: str
    op: str
    dur: float
    output_bytes: int
    index: int | None
    provider: str | None


def is_ort_profile(data: Any) -> bool:
    """Whether ``data`` (a parsed JSON file) looks like onnxruntime's profile: a list of events
    among which a ``Node`` event or one of onnxruntime's ``Session`` events (a profile without
    kernels is then refused for that reason, not as an unknown format).

    Examples
    --------
    >>> is_ort_profile([{"cat": "Node", "name": "a_kernel_time", "dur": 3}]), is_ort_profile({})
    (True, False)
    >>> is_ort_profile([{"cat": "Session", "name": "model_run", "ts": 0, "dur": 3}])
    True
    """
    return isinstance(data, list) and any(
        isinstance(e, dict) and (e.get("cat") == "Node" or
                                 (e.get("cat") == "Session" and e.get("name") in _SESSION_EVENTS))
        for e in data)


_SESSION_EVENTS = {"model_run", "model_loading_array", "model_loading_uri", "session_initialization"}


def _is_kernel(event: Any) -> bool:
    return isinstance(event, dict) and event.get("cat") == "Node" and \
        str(event.get("name", "")).endswith(_SUFFIX)


def _number(value: Any, what: str, source: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProblemError(f"{source}: {what}: not a number: {value!r}") from None
    if not np.isfinite(number) or number < 0:
        raise ProblemError(f"{source}: {what}: not a finite non-negative number: {value!r}")
    return number


def kernel_runs(events: Any, source: str, skip: int = 0) -> list[list[Kernel]]:
    """The kernel executions of a profile, one list per model run (the first ``skip`` dropped).

    Kernels are assigned to the ``model_run`` event whose interval holds their start; a
    profile without ``model_run`` events is one run.

    Raises
    ------
    ProblemError
        Not a list of events, no kernel event with a duration, a malformed event, or no run
        left after ``skip`` (one line naming ``source``).

    Examples
    --------
    >>> kernel_runs([{"cat": "Session", "name": "model_run", "ts": 0, "dur": 9}], "p.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: p.json: no node kernel events with durations ('<node>_kernel_time', cat 'Node'): not an onnxruntime profile, or profiled no run
    """
    if not isinstance(events, list):
        raise ProblemError(f"{source}: not an onnxruntime profile (expected a JSON list of events)")
    starts = sorted((_number(e.get("ts"), "model_run ts", source), _number(e.get("dur"), "model_run dur",
                                                                          source))
                    for e in events if isinstance(e, dict) and e.get("cat") == "Session"
                    and e.get("name") == "model_run")
    kernels = [e for e in events if _is_kernel(e)]
    if not kernels:
        raise ProblemError(f"{source}: no node kernel events with durations ('<node>{_SUFFIX}', cat "
                           f"'Node'): not an onnxruntime profile, or profiled no run")
    runs: list[list[Kernel]] = [[] for _ in starts] or [[]]
    begins = [ts for ts, _ in starts]
    for event in kernels:
        name = str(event["name"])[:-len(_SUFFIX)]
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        dur = _number(event.get("dur"), f"node {name!r} dur", source)
        ts = _number(event.get("ts", 0), f"node {name!r} ts", source)
        index = args.get("node_index")
        kernel = Kernel(name, str(args.get("op_name", "")), dur,
                        int(_number(args.get("output_size", 0), f"node {name!r} output_size", source)),
                        int(index) if str(index).isdigit() else None, args.get("provider"))
        at = max(0, bisect.bisect_right(begins, ts) - 1) if starts else 0
        runs[at].append(kernel)
    runs = [run for run in runs if run][skip:]
    if not runs:
        raise ProblemError(f"{source}: no run left after skipping {skip} warm-up run(s)")
    return runs


def provider_type(provider: str | None) -> str:
    """The device type of an onnxruntime execution provider.

    Examples
    --------
    >>> provider_type("CPUExecutionProvider"), provider_type("CUDAExecutionProvider")
    ('cpu', 'gpu')
    """
    text = (provider or "CPUExecutionProvider").lower()
    if any(word in text for word in ("cuda", "tensorrt", "rocm", "migraphx", "dml", "webgpu")):
        return "gpu"
    if text.startswith("cpu"):
        return "cpu"
    return text.replace("executionprovider", "") or "cpu"


def node_costs(runs: Sequence[Sequence[Kernel]], operators: Sequence[Any] | None = None,
               unit_per_us: float = 1e-3) -> tuple[list[dict], dict[str, float]]:
    """Cost-table rows from kernel runs, and the kernels left out (runtime node -> time per run).

    Parameters
    ----------
    runs : list of list of Kernel
        From :func:`kernel_runs`.
    operators : list of OperatorCost, optional
        The model's operators (:func:`~schedkit.importers.onnx.operator_costs`): rows are
        then the operators, in model order, with their FLOPs and bytes. Without, one row per
        node of the profile, in order of first execution.
    unit_per_us : float
        Table time units per microsecond (1e-3: milliseconds).

    Returns
    -------
    (list of dict, dict)
        The ``nodes`` of a cost table, and the mean time per run (in table units) of each
        kernel that no operator took.
    """
    by_name = {op.name: op for op in operators or ()}
    by_index = {op.index: op for op in operators or ()}

    def owner(kernel: Kernel) -> str | None:
        if operators is None:
            return kernel.node
        if kernel.node in by_name:
            return kernel.node
        op = by_index.get(kernel.index)
        # onnxruntime names an unnamed node itself and keeps its position in the graph.
        if op is not None and (kernel.op == op.op or kernel.op.endswith(op.op)):
            return op.name
        return None

    per_run: list[dict[str, float]] = []
    calls: list[Counter] = []
    seen: dict[str, Kernel] = {}
    left_out: Counter = Counter()
    for run in runs:
        times: dict[str, float] = {}
        count: Counter = Counter()
        for kernel in run:
            name = owner(kernel)
            if name is None:
                left_out[kernel.node] += kernel.dur * unit_per_us / len(runs)
                continue
            times[name] = times.get(name, 0.0) + kernel.dur * unit_per_us
            count[name] += 1
            seen.setdefault(name, kernel)
        per_run.append(times)
        calls.append(count)
    names = [op.name for op in operators] if operators is not None else list(seen)
    rows = []
    for name in names:
        values = np.array([times.get(name, 0.0) for times in per_run])
        first = seen.get(name)
        op = by_name.get(name)
        row: dict[str, Any] = {
            "name": name, "op_type": op.op if op is not None else first.op,
            "median": _short(np.median(values)), "mean": _short(values.mean()),
            "p95": _short(np.percentile(values, 95)),
            "calls": int(round(float(np.median([c[name] for c in calls])))),
            "output_bytes": first.output_bytes if first is not None and first.output_bytes
            else (op.output_bytes if op is not None else 0)}
        if op is not None:  # FLOPs only where a cost rule knows them, as the importer counts
            if op.known:
                row["flops"] = float(op.flops)
            row["bytes"] = float(op.bytes)
        rows.append(row)
    return rows, {name: _short(t) for name, t in left_out.items()}


def _short(value: float) -> float:
    # Six significant digits: a profiler's microsecond ticks carry no more.
    return float(f"{float(value):.6g}")
