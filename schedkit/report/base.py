"""The ``RENDERERS`` registry: pictures and texts of a schedule, as pure functions.

A renderer is a function ``(problem, schedule, **options) -> str | bytes`` that depends
only on its arguments: it writes no file and keeps no state (the caller writes the
result). Third-party packages add renderers through the entry-point group
``schedkit.renderers``.

Examples
--------
>>> RENDERERS.get("text").__name__
'render_text'
>>> RENDERERS.get("no-such-picture")
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: unknown renderer 'no-such-picture' (known: gantt, html, svg, text, trace)
"""

from __future__ import annotations

from typing import Any, Callable

from schedkit.registry import Registry, doc_line

__all__ = ["RENDERERS", "register_renderer", "render", "list_renderers"]

RENDERERS = Registry("renderer", group="schedkit.renderers")


def register_renderer(name: str, *, replace: bool = False) -> Callable[[Callable], Callable]:
    """Function decorator: register a renderer ``(problem, schedule, **options)`` under ``name``.

    Parameters
    ----------
    name : str
        The renderer's name.
    replace : bool
        Take the place of a renderer already registered under ``name``.

    Examples
    --------
    >>> @register_renderer("demo-count")
    ... def count(problem, schedule):
    ...     '''The number of task runs.'''
    ...     return str(len(schedule.tasks))
    >>> RENDERERS.get("demo-count") is count
    True
    >>> RENDERERS.unregister("demo-count")
    """
    def add(function: Callable) -> Callable:
        if not callable(function):
            raise TypeError(f"renderer '{name}': {function!r} is not callable")
        RENDERERS.register(name, function, replace=replace)
        return function
    return add


def render(kind: str, problem: Any, schedule: Any, **options: Any) -> str | bytes:
    """Render ``schedule`` of ``problem`` with the registered renderer ``kind``.

    Parameters
    ----------
    kind : str
        A renderer name (:func:`list_renderers`).
    problem : Problem
        The problem the schedule answers.
    schedule : Schedule
        The schedule to show.
    **options
        The renderer's options.

    Returns
    -------
    str or bytes
        What the renderer made.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> problem = Problem.load("examples/tiny.yaml")
    >>> print(render("text", problem, solve(problem, "heft")).splitlines()[0])
    cpu:
    """
    return RENDERERS.get(kind)(problem, schedule, **options)


def list_renderers() -> list[tuple[str, str]]:
    """``(name, summary)`` of every registered renderer, sorted by name.

    Examples
    --------
    >>> dict(list_renderers())["text"]
    'The schedule as text, one line per task, grouped by device.'
    >>> [name for name, _ in list_renderers()]
    ['gantt', 'html', 'svg', 'text', 'trace']
    """
    return [(name, doc_line(function)) for name, function in RENDERERS.items()]
