"""``schedkit solve``: the command, its options read from the line, and its run.

The method option flags are generated from the methods' ``Options`` models by
:mod:`schedkit.cli.flags`; this module adds them to the command, reads back the ones given
(:func:`solve_options`) and runs the solve (:func:`run_solve`): the time limit counts the
loading of the problem, the schedule is printed, written and drawn.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from schedkit.cli.common import EXIT_NO_SCHEDULE, NO_LIMIT, SCHEDULE_FILES, files, load_problem, say
from schedkit.cli.flags import DEFAULT_METHOD, SolveFlag, field_help, solve_flags
from schedkit.cli.pictures import PLOT_FILES, REPORT_FILES
from schedkit.errors import OptionError, SchedkitError

__all__ = ["SolveFlag", "solve_flags", "field_help", "add_solve_command", "solve_options", "run_solve"]

LENIENT = {"verbose"}
"""Fields whose flag a method without the field ignores (they ask for output, not for an answer)."""
#: The time limit a method gets when loading took all of it: its quickest answer.
MIN_SECONDS_LEFT = 0.01


def add_solve_command(subparsers: Any, flags: bool = True, helps: bool = True) -> argparse.ArgumentParser:
    """Add ``solve`` with a flag per option field of every registered method.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    flags : bool
        Generate the method flags (another command's line does not need them).
    helps : bool
        Write their help texts (read from the option classes' source: only for ``--help``).

    Returns
    -------
    argparse.ArgumentParser
        The command's parser.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_solve_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["solve", "p.yaml", "-m", "annealing", "--seed", "4"])
    >>> args.method, args.seed, args.time_limit
    ('annealing', 4, None)
    """
    generated = solve_flags(helps=helps) if flags else []
    p = subparsers.add_parser(
        "solve", help="solve a problem and print a summary",
        description="Solve a problem with a registered method and print a one-line summary. "
                    "The method options below are generated from the methods' option models; "
                    "each applies to the methods in brackets (a pattern such as *+msr names "
                    "every method ending in +msr).")
    p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
    p.add_argument("--method", "-m", default=DEFAULT_METHOD,
                   help=f"a method from 'schedkit methods' [{DEFAULT_METHOD}]")
    p.add_argument("--show", action="store_true", help="print the schedule, device by device")
    p.add_argument("-o", "--output", help="write the schedule (JSON) here")
    p.add_argument("--plot", metavar="FILE", help="also draw the schedule's Gantt chart (.png, .svg, "
                                                  ".pdf; needs schedkit[viz])")
    p.add_argument("--report", metavar="FILE", help="also write the HTML report (.html)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress line on the terminal (it never shows when stderr is not one)")
    group = p.add_argument_group("method options")
    for flag in generated:
        flag.add_to(group)
    p.set_defaults(handler=run_solve, solve_flags=generated,
                   **files(("problem", "formulation"), {"output": SCHEDULE_FILES, "plot": PLOT_FILES,
                                                        "report": REPORT_FILES}))
    return p


def solve_options(args: argparse.Namespace) -> dict:
    """The options the command line gives to ``args.method``: the flags that were given.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line, with the generated flags in ``args.solve_flags``.

    Returns
    -------
    dict
        Field name -> value of every generated flag that was given.

    Raises
    ------
    SchedkitError
        ``method 'heft' does not take --gap`` for a flag the method has no field for
        (``--verbose`` is ignored by methods that do not stream a log).

    Examples
    --------
    >>> args = argparse.Namespace(method="heft", solve_flags=solve_flags(), gap=None,
    ...                           insertion=False, verbose=True)
    >>> solve_options(args)
    {'insertion': False}
    >>> args.gap = 0.1
    >>> solve_options(args)
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: method 'heft' does not take --gap
    """
    from schedkit.methods import METHODS

    try:
        fields = METHODS.get(args.method).Options.model_fields
    except SchedkitError as exc:
        raise OptionError("method", str(exc)) from None
    options = {}
    for flag in args.solve_flags:
        value = getattr(args, flag.name, None)
        if value is None:
            continue
        if flag.name not in fields:
            if flag.name in LENIENT:
                continue
            raise SchedkitError(f"method '{args.method}' does not take {flag.long}")
        options[flag.name] = None if value is NO_LIMIT else value
    return options


def run_solve(args: argparse.Namespace) -> int:
    """Handle ``schedkit solve``: solve, print the summary, maybe the schedule, maybe write it.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        0, or 4 when the method found no schedule (interrupted: written, then re-raised).

    Examples
    --------
    >>> from schedkit.cli.main import main
    >>> main(["solve", "examples/tiny.yaml", "-m", "heft"])
    heft on tiny: status=heuristic makespan=4.51625 bound=3.482608696 gap=22.89% time=...
    0
    """
    from schedkit.cli.live_progress import solve_keeping
    from schedkit.methods import METHODS
    from schedkit.report import format_schedule
    from schedkit.validate import ignored_data

    began = time.perf_counter()          # (a time limit counts the loading too)
    problem = load_problem(args.problem)
    options = solve_options(args)        # first: it names a bad --method as such
    method = METHODS.get(args.method)(**options)
    limit = method.options.time_limit
    if limit is not None:
        left = max(limit - (time.perf_counter() - began), MIN_SECONDS_LEFT)
        method = METHODS.get(args.method)(**{**options, "time_limit": left})
    say(*(f"schedkit: note: {note}" for note in ignored_data(problem, method.blocks(problem))), err=True)
    schedule, stopped = solve_keeping(method, problem, args.method, quiet=getattr(args, "quiet", False))
    say(schedule.summary(problem.spec.time_unit))
    if schedule.message:
        say(f"schedkit: note: {schedule.message}", err=True)
    if args.show:
        say(*format_schedule(schedule).splitlines())
    if args.output:
        schedule.write(args.output)
    if getattr(args, "plot", None) or getattr(args, "report", None):
        from schedkit.cli.pictures import write_pictures

        # The method validated the schedule against its blocks before returning it.
        formulation = getattr(method.options, "formulation", None)
        write_pictures(problem, schedule, plot=args.plot, report=args.report,
                       formulation=formulation if isinstance(formulation, str) else None,
                       violations=[])
    if stopped is not None:
        raise stopped  # (the command line says it and exits 128 + signal)
    return 0 if schedule.tasks else EXIT_NO_SCHEDULE

