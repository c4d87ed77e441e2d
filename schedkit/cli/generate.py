"""``schedkit generate {layered,er}``: seeded random problems (:mod:`schedkit.generators`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files
from schedkit.errors import ProblemError, SchedkitError

__all__ = ["add_generate_command", "run_generate"]


def add_generate_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``generate {layered,er}`` to an argparse sub-parser collection.

    The chosen parser's ``handler`` default is :func:`run_generate`.

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
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "er", "--tasks", "5", "--devices", "2"])
    >>> args.kind, args.tasks, args.edge_prob, args.seed
    ('er', 5, 0.3, 0)
    """
    parser = subparsers.add_parser(
        "generate", help="write a random problem (layered or Erdos-Renyi)",
        description="Write a seeded random problem in the schedkit/v1 format.")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--devices", type=int, default=4, help="number of devices (default 4)")
        p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        p.add_argument("--latency", type=float, default=0.0, help="latency of every link (default 0)")
        p.add_argument("--memory-slack", type=float, default=None,
                       help="give tasks memory and devices SLACK * total / devices of capacity")
        p.add_argument("--name", default=None, help="problem name")
        p.add_argument("-o", "--output", default=None, metavar="FILE",
                       help="output file, .json or .yaml/.yml (default: JSON on stdout)")
        p.set_defaults(handler=run_generate, **files((), {"output": PROBLEM_FILES}))

    lay = kinds.add_parser("layered", help="levels of tasks with skip edges (Mayer et al. 2017)")
    lay.add_argument("--levels", type=int, default=10, help="number of levels (default 10)")
    lay.add_argument("--width", type=int, default=10, help="tasks per level (default 10)")
    lay.add_argument("--edge-prob", type=float, default=0.3,
                     help="edge probability between adjacent levels (default 0.3)")
    lay.add_argument("--long-range-prob", type=float, default=0.1,
                     help="probability of a skip edge into each task (default 0.1)")
    common(lay)
    er = kinds.add_parser("er", help="random ordered Erdos-Renyi DAG, per-device durations")
    er.add_argument("--tasks", type=int, default=14, help="number of tasks (default 14)")
    er.add_argument("--edge-prob", type=float, default=0.3, help="edge probability (default 0.3)")
    common(er)
    return parser


def run_generate(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate``: build the problem and write it; return an exit code.

    A bad argument prints one line ``schedkit: error: ...`` and returns 1 without
    writing a file.

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
    >>> import json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "er.json"
    >>> args = argparse.Namespace(kind="er", tasks=4, edge_prob=0.5, devices=2, seed=3,
    ...                           latency=0.0, memory_slack=None, name=None, output=str(out))
    >>> run_generate(args)
    0
    >>> len(json.loads(out.read_text())["tasks"])
    4
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump, erdos_renyi, layered

    try:
        common = dict(devices=args.devices, seed=args.seed, latency=args.latency,
                      memory_slack=args.memory_slack, name=args.name)
        if args.kind == "layered":
            data = layered(args.levels, args.width, args.edge_prob, args.long_range_prob, **common)
        elif args.kind == "er":
            data = erdos_renyi(args.tasks, args.edge_prob, **common)
        else:
            raise ProblemError(f"unknown generator {args.kind!r} (layered or er)")
        text = dump(data, args.output)
        if args.output is None:
            sys.stdout.write(text)
        else:
            write_text_atomic(args.output, text)
    except (SchedkitError, OSError) as exc:
        print(f"schedkit: error: {exc}", file=sys.stderr)
        return 1
    return 0
