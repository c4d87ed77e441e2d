"""PyTorch profiler and Chrome traces: the operator calls they hold, timed on host and GPU.

:func:`read_trace` reads the JSON that ``torch.profiler``'s ``export_chrome_trace`` writes
(any Chrome trace with duration events): the **top-level operator calls** (``cpu_op`` events
not nested in another ``cpu_op`` of their thread; ``record_function`` ranges are
``user_annotation`` events and never count as operators), per call

- ``gpu``: the device time of the kernels, memsets and copies its launches started. A GPU
  event names its launch by ``correlation`` (the ``cuda_runtime`` / ``cuda_driver`` event
  with the same id), or by an ``ac2g`` flow where the launch event is missing; the launch
  belongs to the call whose interval holds it on the launching thread;
- ``host``: the CPU time the eager loop spends on it: its own duration plus the gap since
  the previous top-level call of its thread ended (the Python that prepares it), unless
  another thread ran operators in that gap (autograd's thread runs the backward pass while
  the caller waits). The profiler's own work (``overhead`` events: buffer requests) is
  taken out.

and the totals of each ``record_function`` range (:class:`RangeTotal`). A trace with no
operator events (a kernel-only or hand-made Chrome trace) gives its kernels, or else its
duration events, as the calls, each with its own duration as host time (a gap between two
kernels of a stream is idle time, not work).

Examples
--------
>>> events = [
...     {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "tid": 1, "ts": 0, "dur": 10},
...     {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 2,
...      "dur": 5, "args": {"correlation": 7}},
...     {"ph": "X", "cat": "kernel", "name": "relu_kernel", "tid": 9, "ts": 8, "dur": 3,
...      "args": {"correlation": 7}},
...     {"ph": "X", "cat": "cpu_op", "name": "aten::add", "tid": 1, "ts": 14, "dur": 6}]
>>> trace = parse_trace({"traceEvents": events}, "t.json")
>>> [(c.name, c.host, c.gpu) for c in trace.calls]
[('aten::relu', 10.0, 3.0), ('aten::add', 10.0, 0.0)]
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError
from schedkit.problem.reading import parse_json, read_text

__all__ = ["TracedCall", "RangeTotal", "Trace", "parse_trace", "read_trace"]

_OPERATORS = {"cpu_op", "operator"}
_RANGES = {"user_annotation"}
_LAUNCHES = {"cuda_runtime", "cuda_driver", "runtime", "driver"}
_DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
_OVERHEAD = {"overhead"}
# Float timestamps in microseconds with nanosecond digits: nesting is judged with this slack.
_EPS = 1e-3


@dataclass(frozen=True)
class TracedCall:
    """One top-level operator call (times in microseconds).

    Attributes
    ----------
    name : str
        The operator (``aten::conv2d``).
    thread : str
        ``pid/tid`` of the thread that ran it.
    start, cpu : float
        Its start and its own duration on the host.
    host : float
        Host time of the call in the eager loop (see the module documentation).
    gpu : float
        Device time of the GPU work its launches started.
    kernels : int
        The GPU events it started.
    inputs : tuple
        Input shapes the profiler recorded (``record_shapes``), ``()`` where none.
    """

    name: str
    thread: str
    start: float
    cpu: float
    host: float
    gpu: float
    kernels: int = 0
    inputs: tuple = ()


@dataclass(frozen=True)
class RangeTotal:
    """A ``record_function`` range summed over its calls (microseconds).

    ``gpu`` counts the GPU work launched while the range was open, from any thread (the
    ``backward`` range waits on autograd's thread).
    """

    name: str
    calls: int
    cpu: float
    gpu: float


@dataclass(frozen=True)
class Trace:
    """The operator calls of a trace, in start order, and its ranges.

    Attributes
    ----------
    source : str
        The file (for messages).
    kind : str
        ``pytorch-profiler`` (operator events) or ``chrome-trace``.
    calls : list of TracedCall
    ranges : dict
        Range name -> :class:`RangeTotal`, in order of first appearance.
    device : str or None
        The GPU's name, when the trace records it.
    gpu_total : float
        Device time of every GPU event; ``unattributed`` of those no call launched.
    steps : list of (float, float)
        Start and end of each ``ProfilerStep#N`` range (``torch.profiler``'s ``schedule``
        marks each step so); empty when the trace has none.
    """

    source: str
    kind: str
    calls: list[TracedCall]
    ranges: dict[str, RangeTotal] = field(default_factory=dict)
    device: str | None = None
    gpu_total: float = 0.0
    unattributed: float = 0.0
    steps: list[tuple[float, float]] = field(default_factory=list)


def read_trace(path: str | Path) -> Trace:
    """Read a Chrome trace JSON file (``torch.profiler``'s ``export_chrome_trace``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.json"
    >>> _ = path.write_text('{"traceEvents": [{"ph": "M", "name": "process_name"}]}')
    >>> read_trace(path)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: .../empty.json: no duration events (ph ... nothing to time
    """
    return parse_trace(parse_json(read_text(path), str(path)), str(path))


def _events(data: Any, source: str) -> list[dict]:
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ProblemError(f"{source}: not a Chrome trace (expected a list of events or an object "
                           f"with 'traceEvents')")
    return [e for e in events if isinstance(e, dict)]


def _number(value: Any) -> float | None:
    finite = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if finite else None


def _durations(events: list[dict]) -> list[dict]:
    """Complete events ('X'), with 'B'/'E' pairs of one thread joined into such events."""
    complete, open_ = [], defaultdict(list)
    for e in events:
        ts = _number(e.get("ts"))
        if ts is None:
            continue
        ph = e.get("ph")
        dur = _number(e.get("dur"))
        if ph == "X" and dur is not None and dur >= 0 and math.isfinite(ts + dur):
            complete.append(e)
        elif ph == "B":
            open_[_thread(e)].append(e)
        elif ph == "E" and open_[_thread(e)]:
            begin = open_[_thread(e)].pop()
            complete.append({**begin, "ph": "X", "dur": ts - float(begin["ts"])})
    return complete


def _cat(e: dict) -> str:
    return str(e.get("cat", "")).lower()


def _thread(e: dict) -> str:
    return f"{e.get('pid')}/{e.get('tid')}"


def _name(e: dict) -> str:
    name = e.get("name")
    return name if isinstance(name, str) and name else "(unnamed)"


def _key(value: Any) -> Any:
    """A correlation or flow id as a dictionary key (``None`` when it cannot be one)."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _args(e: dict) -> dict:
    args = e.get("args")
    return args if isinstance(args, dict) else {}


def _shapes(e: dict) -> tuple:
    args = _args(e)
    dims = args.get("Input Dims", args.get("Input dims", ()))
    if not isinstance(dims, list):
        return ()
    # A tensor's dims are a list of ints; a tensor list or a scalar says nothing here.
    return tuple(tuple(d) if isinstance(d, list) and all(isinstance(x, int) for x in d) else ()
                 for d in dims)


def _top_level(operators: list[dict]) -> list[dict]:
    """Operator events not nested in another operator of their thread, in start order."""
    by_thread: dict[str, list[dict]] = defaultdict(list)
    for e in operators:
        by_thread[_thread(e)].append(e)
    top = []
    for events in by_thread.values():
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = -float("inf")
        for e in events:
            if e["ts"] >= end - _EPS:
                top.append(e)
                end = e["ts"] + e["dur"]
            else:
                end = max(end, e["ts"] + e["dur"])
    top.sort(key=lambda e: e["ts"])
    return top


def _launch_points(events: list[dict], flows: list[dict]) -> dict[Any, tuple[str, float]]:
    """Correlation id -> (thread, time) of the host call that launched it."""
    points = {}
    for e in flows:  # ac2g flow starts: a fallback where the runtime event was not kept
        at, key = _number(e.get("ts")), _key(e.get("id"))
        if e.get("ph") == "s" and _cat(e) == "ac2g" and at is not None and key is not None:
            points[key] = (_thread(e), at)
    for e in events:
        if _cat(e) in _LAUNCHES and _key(_args(e).get("correlation")) is not None:
            points[_key(_args(e)["correlation"])] = (_thread(e), float(e["ts"]))
    return points


def _overlap(start: float, end: float, spans: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in spans)


def parse_trace(data: Any, source: str = "trace") -> Trace:
    """The operator calls and ranges of Chrome trace data (see the module documentation).

    Parameters
    ----------
    data : dict or list
        The parsed JSON: an object with ``traceEvents``, or the list of events.
    source : str
        How messages name the trace (its file).

    Examples
    --------
    >>> parse_trace({"traceEvents": []}, "t.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: t.json: no duration events (ph 'X' with a 'dur', or 'B'/'E'): nothing to time
    """
    raw = _events(data, source)
    events = _durations(raw)
    if not events:
        raise ProblemError(f"{source}: no duration events (ph 'X' with a 'dur', or 'B'/'E'): "
                           f"nothing to time")
    operators = [e for e in events if _cat(e) in _OPERATORS]
    device_events = [e for e in events if _cat(e) in _DEVICE]
    kind = "pytorch-profiler" if operators else "chrome-trace"
    if not operators:  # a trace without operators: its kernels, or its events, are the calls
        operators = device_events or [e for e in events if _cat(e) not in _RANGES]
        device_events = []
    top = _top_level(operators)
    if not top:
        raise ProblemError(f"{source}: no operator, kernel or other duration event outside "
                           f"record_function ranges: nothing to time")
    gpu_time, launches = _attribute(top, device_events, _launch_points(events, raw))
    ranges = [e for e in events if _cat(e) in _RANGES]
    overhead = [(e["ts"], e["ts"] + e["dur"]) for e in events if _cat(e) in _OVERHEAD]
    calls = _calls(top, gpu_time, overhead, gaps=kind == "pytorch-profiler")
    steps = sorted((float(e["ts"]), float(e["ts"] + e["dur"])) for e in ranges
                   if _name(e).startswith("ProfilerStep#"))
    total = sum(e["dur"] for e in device_events)
    props = data.get("deviceProperties") if isinstance(data, dict) else None
    device = props[0].get("name") if isinstance(props, list) and props and \
        isinstance(props[0], dict) else None
    return Trace(source, kind, calls, _range_totals(ranges, launches), device, total,
                 total - sum(c.gpu for c in calls), steps)


def _attribute(top: list[dict], device_events: list[dict],
               points: dict[Any, tuple[str, float]]) -> tuple[dict[int, list[float]], list]:
    """Device time per top-level call (by index), and (launch time, device time) of every launch."""
    by_thread: dict[str, list[int]] = defaultdict(list)
    for k, e in enumerate(top):
        by_thread[_thread(e)].append(k)
    starts = {t: [top[k]["ts"] for k in ks] for t, ks in by_thread.items()}
    gpu: dict[int, list[float]] = defaultdict(list)
    launches = []
    for e in device_events:
        point = points.get(_key(_args(e).get("correlation")))
        if point is None:
            continue
        thread, at = point
        launches.append((at, float(e["dur"])))
        ks = by_thread.get(thread, [])
        i = bisect.bisect_right(starts.get(thread, []), at + _EPS) - 1
        if i >= 0 and at <= top[ks[i]]["ts"] + top[ks[i]]["dur"] + _EPS:
            gpu[ks[i]].append(float(e["dur"]))
    launches.sort()
    return gpu, launches


def _calls(top: list[dict], gpu: dict[int, list[float]], overhead: list[tuple[float, float]],
           gaps: bool) -> list[TracedCall]:
    calls = []
    starts = [e["ts"] for e in top]
    previous_end: dict[str, float] = {}
    for k, e in enumerate(top):
        thread, start, end = _thread(e), float(e["ts"]), float(e["ts"] + e["dur"])
        gap_from = min(previous_end.get(thread, start), start)
        # The gap is this thread's own loop only if no other thread started an operator in it
        # (its own calls cannot: the gap begins where its previous call ended).
        others = bisect.bisect_right(starts, gap_from + _EPS) < k
        host_from = start if others or not gaps else gap_from
        host = end - host_from - _overlap(host_from, end, overhead)
        previous_end[thread] = end
        calls.append(TracedCall(_name(e), thread, start, float(e["dur"]),
                                max(host, 0.0), float(sum(gpu.get(k, ()))), len(gpu.get(k, ())),
                                _shapes(e)))
    return calls


def _range_totals(ranges: list[dict], launches: list[tuple[float, float]]) -> dict[str, RangeTotal]:
    times = [at for at, _ in launches]
    prefix = [0.0]
    for _, dur in launches:
        prefix.append(prefix[-1] + dur)
    totals: dict[str, list[float]] = {}
    for e in sorted(ranges, key=lambda e: e["ts"]):
        lo = bisect.bisect_left(times, e["ts"] - _EPS)
        hi = bisect.bisect_right(times, e["ts"] + e["dur"] + _EPS)
        row = totals.setdefault(_name(e), [0, 0.0, 0.0])
        row[0] += 1
        row[1] += float(e["dur"])
        row[2] += prefix[hi] - prefix[lo]
    return {name: RangeTotal(name, int(n), cpu, gpu) for name, (n, cpu, gpu) in totals.items()}
