"""The live progress line of ``schedkit solve`` (on a terminal): the method's own steps, or a ticker
against its time limit. The events it draws come from :mod:`schedkit.progress`."""

from __future__ import annotations

import contextlib
from typing import Any

from schedkit.progress import Ticker, silenced, terminal

__all__ = ["solve_with_progress", "solve_keeping"]


def solve_with_progress(method: Any, problem: Any, label: str, quiet: bool = False) -> Any:
    """``method.solve(problem)``, with progress on a terminal unless ``quiet`` (``schedkit solve``).

    A method with a ``progress`` attribute (a line over a decomposition's parts or a
    search's iterations, drawn only on a terminal) keeps its own, or loses it when ``quiet``; any other method gets a
    :class:`Ticker` of the time spent against its ``time_limit``, once it has run for a
    second. A method asked for its solver log (``verbose``) gets no ticker: the log streams
    instead.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.methods import METHODS
    >>> heft = METHODS.get("heft")()
    >>> solve_with_progress(heft, Problem.load("examples/tiny.yaml"), "heft").makespan
    4.51625
    """
    if hasattr(method, "progress") and quiet:
        method.progress = None
    with silenced() if quiet else contextlib.nullcontext():  # and the methods it calls
        if hasattr(method, "progress"):
            return method.solve(problem)
        options = method.options
        show = terminal() and not getattr(options, "verbose", False)
        with Ticker(label, limit=getattr(options, "time_limit", None), enabled=show):
            return method.solve(problem)


def solve_keeping(method: Any, problem: Any, label: str, quiet: bool = False) -> tuple[Any, Any]:
    """:func:`solve_with_progress`, and ``None``; interrupted (Ctrl-C, SIGTERM) after a schedule
    was found, that validated schedule and the :class:`~schedkit.errors.Interrupted` to raise
    once it is written.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.methods import METHODS
    >>> schedule, stopped = solve_keeping(METHODS.get("heft")(), Problem.load("examples/tiny.yaml"), "heft")
    >>> schedule.status, stopped
    ('heuristic', None)
    """
    from schedkit.errors import Interrupted

    try:
        return solve_with_progress(method, problem, label, quiet), None
    except Interrupted as stop:
        if stop.result is None or stop.result.schedule is None:
            raise
        return stop.result.to_schedule(), stop
