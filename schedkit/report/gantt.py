"""The Gantt chart of a schedule, drawn with matplotlib (``schedkit plot``; the ``viz`` extra).

One row per device (problem order) with a bar per task, one row per channel that carries a
transfer, and, when the problem has memory data, a panel under them with the memory level
of every device over time (a line per device up to 12 devices, a heat strip per device
beyond). Colours show the operator type or the task group (:class:`~schedkit.report.layout.Layout`).
Bars are drawn as one collection, so that 4,000 tasks on 50 devices plot in about a second;
task names are written inside bars that are wide enough, for schedules of at most 400 tasks
on rows high enough to hold them.

Examples
--------
>>> from schedkit import Problem, solve
>>> problem = Problem.load("examples/tiny.yaml")
>>> png = render_gantt(problem, solve(problem, "heft"))
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
>>> b"<svg" in render_gantt(problem, solve(problem, "heft"), format="svg")
True
"""

from __future__ import annotations

import importlib
import io
import math
from typing import Any

from schedkit.errors import SchedkitError, printable
from schedkit.report.base import in_range, register_renderer
from schedkit.report.layout import Layout, bar_label, check_fits, memory_series, peak, si, time_label

__all__ = ["render_gantt", "gantt_figure", "FORMATS", "LABELLED_TASKS", "WIDTHS", "DPIS", "MAX_PIXELS"]

#: File formats :func:`render_gantt` writes.
FORMATS = ("png", "svg", "pdf")
#: Task names are written inside bars only for schedules of at most this many tasks.
LABELLED_TASKS = 400
_LINES_UP_TO = 12
#: Widths (inches) a chart may have: narrower, the layout has no room for the axes.
WIDTHS = (2.0, 1000.0)
#: Resolutions (dots per inch) of a PNG: below, fonts cannot be sized; above, no screen needs it.
DPIS = (10, 2400)
#: Pixels of a PNG at most (about 1 GB of memory while drawing).
MAX_PIXELS = 2**28
#: Text is drawn as given: a '$' in a name or title is not the start of matplotlib's mathtext.
_PLAIN_TEXT = {"text.parse_math": False}


def _matplotlib() -> Any:
    try:
        return importlib.import_module("matplotlib")
    except ModuleNotFoundError:
        raise SchedkitError("plotting needs the 'viz' extra (matplotlib): "
                            "pip install 'schedkit[viz]'") from None


def _row_height(rows: int) -> float:
    # Inches per row: roomy for a few devices, dense (but legible) for 200.
    return 0.42 if rows <= 8 else max(0.11, 0.42 - 0.06 * math.log2(rows / 8))


def gantt_figure(problem: Any, schedule: Any, *, colour_by: str | None = None,
                 title: str | None = None, width: float = 12.0) -> Any:
    """A matplotlib ``Figure`` of the Gantt chart (see the module documentation).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
        A schedule of ``problem`` (:func:`~schedkit.report.layout.check_fits`).
    colour_by : {"op", "group", "device", "none"}, optional
        What the colours show (default: ``op`` when the tasks give one).
    title : str, optional
        Default: the schedule's summary line.
    width : float
        Figure width in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    matplotlib = _matplotlib()
    width = in_range("width", width, *WIDTHS, "inches")
    if title is not None and not isinstance(title, str):
        raise SchedkitError(f"gantt: the title must be text, not {type(title).__name__}")
    check_fits(problem, schedule)
    with matplotlib.rc_context(_PLAIN_TEXT):
        return _figure(problem, schedule, colour_by, title, width)


def _figure(problem: Any, schedule: Any, colour_by: str | None, title: str | None, width: float) -> Any:
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    layout = Layout.of(problem, schedule, colour_by)
    rows = layout.devices + layout.channels
    row_of = {name: k for k, name in enumerate(rows)}
    levels = memory_series(problem, schedule)
    levels = {d: p for d, p in levels.items() if peak(p) > 0}
    row_in = _row_height(len(rows))
    gantt_in = row_in * len(rows) + 0.4
    varies = any(len(p) > 1 for p in levels.values())  # static memory only: flat lines
    memory_in = 0.0 if not levels else (1.3 if not varies else 2.2) if len(levels) <= _LINES_UP_TO \
        else max(1.5, _row_height(len(levels)) * len(levels))
    height = gantt_in + memory_in + 1.3
    fig = Figure(figsize=(width, height), layout="constrained")
    grid = fig.add_gridspec(2 if levels else 1, 1,
                            height_ratios=[gantt_in, memory_in] if levels else [1])
    ax = fig.add_subplot(grid[0])
    span = layout.makespan if layout.makespan > 0 else 1.0
    font = 9 if len(rows) <= 30 else max(4.0, 9 - 1.6 * math.log2(len(rows) / 30))

    boxes, colours = [], []
    for r in schedule.tasks:
        y = row_of[r.device]
        boxes.append([(r.start, y - 0.4), (r.start, y + 0.4), (r.end, y + 0.4), (r.end, y - 0.4)])
        colours.append(layout.colours[r.task])
    for t, route in zip(schedule.transfers, layout.routes):
        end = max(t.end, t.start + span * 1e-3)  # a short transfer still shows as a sliver
        for channel in route:
            y = row_of[channel]
            boxes.append([(t.start, y - 0.3), (t.start, y + 0.3), (end, y + 0.3), (end, y - 0.3)])
            colours.append(layout.colours.get(t.src, "#555555"))
    edge = "white" if len(boxes) <= 2000 else "none"
    ax.add_collection(PolyCollection(boxes, facecolors=colours, edgecolors=edge, linewidths=0.4))
    if len(schedule.tasks) <= LABELLED_TASKS and row_in >= 0.2:  # no names in hair-thin rows
        chars_per_unit = width * 72 * 0.8 / (font * 0.6) / span  # characters that fit per time unit
        for r in schedule.tasks:
            room = int((r.end - r.start) * chars_per_unit)
            if room >= 3:
                text = printable(bar_label(r, room))
                ax.text((r.start + r.end) / 2, row_of[r.device], text, ha="center", va="center",
                        fontsize=font * 0.85, clip_on=True)
    ax.set_xlim(0, span * 1.01)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)), [printable(r) for r in rows], fontsize=font)
    if layout.channels:
        ax.axhline(len(layout.devices) - 0.5, color="#888888", linewidth=0.8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(time_label(problem))
    # (every text drawn: a name's control characters escaped, as in messages; no mathtext)
    ax.set_title(printable(title if title is not None else schedule.summary(problem.spec.time_unit)), fontsize=10, loc="left")
    if len(layout.legend) > 1:  # a single colour needs no key
        handles = [Patch(facecolor=c, label=printable(k)) for k, c in layout.legend]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7,
                  frameon=False, title={"op": "op", "device": "device"}.get(colour_by or "", None))
    if levels:
        _memory_panel(fig.add_subplot(grid[1], sharex=ax), problem, layout, levels, font)
    return fig


def _memory_panel(ax: Any, problem: Any, layout: Layout, levels: dict, font: float) -> None:
    devices = [d for d in layout.devices if d in levels]
    end = layout.makespan if layout.makespan > 0 else 1.0
    capacity = {d: problem.device_memory[problem.device_index[d]] for d in devices}
    if len(devices) <= _LINES_UP_TO:
        for k, d in enumerate(devices):
            points = levels[d] + [(end, levels[d][-1][1])]
            colour = f"C{k % 10}"
            top = peak(levels[d])
            cap = f" / {si(capacity[d])}" if math.isfinite(capacity[d]) else ""
            ax.step([t for t, _ in points], [v for _, v in points], where="post", color=colour,
                    linewidth=1.2, label=printable(f"{d}: peak {si(top)}{cap}"))
            if math.isfinite(capacity[d]) and capacity[d] <= 4 * top:
                ax.axhline(capacity[d], color=colour, linestyle="--", linewidth=0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7, frameon=False,
                  title="memory")
        ax.set_ylabel("memory", fontsize=font)
        ax.set_ylim(0, 1.15 * max(peak(levels[d]) for d in devices))
        from matplotlib.ticker import EngFormatter

        ax.yaxis.set_major_formatter(EngFormatter())
    else:
        from matplotlib.collections import PolyCollection

        boxes, shades = [], []
        for row, d in enumerate(devices):
            scale = capacity[d] if math.isfinite(capacity[d]) and capacity[d] > 0 else peak(levels[d])
            points = levels[d] + [(end, 0.0)]
            for (t0, v), (t1, _) in zip(points, points[1:]):
                if t1 > t0:
                    boxes.append([(t0, row - 0.5), (t0, row + 0.5), (t1, row + 0.5), (t1, row - 0.5)])
                    shades.append(min(1.0, v / scale) if scale > 0 else 0.0)
        strips = PolyCollection(boxes, array=shades, cmap="viridis", clim=(0, 1), edgecolors="none")
        ax.add_collection(strips)
        ax.set_ylim(len(devices) - 0.5, -0.5)
        ax.set_yticks(range(len(devices)), [printable(d) for d in devices], fontsize=font)
        ax.figure.colorbar(strips, ax=ax, label="memory / capacity", fraction=0.03, pad=0.01)
    ax.set_xlabel(time_label(problem))
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)


@register_renderer("gantt")
def render_gantt(problem: Any, schedule: Any, *, format: str = "png", colour_by: str | None = None,
                 title: str | None = None, width: float = 12.0, dpi: int = 110) -> bytes:
    """Gantt chart (matplotlib): a row per device and per busy channel, memory levels below.

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    format : {"png", "svg", "pdf"}
        The file format of the bytes returned.
    colour_by, title, width
        See :func:`gantt_figure`.
    dpi : int
        Resolution of a PNG.

    Returns
    -------
    bytes
        The picture file's content.

    Raises
    ------
    SchedkitError
        Unknown format, matplotlib missing, a schedule of another problem, a width or dpi out
        of range (:data:`WIDTHS`, :data:`DPIS`) or a PNG of more than :data:`MAX_PIXELS`.
    """
    if format not in FORMATS:
        raise SchedkitError(f"gantt: unknown format '{format}' (use {', '.join(FORMATS)})")
    dpi = in_range("dpi", dpi, *DPIS, integer=True)
    fig = gantt_figure(problem, schedule, colour_by=colour_by, title=title, width=width)
    if format == "png":
        across, down = (round(v * dpi) for v in fig.get_size_inches())
        if across * down > MAX_PIXELS:
            raise SchedkitError(f"gantt: a PNG of {across}x{down} pixels is too large (at most "
                                f"{MAX_PIXELS:,} pixels): lower the dpi ({dpi}) or the width, or "
                                f"write an SVG or PDF")
    buffer = io.BytesIO()
    metadata = {"Date": None} if format == "svg" else None  # byte-identical SVGs for one schedule
    import matplotlib

    # SVG text as <text> elements (searchable, small), not as glyph outlines.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "schedkit", **_PLAIN_TEXT}):
        try:
            fig.savefig(buffer, format=format, dpi=dpi, metadata=metadata)
        except (TypeError, ValueError, OverflowError) as exc:
            # Times spanning hundreds of orders of magnitude (a forged row ending at 1e300 beside
            # rows of a second) overflow matplotlib's text transforms.
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SchedkitError(f"gantt: matplotlib cannot draw this schedule (times from "
                                f"{min((r.start for r in schedule.tasks), default=0):g} to "
                                f"{max((r.end for r in schedule.tasks), default=0):g}): {reason}") from None
    return buffer.getvalue()

