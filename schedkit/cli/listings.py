"""Commands that list what is registered: ``describe``, ``methods``, ``blocks``, ``formulations``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_listing_commands", "run_describe", "run_methods", "run_blocks", "run_formulations"]


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
    p.add_argument("formulation", nargs="?", default="latency")
    p.set_defaults(handler=run_describe)
    subparsers.add_parser("methods", help="list the registered methods").set_defaults(handler=run_methods)
    subparsers.add_parser("blocks", help="list the registered constraint blocks").set_defaults(
        handler=run_blocks)
    subparsers.add_parser("formulations", help="list the preset formulations").set_defaults(
        handler=run_formulations)


def run_describe(args: argparse.Namespace) -> int:
    """Handle ``schedkit describe``: a formulation's mathematics as Markdown with LaTeX.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> run_describe(argparse.Namespace(formulation="jssp"))
    ## Formulation `jssp`
    ...
    0
    """
    from schedkit.milp.formulation import get_formulation

    print(get_formulation(args.formulation).describe())
    return 0


def run_methods(args: argparse.Namespace) -> int:
    """Handle ``schedkit methods``: one line per registered method.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> run_methods(argparse.Namespace())
    annealing                Simulated annealing ...
    ...
    milp                     Exact MILP: ...
    ...
    0
    """
    from schedkit.methods import list_methods

    for name, summary in list_methods():
        print(f"{name:24} {summary}")
    return 0


def run_blocks(args: argparse.Namespace) -> int:
    """Handle ``schedkit blocks``: one line per registered constraint block.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> run_blocks(argparse.Namespace())
    assignment ...
    0
    """
    from schedkit.milp.formulation import list_blocks

    for kind, summary in list_blocks():
        print(f"{kind:16} {summary}")
    return 0


def run_formulations(args: argparse.Namespace) -> int:
    """Handle ``schedkit formulations``: one line per preset formulation.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> run_formulations(argparse.Namespace())
    jssp ...
    0
    """
    from schedkit.milp.formulation import list_formulations

    for name, blocks in list_formulations():
        print(f"{name:12} {blocks}")
    return 0
