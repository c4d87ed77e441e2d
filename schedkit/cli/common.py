"""What the command modules share: exit codes, problem loading, the ``--formulation`` flag."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from schedkit.errors import printable, shorten

__all__ = ["EXIT_OK", "EXIT_ERROR", "EXIT_USAGE", "EXIT_INVALID", "EXIT_NO_SCHEDULE", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED", "EXIT_CODES", "finite_float", "SCHEDULE_FILES", "PROBLEM_FILES", "load_problem",
           "add_formulation", "files", "check_outputs", "say", "infeasibilities"]

#: Suffixes a schedule or a problem may be written with (JSON, or YAML by suffix).
SCHEDULE_FILES = (".json", ".yaml", ".yml")
PROBLEM_FILES = (".json", ".yaml", ".yml")


def finite_float(text: str) -> float:
    """argparse type: a finite number (``nan`` and ``inf`` are refused, naming the value).

    Examples
    --------
    >>> finite_float("2.5")
    2.5
    >>> finite_float("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'nan' is not a finite number
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


class NoLimit:
    """``--time-limit none``: the limit lifted (the method's option is then ``None``)."""

    def __repr__(self) -> str:
        return "none"


NO_LIMIT = NoLimit()


def time_limit(text: str) -> float | NoLimit:
    """argparse type of ``--time-limit``: a finite number of seconds, or ``none`` (no limit).

    Examples
    --------
    >>> time_limit("30"), time_limit("none")
    (30.0, none)
    >>> time_limit("soon")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'soon' is not a number of seconds nor 'none'
    """
    if text.strip().lower() == "none":
        return NO_LIMIT
    try:
        return finite_float(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} of seconds nor 'none'") from None


def files(inputs: tuple[str, ...] = (), outputs: dict[str, tuple[str, ...]] | None = None) -> dict:
    """Defaults for ``set_defaults`` that name a command's input and output file arguments.

    ``outputs`` maps an argument to the suffixes it may be written with (empty: any).
    :func:`check_outputs` checks them before the command runs.

    Examples
    --------
    >>> files(("problem",), {"output": (".json",)})
    {'inputs': ('problem',), 'outputs': {'output': ('.json',)}}
    """
    return {"inputs": inputs, "outputs": outputs or {}}


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, every output argument of ``args`` that cannot be written.

    An output equal to an input file, a folder, a path in a missing folder or without
    write permission, or with a suffix the command cannot write, is a one-line error naming
    the user's path (see :func:`schedkit.atomic.check_output`).

    Examples
    --------
    >>> args = argparse.Namespace(problem="examples/tiny.yaml", output="examples/tiny.yaml",
    ...                           **files(("problem",), {"output": (".json", ".yaml")}))
    >>> check_outputs(args)
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: examples/tiny.yaml: the output would overwrite an input file
    """
    from schedkit.atomic import check_output

    inputs = [getattr(args, name, None) for name in getattr(args, "inputs", ())]
    for name, suffixes in getattr(args, "outputs", {}).items():
        value = getattr(args, name, None)
        if value is not None:
            check_output(value, inputs, suffixes)

EXIT_OK = 0
"""Success: the command did what it was asked (a schedule was found, a file written)."""
EXIT_ERROR = 1
"""A user error: a bad file, option or value (one line on stderr names it)."""
EXIT_USAGE = 2
"""A malformed command line (argparse: an unknown flag, a missing argument)."""
EXIT_INVALID = 3
"""``schedkit validate``: the schedule violates its problem or formulation."""
EXIT_NO_SCHEDULE = 4
"""``schedkit solve``: no schedule: ``infeasible`` or ``no_solution``, or a method that found none
(:class:`~schedkit.errors.NoScheduleError`: a heuristic without a placement, whose message says
whether that is a proof)."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C, SIGINT): ``solve`` has written the best schedule so far."""
EXIT_TERMINATED = 143
"""Terminated (SIGTERM): as after Ctrl-C (see :mod:`schedkit.interrupt`)."""

#: Exit statuses, as ``schedkit --help`` documents them.
EXIT_CODES = {EXIT_OK: "success", EXIT_ERROR: "a bad file, option or value",
              EXIT_USAGE: "a malformed command line", EXIT_INVALID: "validate: the schedule is invalid",
              EXIT_NO_SCHEDULE: "solve: no schedule (infeasible, no_solution, or the method found none)",
              EXIT_INTERRUPTED: "interrupted (Ctrl-C; solve writes its best schedule so far)",
              EXIT_TERMINATED: "terminated (SIGTERM; likewise)"}


def load_problem(path: str | Path):
    """Load a problem file (one-line :class:`~schedkit.errors.ProblemError` when it is bad).

    Parameters
    ----------
    path : str or Path
        A ``schedkit/v1`` problem file (JSON or YAML).

    Examples
    --------
    >>> load_problem("examples/tiny.yaml")
    Problem('tiny': 6 tasks, 6 edges, 2 devices)
    """
    from schedkit.problem import Problem

    return Problem.load(path)


def add_formulation(parser: argparse.ArgumentParser) -> None:
    """Add ``--formulation/-f`` to the parser of a command that builds the MILP.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A parser or argument group.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_formulation(parser)
    >>> parser.parse_args(["-f", "jssp"]).formulation
    'jssp'
    """
    parser.add_argument("--formulation", "-f", default=None,
                        help="a preset name ('schedkit formulations' lists them) or a YAML/JSON "
                             "formulation file [latency]")


def say(*lines: object, err: bool = False) -> None:
    """Print each of ``lines`` as one line, control characters escaped (:func:`~schedkit.errors.printable`).

    Every message and listing of the command line goes through it: names come from users'
    files, and a newline or an escape sequence in one must not split a line or act on the
    terminal; a run of 300 characters or more without a space is shown by its start and length
    (:func:`~schedkit.errors.shorten`). ``err``: to stderr.

    Examples
    --------
    >>> say("heft on a\\nb: status=heuristic", "task 'x\\x1b[31m'")
    heft on a\\nb: status=heuristic
    task 'x\\x1b[31m'
    """
    stream = sys.stderr if err else sys.stdout
    for line in lines:
        print(_LONG_RUN.sub(lambda m: shorten(m.group(), 100), printable(line)), file=stream)


#: A run of 300 characters without a space (a name or value pasted by mistake, megabytes long):
#: a message shows its start and its length.
_LONG_RUN = re.compile(r"\S{300,}")


def infeasibilities(problem) -> list[str]:
    """Reasons, provable at once, why no schedule of ``problem`` exists (empty when none is known).

    Examples
    --------
    >>> from schedkit.problem import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
    ...                        "tasks": [{"name": f"t{i}", "work": 1, "memory": 3} for i in range(3)]})
    >>> infeasibilities(p)
    ['the tasks need 9 of memory, the devices hold 8 in all: no placement fits']
    """
    need = sum(problem.task_memory)
    hold = sum(problem.device_memory)
    if need > hold:
        return [f"the tasks need {need:g} of memory, the devices hold {hold:g} in all: no placement fits"]
    return []
