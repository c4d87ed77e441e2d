"""Commands that list what is registered: ``describe``, ``methods``, ``blocks``, ``formulations``."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from schedkit.cli.common import say

__all__ = ["add_listing_commands", "run_describe", "run_listing", "LISTINGS"]


def _methods() -> list[tuple[str, str]]:
    from schedkit.methods import list_methods

    return list_methods()


def _blocks() -> list[tuple[str, str]]:
    from schedkit.milp.formulation import list_blocks

    return list_blocks()


def _formulations() -> list[tuple[str, str]]:
    from schedkit.milp.formulation import list_formulations

    return list_formulations()


#: Listing command -> (help, rows of (name, summary), width of the name column).
LISTINGS: dict[str, tuple[str, Callable[[], list[tuple[str, str]]], int]] = {
    "methods": ("list the registered methods", _methods, 24),
    "blocks": ("list the registered constraint blocks", _blocks, 16),
    "formulations": ("list the preset formulations", _formulations, 12),
}


def add_listing_commands(subparsers: Any) -> None:
    """Add ``describe``, ``methods``, ``blocks`` and ``formulations``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> add_listing_commands(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["describe"]).formulation
    'latency'
    """
    p = subparsers.add_parser("describe", help="print a formulation's mathematics")
    p.add_argument("formulation", nargs="?", default="latency",
                   help="a preset name or a formulation file [latency]")
    p.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                   help="plain text for a terminal (default), Markdown with LaTeX math (as in the docs), "
                        "or LaTeX")
    p.set_defaults(handler=run_describe)
    for command, (text, _, _) in LISTINGS.items():
        subparsers.add_parser(command, help=text).set_defaults(handler=run_listing)


def run_describe(args: argparse.Namespace) -> int:
    """Handle ``schedkit describe``: a formulation's mathematics, as text, Markdown or LaTeX.

    Examples
    --------
    >>> run_describe(argparse.Namespace(formulation="jssp", format="text"))
    Formulation jssp
    ================
    ...
    0
    >>> run_describe(argparse.Namespace(formulation="jssp", format="markdown"))
    ## Formulation `jssp`
    ...
    0
    """
    from schedkit.milp.formulation import get_formulation
    from schedkit.report.mathtext import to_latex, to_text

    text = get_formulation(args.formulation).describe()
    form = getattr(args, "format", "text")
    say(*{"text": to_text, "latex": to_latex}.get(form, lambda t: t)(text).rstrip().splitlines())
    return 0


def run_listing(args: argparse.Namespace) -> int:
    """Handle ``schedkit methods|blocks|formulations``: one line per registered entry.

    Examples
    --------
    >>> run_listing(argparse.Namespace(command="blocks"))
    assignment       Each task runs on exactly one of its allowed devices, for its duration there.
    ...
    0
    """
    _, rows, width = LISTINGS[args.command]
    for name, summary in rows():
        say(f"{name:{width}} {summary}")
    return 0
