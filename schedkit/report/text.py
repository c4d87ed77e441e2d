"""The schedule as plain text: one line per task, grouped by device (``schedkit solve --show``)."""

from __future__ import annotations

from typing import Any

from schedkit.errors import printable
from schedkit.report.base import register_renderer

__all__ = ["format_schedule", "render_text"]


def format_schedule(schedule: Any) -> str:
    """The schedule as text, one line per task, grouped by device.

    Devices come in name order, the tasks of a device by start time; devices without a
    task are left out. Times get as many significant digits (6 to 12) as it takes to tell
    every two different times of the schedule apart.

    Parameters
    ----------
    schedule : Schedule
        The schedule to show.

    Returns
    -------
    str
        Lines ``device:`` followed by ``  start - end task`` (and ``inputs 0-7`` for a batch;
        no final newline); control characters in names are escaped
        (:func:`~schedkit.errors.printable`).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> print(format_schedule(solve(Problem.load("examples/tiny.yaml"), "heft")))
    cpu:
         4.21625 - 4.51625    sample
    gpu0:
               0 - 0.4        embed
             0.4 - 1.9        mlp
             1.9 - 3.1        attn
             3.1 - 3.3        norm
             3.3 - 4.2        logits
    """
    lines = []
    by_device: dict[str, list] = {}
    for row in schedule.tasks:
        by_device.setdefault(row.device, []).append(row)
    digits = _digits([t for row in schedule.tasks for t in (row.start, row.end)])
    width = max(10, digits + 4)
    for device in sorted(by_device):
        lines.append(f"{printable(device)}:")  # (names as the terminal shows them: one line each)
        for row in sorted(by_device[device], key=lambda r: r.start):
            held = f"  inputs {_spans(row.inputs)}" if row.inputs else ""  # (a batch)
            lines.append(f"  {row.start:>{width}.{digits}g} - {row.end:<{width}.{digits}g} {printable(row.task)}{held}")
    return "\n".join(lines)


def _spans(inputs: list[int]) -> str:
    """Input indices as ranges: ``0-3,6``.

    >>> _spans([6, 0, 1, 2, 3])
    '0-3,6'
    """
    out, ordered = [], sorted(inputs)
    first = last = ordered[0]
    for l in ordered[1:] + [None]:
        if l is not None and l == last + 1:
            last = l
            continue
        out.append(f"{first}-{last}" if last > first else f"{first}")
        if l is not None:
            first = last = l
    return ",".join(out)


def _digits(times: list[float]) -> int:
    """The fewest significant digits (6 to 12) that print different times differently."""
    distinct = set(times)
    for digits in range(6, 13):
        if len({f"{t:.{digits}g}" for t in distinct}) == len(distinct):
            return digits
    return 12


@register_renderer("text")
def render_text(problem: Any, schedule: Any) -> str:
    """The schedule as text, one line per task, grouped by device.

    The ``text`` renderer: :func:`format_schedule` with a final newline; ``problem`` is
    not needed.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> problem = Problem.load("examples/tiny.yaml")
    >>> schedule = solve(problem, "heft")
    >>> render_text(problem, schedule) == format_schedule(schedule) + "\\n"
    True
    """
    return format_schedule(schedule) + "\n"
