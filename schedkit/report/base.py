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
schedkit.errors.SchedkitError: unknown renderer 'no-such-picture' (known: gantt, html, svg, text, trace); a renderer of your own loads from its Python file with --plugin FILE.py (or SCHEDKIT_PLUGINS=FILE.py)
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable

from schedkit.errors import OptionError, SchedkitError, expect
from schedkit.registry import Registry, doc_line

__all__ = ["RENDERERS", "register_renderer", "render", "list_renderers", "in_range"]

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
    from schedkit.problem import Problem
    from schedkit.schedule import Schedule

    renderer = RENDERERS.get(kind)
    expect(problem, Problem, "a Problem", SchedkitError)
    expect(schedule, Schedule, "a Schedule", SchedkitError)
    try:
        inspect.signature(renderer).bind(problem, schedule, **options)
    except TypeError:
        taken = inspect.signature(renderer).parameters
        unknown = next((k for k in options if k not in taken), None)
        raise SchedkitError(f"renderer '{kind}' takes no option '{unknown}'" if unknown else
                            f"renderer '{kind}': bad arguments") from None
    return renderer(problem, schedule, **options)


def in_range(option: str, value: Any, low: float, high: float, unit: str = "",
             integer: bool = False) -> float:
    """``value`` of a picture's ``option`` when it is a number from ``low`` to ``high``.

    Anything else (a boolean, a string, ``nan``, out of range) is an
    :class:`~schedkit.errors.OptionError` naming the option (the command line shows it as
    ``--option VALUE``), never a matplotlib error or a picture of billions of pixels.

    Examples
    --------
    >>> in_range("width", 12, 2, 1000, "inches")
    12.0
    >>> in_range("dpi", 0, 10, 2400, integer=True)
    Traceback (most recent call last):
    ...
    schedkit.errors.OptionError: dpi: must be a whole number from 10 to 2400, not 0
    """
    kind = "a whole number" if integer else "a number"
    unit = f" {unit}" if unit else ""
    message = f"{option}: must be {kind} from {low:g} to {high:g}{unit}, not {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionError(option, message)
    if not (math.isfinite(value) and low <= value <= high) or (integer and value != int(value)):
        raise OptionError(option, message)
    return int(value) if integer else float(value)


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
