"""What the command modules share: exit codes, problem loading, the ``--formulation`` flag."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["EXIT_ERROR", "EXIT_INVALID", "SCHEDULE_FILES", "PROBLEM_FILES", "load_problem",
           "add_formulation", "files", "check_outputs"]

#: Suffixes a schedule or a problem may be written with (JSON, or YAML by suffix).
SCHEDULE_FILES = (".json", ".yaml", ".yml")
PROBLEM_FILES = (".json", ".yaml", ".yml")


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

EXIT_ERROR = 1
"""Exit status of a user error (and of a solve that found no schedule)."""
EXIT_INVALID = 3
"""Exit status of ``schedkit validate`` when the schedule violates its problem."""


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
                        help="preset name (latency, jssp) or a YAML/JSON formulation file [latency]")
