"""``schedkit decompose``: write the coarse problem, or the parts, a decomposition makes.

``schedkit decompose P --method merge --nodes 40 -o coarse.json`` applies a registered
decomposition and writes what an inner method would solve: the coarse problem of a
coarsening (``merge``, ``fusion``), the parts of a split (``bridge_dp``: one problem per
module and device pair; ``kedge``: one per module). One output is written to ``-o``;
several to ``STEM-1.SUFFIX``, ``STEM-2.SUFFIX``... beside it. Every output is checked
before any work. Without ``-o`` a line per part is printed and nothing is written.

The decomposition's own options are flags generated from its ``Options`` model, as for
``schedkit solve``.

Examples
--------
>>> from schedkit.cli.main import main
>>> main(["decompose", "examples/tiny.yaml", "--method", "merge", "--nodes", "3"])
tiny/merged3: 3 tasks, 2 edges (merge of tiny: 6 tasks)
0
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files, load_problem, say
from schedkit.errors import SchedkitError

__all__ = ["add_decompose_command", "decompose_flags", "run_decompose", "output_paths"]


def decompose_flags(helps: bool = True) -> list:
    """The flags of every registered decomposition's own options (see :func:`~schedkit.cli.flags.solve_flags`)."""
    from schedkit.cli.flags import solve_flags
    from schedkit.reductions import DECOMPOSITIONS

    return solve_flags([(name, cls) for name, cls in DECOMPOSITIONS.items()], helps=helps)


def add_decompose_command(subparsers: Any, flags: bool = True, helps: bool = True) -> argparse.ArgumentParser:
    """Add ``decompose`` with a flag per option of every registered decomposition.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    flags : bool
        Generate the decomposition flags (another command's line does not need them).
    helps : bool
        Write their help texts.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_decompose_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["decompose", "p.yaml", "-m", "merge", "--nodes", "40"])
    >>> args.method, args.nodes, args.k
    ('merge', 40, None)
    """
    generated = decompose_flags(helps=helps) if flags else []
    p = subparsers.add_parser(
        "decompose", help="write the coarse problem or the parts of a decomposition",
        description="Apply a decomposition and write the problem(s) an inner method would solve: "
                    "the coarse problem of merge or fusion, the parts of bridge_dp or kedge. "
                    "Several parts go to STEM-1.SUFFIX, STEM-2.SUFFIX... beside the -o path.")
    p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
    p.add_argument("--method", "-m", required=True, help="a registered decomposition (merge, fusion, "
                                                         "bridge_dp, kedge)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the problem here (.json, .yaml or .yml); several get -1, -2... suffixes")
    group = p.add_argument_group("decomposition options")
    for flag in generated:
        flag.add_to(group)
    p.set_defaults(handler=run_decompose, decompose_flags=generated,
                   **files(("problem",), {"output": PROBLEM_FILES}))
    return p


def output_paths(output: str, count: int) -> list[Path]:
    """Where ``count`` problems go for ``-o output``: the path itself for one, else
    ``STEM-k.SUFFIX`` beside it.

    Examples
    --------
    >>> [str(p) for p in output_paths("out/parts.json", 2)]
    ['out/parts-1.json', 'out/parts-2.json']
    """
    path = Path(output)
    if count == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{k}{path.suffix}") for k in range(1, count + 1)]


def run_decompose(args: argparse.Namespace) -> int:
    """Handle ``schedkit decompose``: apply, then print or write the problems.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        0 (a user error raises a one-line :class:`~schedkit.errors.SchedkitError`).
    """
    from schedkit.atomic import check_output, write_text_atomic
    from schedkit.reductions import DECOMPOSITIONS, Reduction
    from schedkit.reductions.subproblem import spec_data
    from schedkit.generators import dump

    cls = DECOMPOSITIONS.get(args.method)
    fields = cls.Options.model_fields
    options = {}
    for flag in args.decompose_flags:
        value = getattr(args, flag.name, None)
        if value is None:
            continue
        if flag.name not in fields:
            raise SchedkitError(f"decomposition '{args.method}' does not take {flag.long}")
        options[flag.name] = value
    problem = load_problem(args.problem)
    step = cls(**options)
    why = step.refusal(problem)
    if why is not None:
        raise SchedkitError(f"decomposition '{args.method}' does not accept problem '{problem.name}': {why}")
    if isinstance(step, Reduction):
        problems = [step.apply(problem)[0]]
    else:
        problems = step.preview(problem)
    paths = output_paths(args.output, len(problems)) if args.output else [None] * len(problems)
    for path in paths:
        if path is not None:
            check_output(path, [args.problem], PROBLEM_FILES)
    for part, path in zip(problems, paths):
        line = (f"{part.name}: {len(part.tasks)} tasks, {len(part.edges)} edges "
                f"({args.method} of {problem.name}: {len(problem.tasks)} tasks)")
        if path is not None:
            write_text_atomic(path, dump(spec_data(part), path))
            line += f" -> {path}"
        say(line)
    return 0
