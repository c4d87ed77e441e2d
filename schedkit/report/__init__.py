"""Visual and textual output: pure functions of a problem and a schedule.

Renderers are registered in :data:`RENDERERS`; each is a function
``(problem, schedule, **options) -> str | bytes`` that writes nothing itself. Built in:
``text`` (``solve --show``), ``gantt`` (matplotlib PNG/SVG/PDF, the ``viz`` extra), ``svg``
(a Gantt chart without matplotlib), ``trace`` (Chrome trace / Perfetto JSON) and ``html``
(the self-contained report page).

Examples
--------
>>> from schedkit.report import RENDERERS
>>> RENDERERS.names()
['gantt', 'html', 'svg', 'text', 'trace']
"""

from schedkit.report.base import RENDERERS, list_renderers, register_renderer, render
from schedkit.report.text import format_schedule, render_text
from schedkit.report.gantt import render_gantt  # imports matplotlib only when it draws
from schedkit.report.svg import render_svg
from schedkit.report.trace import render_trace
from schedkit.report.html import render_html

__all__ = ["RENDERERS", "list_renderers", "register_renderer", "render", "format_schedule",
           "render_text", "render_gantt", "render_svg", "render_trace", "render_html"]
