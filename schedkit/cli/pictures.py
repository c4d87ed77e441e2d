"""``schedkit plot``, ``trace`` and ``report``: pictures of a schedule, written atomically.

Each command reads a problem and a schedule of it (a schedule of another problem is a
one-line error naming the mismatch), renders with the registered renderer
(:mod:`schedkit.report`) and writes the file only when rendering succeeded. ``schedkit
solve --plot FILE --report FILE`` uses :func:`write_pictures` to do the same after a solve.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="schedkit")
>>> add_picture_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["plot", "p.yaml", "s.json", "-o", "g.svg"])
>>> args.handler.__name__, args.outputs
('run_plot', {'output': ('.png', '.svg', '.pdf')})
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from schedkit.cli.common import add_formulation, files, load_problem, say

__all__ = ["PLOT_FILES", "REPORT_FILES", "TRACE_FILES", "TIME_UNITS", "add_picture_commands",
           "run_plot", "run_trace", "run_report", "write_pictures", "write_output", "mathematics"]

PLOT_FILES = (".png", ".svg", ".pdf")
REPORT_FILES = (".html", ".htm")
TRACE_FILES = (".json",)
#: Microseconds per time unit, for the trace's ``--time-unit``.
TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}
_COLOURS = ("op", "group", "device", "none")


def add_picture_commands(subparsers: Any) -> None:
    """Add ``plot``, ``trace`` and ``report``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    def inputs(p: argparse.ArgumentParser) -> None:
        p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
        p.add_argument("schedule", help="a schedule of that problem (schedkit solve -o)")

    def colours(p: argparse.ArgumentParser) -> None:
        p.add_argument("--colour-by", "--color-by", dest="colour_by", choices=_COLOURS, default=None,
                       help="what the task colours show [op when the tasks give one, else group]")

    p = subparsers.add_parser(
        "plot", help="draw a schedule as a Gantt chart (PNG, SVG or PDF; needs schedkit[viz])",
        description="Draw a Gantt chart with matplotlib: a row per device, a row per channel that "
                    "carries transfers, and the memory level of each device under them when the "
                    "problem has memory data.")
    inputs(p)
    p.add_argument("-o", "--output", required=True, help="picture to write: .png, .svg or .pdf")
    colours(p)
    p.add_argument("--title", default=None, help="title [the schedule's summary line]")
    p.add_argument("--width", type=float, default=12.0, help="width in inches [12]")
    p.add_argument("--dpi", type=int, default=110, help="resolution of a PNG [110]")
    p.set_defaults(handler=run_plot, **files(("problem", "schedule"), {"output": PLOT_FILES}))

    p = subparsers.add_parser(
        "trace", help="write a schedule as a Chrome trace / Perfetto JSON file",
        description="Write a Chrome trace (open it in chrome://tracing or ui.perfetto.dev): a "
                    "process per device and per busy channel, transfers as flow arrows.")
    inputs(p)
    p.add_argument("-o", "--output", required=True, help="trace to write (.json)")
    p.add_argument("--time-unit", choices=list(TIME_UNITS), default=None,
                   help="the problem's unit of time [the one the problem records, else ms, as in "
                        "schedkit's examples]")
    p.set_defaults(handler=run_trace, **files(("problem", "schedule"), {"output": TRACE_FILES}))

    p = subparsers.add_parser(
        "report", help="write a self-contained HTML page about a schedule",
        description="Write one HTML page: summary, status, bound and gap, the validator's verdict, "
                    "the Gantt chart (inline SVG), utilisation per device, transfers and the "
                    "formulation's mathematics.")
    inputs(p)
    p.add_argument("-o", "--output", required=True, help="page to write (.html)")
    add_formulation(p)
    colours(p)
    p.set_defaults(handler=run_report,
                   **files(("problem", "schedule", "formulation"), {"output": REPORT_FILES}))


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    from schedkit.report.layout import check_fits
    from schedkit.schedule import Schedule

    problem = load_problem(args.problem)
    schedule = Schedule.load(args.schedule)
    check_fits(problem, schedule, source=str(args.schedule))
    return problem, schedule


def write_output(path: str | Path, content: str | bytes) -> None:
    """Write text or bytes atomically (nothing is left behind when it fails).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> write_output(out, b"\\x00\\x01"); out.read_bytes()
    b'\\x00\\x01'
    """
    from schedkit.atomic import atomic_output, write_text_atomic

    if isinstance(content, str):
        write_text_atomic(path, content)
        return
    with atomic_output(path) as tmp:
        Path(tmp).write_bytes(content)


def mathematics(formulation: str | None, schedule: Any) -> tuple[str, list | None]:
    """The formulation's ``describe()`` text for a report, and the blocks the judge is given.

    ``formulation`` (a preset name or a file) when given: its text, and its blocks judge the
    schedule. Else the verdict is the one ``validate`` reaches (blocks ``None``: the schedule's
    recorded formulation, never weaker than the problem's own semantics), and the text is the
    recorded preset's, or ``latency``'s, whose blocks state the problem's own semantics. The
    method label picks neither.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> s = solve(Problem.load("examples/ft06.json"), "heft")
    >>> text, blocks = mathematics(None, s.model_copy(update={"method": "milp:jssp"}))
    >>> text.splitlines()[0], blocks
    ('## Formulation `latency`', None)
    """
    from schedkit.milp import FORMULATIONS, get_formulation

    if formulation is not None:
        found = get_formulation(formulation)
        return found.describe(), list(found.blocks)
    recorded = (schedule.formulation or {}).get("name")
    if isinstance(recorded, str) and recorded in FORMULATIONS:
        return FORMULATIONS.get(recorded).describe(), None
    return get_formulation(None).describe(), None


def _verdict(problem: Any, schedule: Any, blocks: list | None = None) -> tuple[list[str], str]:
    """The validator's violations (:func:`schedkit.validate.verdict`) and the words for them."""
    from schedkit.validate import verdict

    found = verdict(problem, schedule, blocks).violations
    return found, "valid" if not found else f"invalid: {len(found)} violation(s)"


def write_pictures(problem: Any, schedule: Any, *, plot: str | None = None, report: str | None = None,
                   formulation: str | None = None, violations: list[str] | None = None,
                   colour_by: str | None = None) -> None:
    """Render and write a Gantt picture and/or a report of a schedule (``solve --plot/--report``).

    A result without a schedule (``infeasible``, ``no_solution``) has nothing to draw: a note
    says which files were not written, rather than nothing at all.

    Examples
    --------
    >>> import contextlib, io
    >>> from schedkit import Problem, Schedule
    >>> empty = Schedule(problem="tiny", method="milp", status="infeasible")
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     write_pictures(Problem.load("examples/tiny.yaml"), empty, plot="g.png", report="r.html")
    >>> print(err.getvalue(), end="")
    schedkit: note: no schedule to draw (status infeasible): g.png, r.html not written
    """
    from schedkit.report import render

    if not schedule.tasks:
        names = ", ".join(str(f) for f in (plot, report) if f)
        if names:
            say(f"schedkit: note: no schedule to draw (status {schedule.status}): {names} not written", err=True)
        return
    if plot:
        write_output(plot, render("gantt", problem, schedule, format=Path(plot).suffix[1:].lower(),
                                  colour_by=colour_by))
    if report:
        text, blocks = mathematics(formulation, schedule)
        if violations is None:
            violations, _ = _verdict(problem, schedule, blocks)
        write_output(report, render("html", problem, schedule, formulation=text,
                                    violations=violations, colour_by=colour_by))


def run_plot(args: argparse.Namespace) -> int:
    """Handle ``schedkit plot``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from schedkit import Problem, solve
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> solve(Problem.load("examples/tiny.yaml"), "heft").write(folder / "s.json")
    >>> run_plot(argparse.Namespace(problem="examples/tiny.yaml", schedule=str(folder / "s.json"),
    ...          output=str(folder / "g.png"), colour_by=None, title=None, width=12.0, dpi=80))
    wrote .../g.png (valid)
    0
    """
    from schedkit.report import render

    problem, schedule = _load(args)
    words = _verdict(problem, schedule)[1]  # (first: a schedule it cannot judge leaves no file)
    picture = render("gantt", problem, schedule, format=Path(args.output).suffix[1:].lower(),
                     colour_by=args.colour_by, title=args.title, width=args.width, dpi=args.dpi)
    write_output(args.output, picture)
    say(f"wrote {args.output} ({words})")
    return 0


def run_trace(args: argparse.Namespace) -> int:
    """Handle ``schedkit trace``: the line written says the validator's verdict, as ``report``'s."""
    from schedkit.report import render

    problem, schedule = _load(args)
    words = _verdict(problem, schedule)[1]  # (first: a schedule it cannot judge leaves no file)
    unit = getattr(args, "time_unit", None) or problem.spec.time_unit or "ms"
    write_output(args.output, render("trace", problem, schedule, scale=TIME_UNITS[unit]))
    say(f"wrote {args.output} ({words}): open it in chrome://tracing or https://ui.perfetto.dev")
    return 0


def run_report(args: argparse.Namespace) -> int:
    """Handle ``schedkit report``: the page shows the validator's verdict on the schedule (the one
    ``validate`` reaches, unless ``-f`` names the formulation to judge by, as for ``validate``)."""
    from schedkit.report import render

    problem, schedule = _load(args)
    text, blocks = mathematics(args.formulation, schedule)
    found, words = _verdict(problem, schedule, blocks)
    write_output(args.output, render("html", problem, schedule, formulation=text, violations=found,
                                     colour_by=args.colour_by))
    say(f"wrote {args.output} ({words})")
    return 0
