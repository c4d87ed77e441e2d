"""``schedkit export``: the MILP as an LP or MPS file, for any solver."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from schedkit.cli.common import add_formulation, files, load_problem, say

__all__ = ["add_export_command", "run_export", "without_cuts"]


def add_export_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``export``; its help lists the preset formulations of the registry.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The command's parser.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> export = add_export_command(parser.add_subparsers(dest="command"))
    >>> print(export.epilog)
    preset formulations (-f NAME; or -f FILE.yaml):
      fdjssp ...
      latency ...
    >>> export.parse_args(["p.yaml", "-o", "m.lp", "--no-cuts"]).no_cuts
    True
    """
    from schedkit.milp.formulation import list_formulations

    presets = [textwrap.fill(f"{name:12} {summary}", 79, initial_indent="  ", subsequent_indent=" " * 15)
               for name, summary in list_formulations()]
    p = subparsers.add_parser(
        "export", help="write the MILP as an LP or MPS file for any solver",
        description=textwrap.fill(
            "Write the MILP of a problem and formulation as an LP or MPS file (by the output's "
            "suffix), with names that show each row's block. 'schedkit load-solution' turns the "
            "solution file of any solver back into a validated schedule. The model's size is "
            "estimated before it is built: one that would not fit in half the memory free, or a "
            "file larger than the disk's free space, is refused in one line. The file is written "
            "a chunk of rows at a time to a temporary file renamed at the end: an error or Ctrl-C "
            "leaves nothing.", 79),
        epilog="preset formulations (-f NAME; or -f FILE.yaml):\n" + "\n".join(presets),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("problem")
    add_formulation(p)
    p.add_argument("-o", "--output", required=True, help="model.lp or model.mps")
    p.add_argument("--no-cuts", action="store_true",
                   help="leave the cut rows out (the 'cuts' block's load and chain rows, valid "
                        "inequalities that remove no schedule): a smaller file, often a weaker "
                        "relaxation; 'load-solution' reads its solutions with or without the flag")
    p.set_defaults(handler=run_export, **files(("problem", "formulation"), {"output": (".lp", ".mps")}))
    return p


def without_cuts(formulation):
    """``formulation`` without the rows of its ``cut`` blocks: the same columns and schedules.

    Blocks of role ``cut`` are left out, and ``cuts`` is listed with both of its row
    families off (a formulation without ``cuts`` would get it back with its defaults).

    Parameters
    ----------
    formulation : Formulation

    Returns
    -------
    Formulation
        Of the same name, objective and other blocks.

    Examples
    --------
    >>> from schedkit import get_formulation
    >>> f = without_cuts(get_formulation("jssp"))
    >>> f.name, f.blocks[-1]
    ('jssp', Cuts(load=False, chain=False, chain_thresholds=4))
    """
    from schedkit.blocks import Cuts
    from schedkit.milp.formulation import Formulation

    kept = tuple(b for b in formulation.blocks if b.role != "cut")
    return Formulation(name=formulation.name, description=formulation.description,
                       objective=formulation.objective, blocks=kept + (Cuts(load=False, chain=False),))


def run_export(args: argparse.Namespace) -> int:
    """Handle ``schedkit export``: write the MILP as an LP or MPS file (by suffix).

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
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "tiny.lp"
    >>> run_export(argparse.Namespace(problem="examples/tiny.yaml", formulation=None,
    ...                               output=str(out)))
    wrote .../tiny.lp: ... columns, ... rows (horizon ...)
    0
    >>> run_export(argparse.Namespace(problem="examples/tiny.yaml", formulation=None,
    ...                               output=str(out), no_cuts=True))
    wrote .../tiny.lp: ... columns, ... rows (horizon ...; without cut rows)
    0
    """
    from schedkit.errors import SchedkitError
    from schedkit.milp import Milp
    from schedkit.milp.export import check_export, write_model

    problem = load_problem(args.problem)
    milp = Milp(formulation=args.formulation)
    cutless = getattr(args, "no_cuts", False)
    if cutless:
        milp = Milp(formulation=without_cuts(milp.formulation))
    check_export(milp.formulation, problem, args.output)  # (before minutes of building)
    try:  # (the estimate is an average, of the machine's free memory, not of ulimit -v: one line)
        built = milp.build(problem)
        names = write_model(built, args.output)  # (streamed: the build's peak; no partial file stays)
    except MemoryError:
        raise SchedkitError(f"{args.output}: not written: the machine ran out of memory for the model") from None
    rows = built.linear.num_rows
    say(f"wrote {args.output}: {len(names)} columns, {rows} rows (horizon {built.horizon:g}"
        f"{'; without cut rows' if cutless else ''})")
    return 0
