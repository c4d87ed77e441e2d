"""The schedule as a Chrome trace / Perfetto JSON file (``schedkit trace``).

Open the file in ``chrome://tracing`` or https://ui.perfetto.dev. One *process* per device
(problem order, named after the device) with its tasks as complete events (``"ph": "X"``) and,
when the problem has memory data, a ``memory`` counter track; one process per channel that
carries a transfer, with the transfers as complete events; and one *flow* per transfer
(``"ph": "s"`` in the producing task, ``"t"`` on each channel, ``"f"`` in the consuming task),
drawn as an arrow from task to transfer to task. Trace times are microseconds: ``scale`` is
the microseconds per time unit of the problem (1000 for problems in milliseconds, the
convention of schedkit's examples and importers).

Examples
--------
>>> import json
>>> from schedkit import Problem, solve
>>> problem = Problem.load("examples/tiny.yaml")
>>> trace = json.loads(render_trace(problem, solve(problem, "heft")))
>>> sorted({e["ph"] for e in trace["traceEvents"]})
['C', 'M', 'X', 'f', 's', 't']
>>> [e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"]
['gpu0', 'cpu', 'gpu0->cpu']
"""

from __future__ import annotations

import json
from typing import Any

from schedkit.report.base import in_range, register_renderer
from schedkit.report.layout import Layout, check_fits, memory_series

__all__ = ["render_trace", "trace_events"]


def trace_events(problem: Any, schedule: Any, scale: float = 1000.0) -> list[dict]:
    """The trace's events (see the module documentation).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    scale : float
        Microseconds per time unit.

    Returns
    -------
    list of dict
        Metadata (``M``), complete (``X``), counter (``C``) and flow (``s``, ``t``, ``f``)
        events.
    """
    scale = in_range("scale", scale, 1e-12, 1e12, "microseconds per time unit")
    check_fits(problem, schedule)
    layout = Layout.of(problem, schedule)
    spec = {t.name: t for t in problem.spec.tasks}
    pid = {name: k for k, name in enumerate(layout.devices + layout.channels)}
    events: list[dict] = []
    for name, k in pid.items():
        kind = "device" if k < len(layout.devices) else "channel"
        events.append({"ph": "M", "name": "process_name", "pid": k, "tid": 0, "args": {"name": name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": k, "tid": 0,
                       "args": {"sort_index": k}})
        events.append({"ph": "M", "name": "thread_name", "pid": k, "tid": 0,
                       "args": {"name": "tasks" if kind == "device" else "transfers"}})
    runs = {}
    for r in sorted(schedule.tasks, key=lambda r: (r.start, r.task)):
        runs[r.task] = r
        args: dict[str, Any] = {"device": r.device, "start": r.start, "end": r.end}
        if spec[r.task].op:
            args["op"] = spec[r.task].op
        if r.inputs is not None:
            args["inputs"] = list(r.inputs)
        events.append({"ph": "X", "name": r.task, "cat": spec[r.task].op or "task",
                       "pid": pid[r.device], "tid": 0, "ts": r.start * scale,
                       "dur": (r.end - r.start) * scale, "args": args})
    for n, (t, route) in enumerate(zip(schedule.transfers, layout.routes)):
        name = f"{t.src} -> {t.dst}"
        args = {"from": t.from_, "to": t.to, "start": t.start, "end": t.end, "route": route}
        for channel in route:
            events.append({"ph": "X", "name": name, "cat": "transfer", "pid": pid[channel], "tid": 0,
                           "ts": t.start * scale, "dur": (t.end - t.start) * scale, "args": args})
        source, target = runs.get(t.src), runs.get(t.dst)
        if source is None or target is None:
            continue
        # A flow point binds to the slice that encloses it ("bp": "e"), so each sits just
        # inside its slice: near the producer's end, mid-transfer, near the consumer's start.
        flow = {"name": name, "cat": "transfer", "id": n, "bp": "e"}
        events.append({**flow, "ph": "s", "pid": pid[source.device], "tid": 0,
                       "ts": _inside(source.start, source.end, 0.99) * scale})
        for channel in route:
            events.append({**flow, "ph": "t", "pid": pid[channel], "tid": 0,
                           "ts": _inside(t.start, t.end, 0.5) * scale})
        events.append({**flow, "ph": "f", "pid": pid[target.device], "tid": 0,
                       "ts": _inside(target.start, target.end, 0.01) * scale})
    for device, points in memory_series(problem, schedule).items():
        if any(level for _, level in points):
            events += [{"ph": "C", "name": "memory", "pid": pid[device], "tid": 0, "ts": time * scale,
                        "args": {"memory": level}} for time, level in points]
    return events


def _inside(start: float, end: float, fraction: float) -> float:
    return start + fraction * (end - start)


@register_renderer("trace")
def render_trace(problem: Any, schedule: Any, *, scale: float = 1000.0) -> str:
    """Chrome trace / Perfetto JSON: a process per device and per busy channel, transfers as flows.

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    scale : float
        Microseconds per time unit of the problem (1000: times in milliseconds).

    Returns
    -------
    str
        The JSON text (``{"traceEvents": [...], "displayTimeUnit": "ms", ...}``).
    """
    meta = {"problem": problem.name, "method": schedule.method, "status": schedule.status,
            "makespan": schedule.makespan, "bound": schedule.bound}
    return json.dumps({"traceEvents": trace_events(problem, schedule, scale),
                       "displayTimeUnit": "ms", "otherData": meta}, indent=None)
