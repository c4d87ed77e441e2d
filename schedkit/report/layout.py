"""What every picture of a schedule shows: rows, channels, colours, utilisation, memory levels.

The Gantt chart (matplotlib), the inline SVG of the HTML report and the Chrome trace all
draw the same :class:`Layout`: one row per device (problem order), one row per channel that
carries a transfer, a colour per task (by operator type or by group) and, when the problem
has memory data, the memory level of each device over time. Nothing here draws.

Examples
--------
>>> from schedkit import Problem, solve
>>> problem = Problem.load("examples/tiny.yaml")
>>> layout = Layout.of(problem, solve(problem, "heft"))
>>> layout.devices, layout.channels
(['gpu0', 'cpu'], ['gpu0->cpu'])
>>> [round(u.busy, 3) for u in layout.utilisation()]
[4.2, 0.3]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

from schedkit.errors import OptionError, ScheduleError

__all__ = ["Layout", "Utilisation", "PALETTE", "OTHER_COLOUR", "CHANNEL_ROWS", "check_fits", "channel_names",
           "memory_series", "peak", "nice_time", "si", "time_label"]

#: Colours of the most frequent keys (matplotlib's tab20, pairs split so neighbours differ).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
           "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]
#: Colour of every key past the palette.
OTHER_COLOUR = "#c7c7c7"
#: Beyond this many busy channels (and more than there are devices), the pictures show one
#: row per sending device (``gpu0 sends``) instead of one per channel.
CHANNEL_ROWS = 24
ColourBy = Literal["op", "group", "device", "none"]
_COLOUR_BY = get_args(ColourBy)


def check_fits(problem: Any, schedule: Any, source: str = "schedule") -> None:
    """Refuse a schedule of another problem: one line naming the first mismatch.

    Unlike the validator, this accepts schedules that break constraints (a picture of
    an invalid schedule shows what is wrong); it only requires the same problem, tasks
    and devices.

    Examples
    --------
    >>> from schedkit import Problem, Schedule, TaskRun
    >>> problem = Problem.load("examples/tiny.yaml")
    >>> other = Schedule(problem="tiny", method="hand", status="heuristic",
    ...                  tasks=[TaskRun(task="conv9", device="gpu0", start=0, end=1)])
    >>> check_fits(problem, other, "s.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ScheduleError: s.json: task 'conv9' is not in problem 'tiny'
    """
    if schedule.problem != problem.name:
        raise ScheduleError(f"{source}: the schedule is for problem '{schedule.problem}', "
                            f"not '{problem.name}'")
    for row in schedule.tasks:
        if row.task not in problem.task_index:
            raise ScheduleError(f"{source}: task '{row.task}' is not in problem '{problem.name}'")
        if row.device not in problem.device_index:
            raise ScheduleError(f"{source}: task '{row.task}' is on device '{row.device}', "
                                f"which problem '{problem.name}' does not have")
    for t in schedule.transfers:
        for end in (t.from_, t.to):
            if end not in problem.device_index:
                raise ScheduleError(f"{source}: transfer {t.src}->{t.dst} uses device '{end}', "
                                    f"which problem '{problem.name}' does not have")


def channel_names(problem: Any) -> dict[tuple[str, str], str]:
    """The channel of each usable direction of a link: its ``channel``, else ``SRC->DST``.

    Read from the network's routes (a direct link is a route of one channel), so that group
    links and parallel links count as they do for the validator.
    """
    names = problem.devices
    return {(names[u], names[v]): route[0] for u, row in enumerate(problem.route)
            for v, route in enumerate(row) if len(route) == 1}


def _route(problem: Any, names: dict, source: str, target: str) -> list[str]:
    """Channels of the route from ``source`` to ``target`` (direct link, else the widest path)."""
    if (source, target) in names:
        return [names[(source, target)]]
    import networkx as nx

    u, v = problem.device_index[source], problem.device_index[target]
    if not problem.linked[u][v] or problem.inv_bandwidth[u][v] == 0:
        return [f"{source}->{target}"]
    width = 1.0 / problem.inv_bandwidth[u][v]
    net = problem.network
    wide = nx.subgraph_view(net, filter_edge=lambda a, b: net[a][b]["bandwidth"] >= width * (1 - 1e-12))
    path = nx.dijkstra_path(wide, u, v, weight="latency")
    hops = [(problem.devices[a], problem.devices[b]) for a, b in zip(path, path[1:])]
    return [names.get(hop, f"{hop[0]}->{hop[1]}") for hop in hops]


@dataclass(frozen=True)
class Utilisation:
    """How busy one device (or channel) is over the makespan."""

    name: str
    busy: float
    runs: int
    share: float
    """``busy / makespan`` (0 for an empty schedule)."""


@dataclass
class Layout:
    """The rows, colours and timelines of a picture of ``schedule`` (see :meth:`of`)."""

    problem: Any
    schedule: Any
    devices: list[str]
    channels: list[str]
    """The rows of transfers: busy channels, or sending devices (see :data:`CHANNEL_ROWS`)."""
    routes: list[list[str]]
    """Per transfer of the schedule (same order): the rows (channels) it occupies."""
    colours: dict[str, str]
    """Task name -> colour."""
    legend: list[tuple[str, str]]
    """(key, colour) of the coloured keys, most time first."""
    makespan: float

    @classmethod
    def of(cls, problem: Any, schedule: Any, colour_by: ColourBy | None = None) -> Layout:
        """The layout of ``schedule`` of ``problem``.

        Parameters
        ----------
        colour_by : {"op", "group", "device", "none"}, optional
            What the task colours show: the operator type (``op`` field), the group
            (``colocate`` group, else the task name up to its first ``/``, ``.`` or ``_``,
            without trailing digits),
            the device, or nothing. Default: ``op`` when tasks give one, else ``group``.
        """
        names = channel_names(problem)
        routes = [list(getattr(t, "route", None) or _route(problem, names, t.from_, t.to))
                  for t in schedule.transfers]
        used = {c for route in routes for c in route}
        ordered = list(dict.fromkeys(list(names.values()) + sorted(used)))
        channels = [c for c in ordered if c in used]
        if len(channels) > max(CHANNEL_ROWS, len(problem.devices)):
            # Too many channels to read (a full mesh of 50 devices has 2450): one row per
            # sending device instead, its send port.
            routes = [[f"{t.from_} sends"] for t in schedule.transfers]
            senders = {t.from_ for t in schedule.transfers}
            channels = [f"{d} sends" for d in problem.devices if d in senders]
        spec = {t.name: t for t in problem.spec.tasks}
        if colour_by is None:
            colour_by = "op" if any(t.op for t in problem.spec.tasks) else "group"
        if colour_by not in _COLOUR_BY:
            raise OptionError("colour_by", f"colour_by: unknown {colour_by!r} (use {', '.join(_COLOUR_BY)})")
        keys = {r.task: _key(spec[r.task], r.device, colour_by) for r in schedule.tasks}
        weight: dict[str, float] = {}
        for r in schedule.tasks:
            weight[keys[r.task]] = weight.get(keys[r.task], 0.0) + (r.end - r.start)
        ranked = sorted(weight, key=lambda k: (-weight[k], k))
        if colour_by == "device":  # one colour per device whatever the schedule: comparable pictures
            ranked = [d for d in problem.devices if d in weight]
        by_key = {k: PALETTE[n] if n < len(PALETTE) else OTHER_COLOUR for n, k in enumerate(ranked)}
        if colour_by == "none":
            by_key = {k: PALETTE[0] for k in ranked}
        legend = [(k, by_key[k]) for k in ranked[:len(PALETTE)]] if colour_by != "none" else []
        if len(ranked) > len(PALETTE):
            legend.append((f"{len(ranked) - len(PALETTE)} more", OTHER_COLOUR))
        makespan = schedule.makespan or max([r.end for r in schedule.tasks] + [0.0])
        return cls(problem, schedule, list(problem.devices), channels, routes,
                   {task: by_key[key] for task, key in keys.items()}, legend, makespan)

    def utilisation(self) -> list[Utilisation]:
        """Per device in problem order: busy time, number of tasks, share of the makespan."""
        busy = {d: 0.0 for d in self.devices}
        runs = {d: 0 for d in self.devices}
        for r in self.schedule.tasks:
            busy[r.device] += r.end - r.start
            runs[r.device] += 1
        span = self.makespan or 0.0
        return [Utilisation(d, busy[d], runs[d], busy[d] / span if span > 0 else 0.0)
                for d in self.devices]

    def channel_utilisation(self) -> list[Utilisation]:
        """Per channel that carries a transfer: busy time, transfers, share of the makespan."""
        busy = {c: 0.0 for c in self.channels}
        runs = {c: 0 for c in self.channels}
        for t, route in zip(self.schedule.transfers, self.routes):
            for c in route:
                busy[c] += t.end - t.start
                runs[c] += 1
        span = self.makespan or 0.0
        return [Utilisation(c, busy[c], runs[c], busy[c] / span if span > 0 else 0.0)
                for c in self.channels]


def _key(task: Any, device: str, colour_by: str) -> str:
    if colour_by == "op":
        return task.op or "(no op)"
    if colour_by == "device":
        return device
    if colour_by == "none":
        return ""
    if task.colocate:
        return task.colocate
    name = task.name
    cuts = [k for k in (name.find("/"), name.find("."), name.find("_")) if k > 0]
    # 'conv2_1' -> 'conv', 't1524' -> 't': numbered layers of one kind share a colour.
    return (name[:min(cuts)] if cuts else name).rstrip("0123456789") or name


def memory_series(problem: Any, schedule: Any, mode: str = "lifetime") -> dict[str, list[tuple[float, float]]]:
    """Memory level of each device over time as step points ``(time, level from then on)``:
    the series the pictures plot, of a finished schedule (the list scheduler's levels while it
    places tasks are :class:`~schedkit.timing.memory_levels.MemoryLevels`).

    Empty when the problem has no memory data. The level is the ``memory_timeline`` block's
    (:meth:`~schedkit.blocks.MemoryTimeline.occupancy`, in ``mode``): resident from time 0
    the static ``memory`` and the ``weight_memory`` of the tasks placed on a device; under
    ``lifetime`` a task's ``activation_memory`` (its output) from its start until the last
    of its consumers there and its outgoing transfers ends, and one copy on every other
    device that reads it, from the first transfer there until the last reader there ends;
    under ``deltas`` a positive activation from its task's start, a negative one released
    at its end.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> problem = Problem.load("examples/tiny.yaml")
    >>> levels = memory_series(problem, solve(problem, "heft"))
    >>> levels["gpu0"][0], levels["cpu"][0]
    ((0.0, 590000000.0), (0.0, 0.0))
    """
    from schedkit.blocks import MemoryTimeline

    if not any(problem.resident_memory) and not any(problem.activation_memory):
        return {}
    if {row.task for row in schedule.tasks} != set(problem.tasks):
        return {}  # (a picture of a schedule that misses tasks: their levels mean nothing)
    resident, items = MemoryTimeline(mode=mode).occupancy(problem, schedule)
    levels = {}
    for d, device in enumerate(problem.devices):
        events = [(start, amount) for start, _, amount in items[d]]
        events += [(finish, -amount) for _, finish, amount in items[d] if finish != math.inf]
        level, points = resident[d], [(0.0, resident[d])]
        # At equal times releases come first (they sort before additions: negative deltas).
        for time, delta in sorted(events):
            level += delta
            if points[-1][0] == time:
                points[-1] = (time, level)
            else:
                points.append((time, level))
        levels[device] = points
    return levels


def peak(points: list[tuple[float, float]]) -> float:
    """The highest level of a step function (0 when empty).

    Examples
    --------
    >>> peak([(0.0, 2.0), (1.0, 5.0), (2.0, 1.0)])
    5.0
    """
    return max((level for _, level in points), default=0.0) if points else 0.0


def time_label(problem: Any) -> str:
    """The label of a time axis: ``time (ms)`` when the problem records its unit, else ``time``.

    Examples
    --------
    >>> from types import SimpleNamespace as P
    >>> time_label(P(spec=P(time_unit="ms"))), time_label(P(spec=P(time_unit=None)))
    ('time (ms)', 'time')
    """
    unit = getattr(getattr(problem, "spec", None), "time_unit", None)
    return f"time ({unit})" if unit else "time"


def si(value: float) -> str:
    """A size with three significant digits and an SI prefix (memory, bytes).

    Examples
    --------
    >>> si(6.4e10), si(70_100_000), si(512), si(math.inf)
    ('64G', '70.1M', '512', 'unlimited')
    """
    if not math.isfinite(value):
        return "unlimited"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"


def bar_label(row, room: int) -> str:
    """The name on a task's bar, within ``room`` characters: the task, and ``×B`` for a batch
    of B inputs; cut with an ellipsis when it does not fit ("" under 3 characters).

    Examples
    --------
    >>> from schedkit.schedule import TaskRun
    >>> bar_label(TaskRun(task="conv1", device="gpu", start=0, end=1, inputs=[0, 1, 2]), 20)
    'conv1 ×3'
    >>> bar_label(TaskRun(task="conv1", device="gpu", start=0, end=1), 4)
    'con…'
    """
    text = f"{row.task} ×{len(row.inputs)}" if row.inputs and len(row.inputs) > 1 else row.task
    if room < 3:
        return ""
    return text if len(text) <= room else text[:max(1, room - 1)] + "…"


def nice_time(value: float) -> str:
    """A time for labels and tables: 4 significant digits, no exponent for ordinary values.

    Examples
    --------
    >>> nice_time(0.000123456), nice_time(1234.5678), nice_time(math.inf)
    ('0.0001235', '1235', 'inf')
    """
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.4g}".replace("e-0", "e-")
