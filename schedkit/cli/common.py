"""What the command modules share: exit codes, problem loading, the ``--formulation`` flag."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["EXIT_ERROR", "EXIT_INVALID", "load_problem", "add_formulation"]

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
