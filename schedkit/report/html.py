"""One self-contained HTML page about a schedule (``schedkit report``).

The page holds: the summary (problem, method, status, makespan, bound and gap, time, and
the validator's verdict when the caller gives it), the Gantt chart as inline SVG
(:mod:`~schedkit.report.svg`), the utilisation and memory peak of every device, the busy
channels, the transfers, and the formulation's mathematics (the Markdown text of
``Formulation.describe()``, which the caller passes in: the report does not depend on the
MILP layer). No script, no external file: it opens anywhere, offline. The template is
rendered by jinja2 with autoescaping, so a task called ``<script>`` is shown, not run.

Examples
--------
>>> from schedkit import Problem, solve
>>> problem = Problem.load("examples/tiny.yaml")
>>> page = render_html(problem, solve(problem, "heft"), violations=[])
>>> page.startswith("<!DOCTYPE html>"), page.count('class="task"'), "valid" in page
(True, 6, True)
"""

from __future__ import annotations

import math
import re
from typing import Any

from schedkit.report.base import register_renderer
from schedkit.report.layout import Layout, check_fits, memory_series, nice_time, peak, si
from schedkit.report.svg import environment, render_svg
from schedkit.schedule.batched import inputs_of, is_batched, throughput

__all__ = ["render_html", "markdown_html", "TRANSFER_ROWS"]

#: The transfers table lists at most this many rows (the longest transfers first).
TRANSFER_ROWS = 300

_INLINE = re.compile(r"`([^`]+)`")


def markdown_html(text: str) -> Any:
    """The small Markdown of ``describe()`` as safe HTML (headings, lists, paragraphs, math).

    Everything is escaped; display math (``$$ ... $$``) becomes a ``<pre class="math">``
    block, inline math a ``<span class="math">``, both written with Unicode symbols
    (:func:`~schedkit.report.mathtext.latex_to_text`: the page loads no script to typeset
    LaTeX), and inline code a ``<code>``.

    Examples
    --------
    >>> str(markdown_html("## Blocks\\n\\nEach `task` <runs> $i \\\\in T$.\\n\\n$$x \\\\le 1$$"))
    '<h3>Blocks</h3>\\n<p>Each <code>task</code> &lt;runs&gt; <span class="math">i ∈ T</span>.</p>\\n<pre class="math">x ≤ 1</pre>'
    """
    from markupsafe import Markup, escape

    out: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []

    def inline(line: str) -> str:
        parts = re.split(r"(\$[^$\n]+\$)", line)  # inline math as text with Unicode symbols
        out = [f'<span class="math">{escape(_math(p[1:-1]))}</span>' if p.startswith("$") and len(p) > 2
               else _INLINE.sub(r"<code>\1</code>", str(escape(p))) for p in parts]
        return "".join(out)

    def flush() -> None:
        if paragraph:
            out.append("<p>" + inline(" ".join(paragraph)) + "</p>")
            paragraph.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    blocks = re.split(r"(\$\$.*?\$\$)", text, flags=re.DOTALL)
    for block in blocks:
        if block.startswith("$$") and block.endswith("$$") and len(block) >= 4:
            flush()
            out.append(f'<pre class="math">{escape(_math(block[2:-2].strip()))}</pre>')
            continue
        for line in block.splitlines():
            stripped = line.strip()
            heading = re.match(r"(#{1,4})\s+(.*)", stripped)
            if not stripped:
                flush()
            elif heading:
                flush()
                level = min(6, len(heading.group(1)) + 1)
                out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            elif stripped.startswith(("- ", "* ")):
                if paragraph:
                    flush()
                items.append(stripped[2:])
            elif items:
                items[-1] += " " + stripped  # a list item continued on the next line
            else:
                paragraph.append(stripped)
    flush()
    return Markup("\n".join(out))


def _math(latex: str) -> str:
    """LaTeX as plain text with Unicode symbols (the page loads no script to typeset it)."""
    try:
        from schedkit.report.mathtext import latex_to_text
    except ImportError:  # pragma: no cover - the LaTeX source is still readable
        return latex
    return latex_to_text(latex)


def _gap(schedule: Any) -> str:
    return "" if schedule.gap is None else f"{100 * schedule.gap:.2f}%"


@register_renderer("html")
def render_html(problem: Any, schedule: Any, *, formulation: str | None = None,
                violations: list[str] | None = None, title: str | None = None,
                colour_by: str | None = None) -> str:
    """One self-contained HTML page: summary, Gantt (inline SVG), utilisation, transfers, mathematics.

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    formulation : str, optional
        The formulation's mathematics (Markdown with LaTeX, as ``describe()`` writes it).
    violations : list of str, optional
        The validator's findings: ``[]`` shows "valid", a list shows them, ``None`` says
        the schedule was not checked.
    title : str, optional
        Page title (default: problem and method).
    colour_by : {"op", "group", "device", "none"}, optional
        What the Gantt's colours show.

    Returns
    -------
    str
        The page.
    """
    check_fits(problem, schedule)
    layout = Layout.of(problem, schedule, colour_by)
    levels = memory_series(problem, schedule)
    devices = []
    for use in layout.utilisation():
        k = problem.device_index[use.name]
        capacity = problem.device_memory[k]
        top = peak(levels.get(use.name, []))
        devices.append({"name": use.name, "busy": nice_time(use.busy), "runs": use.runs,
                        "share": f"{100 * use.share:.1f}", "width": f"{min(100.0, 100 * use.share):.1f}",
                        "memory": si(top) if levels else "", "capacity": si(capacity),
                        "memory_share": f"{100 * top / capacity:.1f}%" if levels and math.isfinite(capacity)
                        and capacity > 0 else ""})
    channels = [{"name": c.name, "busy": nice_time(c.busy), "runs": c.runs,
                 "share": f"{100 * c.share:.1f}", "width": f"{min(100.0, 100 * c.share):.1f}"}
                for c in layout.channel_utilisation()]
    moves = sorted(zip(schedule.transfers, layout.routes), key=lambda p: (p[0].start - p[0].end, p[0].start))
    transfers = [{"src": t.src, "dst": t.dst, "from": t.from_, "to": t.to, "start": nice_time(t.start),
                  "end": nice_time(t.end), "time": nice_time(t.end - t.start), "route": " + ".join(route)}
                 for t, route in moves[:TRANSFER_ROWS]]
    unit = f" {problem.spec.time_unit}" if problem.spec.time_unit else ""
    summary = [("problem", problem.name),
               ("size", f"{len(problem.tasks)} tasks, {len(problem.edges)} edges, "
                        f"{len(problem.devices)} devices, {len(problem.spec.links)} links"),
               ("method", schedule.method), ("status", schedule.status),
               ("makespan", "" if schedule.makespan is None else f"{schedule.makespan:.6g}{unit}"),
               ("throughput", f"{throughput(schedule):.6g} inputs per time unit ({inputs_of(schedule)} inputs in "
                              f"{len(schedule.tasks)} batches)" if is_batched(schedule) and schedule.makespan else ""),
               ("bound", "" if schedule.bound is None or not math.isfinite(schedule.bound)
                else f"{schedule.bound:.6g}{unit}"),
               ("gap", _gap(schedule)),
               ("solve time", "" if schedule.solve_seconds is None else f"{schedule.solve_seconds:.2f} s"),
               ("transfers", str(len(schedule.transfers)))]
    return environment().get_template("report.html.j2").render(
        title=title or f"{problem.name}: {schedule.method}",
        summary=[(k, v) for k, v in summary if v != ""], status=schedule.status,
        violations=violations, svg=_markup(render_svg(problem, schedule, colour_by=colour_by)),
        legend=layout.legend, devices=devices, channels=channels, transfers=transfers,
        more_transfers=max(0, len(moves) - TRANSFER_ROWS),
        has_memory=bool(levels), formulation=markdown_html(formulation) if formulation else None)


def _markup(svg: str) -> Any:
    # The SVG was rendered by the same autoescaping environment: safe to insert as is.
    from markupsafe import Markup

    return Markup(svg)
