"""The Gantt chart as plain SVG, without matplotlib (the picture inside the HTML report).

One ``<rect class="task">`` per task and one ``<rect class="transfer">`` per transfer and
channel, each with a ``<title>`` (the tooltip a browser shows on hover); rows as in
:class:`~schedkit.report.layout.Layout`. The text goes through jinja2 with autoescaping, so
any task name is shown as written, never interpreted.

Examples
--------
>>> from schedkit import Problem, solve
>>> problem = Problem.load("examples/tiny.yaml")
>>> svg = render_svg(problem, solve(problem, "heft"))
>>> svg.count('class="task"'), svg.count('class="transfer"')
(6, 1)
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from schedkit.errors import printable
from schedkit.report.base import in_range, register_renderer
from schedkit.report.layout import Layout, bar_label, check_fits, nice_time

__all__ = ["render_svg", "ticks", "environment"]

#: Task names are written inside the bars only for schedules of at most this many tasks.
LABELLED_TASKS = 400


@lru_cache(maxsize=1)
def environment() -> Any:
    """The jinja2 environment of schedkit's report templates (autoescaping on)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("schedkit.report", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined, finalize=_shown)


#: Characters XML 1.0 does not allow (an SVG or XHTML page with one does not parse).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _shown(value: Any) -> Any:
    """Every value a template writes: a name's control characters escaped as in messages
    (:func:`~schedkit.errors.printable`); markup keeps its line breaks, not what XML refuses."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return Markup(_NOT_XML.sub(lambda m: printable(m.group()), value))
    return printable(value) if isinstance(value, str) else value


def ticks(end: float, count: int = 8) -> list[float]:
    """Round tick positions from 0 to ``end`` (steps of 1, 2 or 5 times a power of ten).

    Examples
    --------
    >>> ticks(4.5)
    [0.0, 1.0, 2.0, 3.0, 4.0]
    >>> ticks(1234)
    [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0]
    """
    if end <= 0:
        return [0.0]
    raw = end / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [float(round(k * step, 12)) for k in range(int(end / step + 1e-9) + 1)]


def gantt_svg_data(problem: Any, schedule: Any, colour_by: str | None = None,
                   width: int = 1100) -> dict:
    """The geometry the SVG template draws (pixels), and the legend."""
    width = in_range("width", width, 300, 100_000, "pixels", integer=True)  # 300: room for the labels
    layout = Layout.of(problem, schedule, colour_by)
    rows = layout.devices + layout.channels
    row_h = 22 if len(rows) <= 30 else max(7, int(22 - 5 * math.log2(len(rows) / 30)))
    left, top, right = 130, 24, 12
    span = layout.makespan if layout.makespan > 0 else 1.0
    scale = (width - left - right) / span
    y = {name: top + k * row_h for k, name in enumerate(rows)}
    spec = {t.name: t for t in problem.spec.tasks}
    labelled = len(schedule.tasks) <= LABELLED_TASKS and row_h >= 14
    tasks = []
    for r in schedule.tasks:
        x, w = left + r.start * scale, max(0.5, (r.end - r.start) * scale)
        room = int(w / 6.5)
        label = bar_label(r, room) if labelled else ""
        op = f" ({spec[r.task].op})" if spec[r.task].op else ""
        tasks.append({"x": x, "y": y[r.device] + 2, "w": w, "h": row_h - 4, "fill": layout.colours[r.task],
                      "label": label, "cx": x + w / 2, "cy": y[r.device] + row_h / 2 + 4,
                      "title": f"{r.task}{op} on {r.device}: {nice_time(r.start)} - {nice_time(r.end)}"})
    transfers = []
    for t, route in zip(schedule.transfers, layout.routes):
        for channel in route:
            transfers.append({"x": left + t.start * scale, "y": y[channel] + 4,
                              "w": max(1.0, (t.end - t.start) * scale), "h": row_h - 8,
                              "fill": layout.colours.get(t.src, "#555555"),
                              "title": f"{t.src} -> {t.dst}: {t.from_} -> {t.to}, "
                                       f"{nice_time(t.start)} - {nice_time(t.end)}"})
    height = top + len(rows) * row_h + 8
    return {"width": width, "height": height, "left": left, "top": top, "row_h": row_h,
            "font": 12 if row_h >= 14 else max(6, row_h - 2),
            "rows": [{"name": n, "y": y[n], "channel": k >= len(layout.devices)} for k, n in enumerate(rows)],
            "divider": top + len(layout.devices) * row_h if layout.channels else None,
            "ticks": [{"x": left + v * scale, "label": nice_time(v)} for v in ticks(span)],
            "tasks": tasks, "transfers": transfers, "legend": layout.legend}


@register_renderer("svg")
def render_svg(problem: Any, schedule: Any, *, colour_by: str | None = None, width: int = 1100) -> str:
    """Gantt chart as plain SVG (no matplotlib): a tooltip per task, any name shown as written.

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    colour_by : {"op", "group", "device", "none"}, optional
        See :meth:`~schedkit.report.layout.Layout.of`.
    width : int
        Width in pixels.

    Returns
    -------
    str
        A standalone ``<svg>`` element.
    """
    check_fits(problem, schedule)
    return environment().get_template("gantt.svg.j2").render(
        g=gantt_svg_data(problem, schedule, colour_by, width))
