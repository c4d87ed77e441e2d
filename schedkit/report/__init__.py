"""Visual and textual output: pure functions of a problem and a schedule.

Renderers are registered in :data:`RENDERERS` (``text`` built in); each is a function
``(problem, schedule, **options) -> str | bytes`` that writes nothing itself.

Examples
--------
>>> from schedkit.report import RENDERERS
>>> "text" in RENDERERS.names()
True
"""

from schedkit.report.base import RENDERERS, list_renderers, register_renderer, render
from schedkit.report.text import format_schedule, render_text

__all__ = ["RENDERERS", "list_renderers", "register_renderer", "render", "format_schedule",
           "render_text"]
