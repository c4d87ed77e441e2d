"""Commands that read and write files: ``validate``, ``load-solution``, ``convert`` (and ``export``,
in :mod:`schedkit.cli.export`)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from schedkit.cli.common import (EXIT_INVALID, PROBLEM_FILES, SCHEDULE_FILES, add_formulation, files,
                                  finite_float, load_problem, say)
from schedkit.cli.export import add_export_command

__all__ = ["add_file_commands", "add_convert_command", "run_validate", "run_load_solution", "run_convert",
           "write_problem_data"]


def add_file_commands(subparsers: Any) -> None:
    """Add ``validate``, ``export`` and ``load-solution``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> add_file_commands(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["export", "p.yaml", "-o", "m.lp"]).handler.__name__
    'run_export'
    """
    p = subparsers.add_parser(
        "validate", help="check a schedule against its problem",
        description="Check a schedule against its problem, by the formulation the schedule records "
                    "(the one it was solved with; it may add checks to the problem's own semantics, "
                    "never remove them unless it is a registered preset), or by -f. A schedule "
                    "without rows (infeasible, no_solution) is a claim the validator cannot check.")
    p.add_argument("problem")
    p.add_argument("schedule")
    p.add_argument("--formulation", "-f", default=None,
                   help="judge by this formulation instead of the one the schedule records")
    p.set_defaults(handler=run_validate, **files(("problem", "schedule", "formulation")))

    add_export_command(subparsers)

    p = subparsers.add_parser("load-solution", help="turn an external solver's solution into a schedule")
    p.add_argument("problem")
    p.add_argument("solution", help="solution file of a model written by 'schedkit export'")
    add_formulation(p)
    p.add_argument("--bound", type=finite_float, default=None,
                   help="the solver's proven lower bound (from its log), for files that state none "
                        "(HiGHS's state theirs, Objective_bound): with it the schedule may be called "
                        "optimal, and the gap is the real one")
    p.add_argument("-o", "--output", help="write the schedule (JSON or YAML) here")
    p.set_defaults(handler=run_load_solution,
                   **files(("problem", "solution", "formulation"), {"output": SCHEDULE_FILES}))


def add_convert_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``convert KIND FILE``; the kinds and their help come from the importer registry.

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
    >>> convert = add_convert_command(parser.add_subparsers(dest="command"))
    >>> print(convert.epilog)
    importers:
      jssp         Standard job-shop text (OR-Library, JSPLIB): one task per
                   operation, on its machine. (.txt, .jss)
      moirai       MOIRAI placement table: task times per device, flow times per
                   channel, memory. (.xls; needs schedkit[moirai])
      msr          MSR dnn-partitioning JSON graph: CPU and accelerator latencies,
                   memory, colour classes. (.json)
      onnx         ONNX model: one task per operator (constants folded), durations
                   from a device roofline. (.onnx; needs schedkit[onnx])
    >>> convert.parse_args(["onnx", "m.onnx", "--platform", "d.yaml", "--shape", "x=1,3",
    ...                     "-o", "p.json"]).shape
    ['x=1,3']
    """
    from schedkit.importers import IMPORTERS
    from schedkit.registry import doc_line

    importers = IMPORTERS.items()
    lines = []
    for name, cls in importers:
        notes = ", ".join(cls.suffixes)
        if cls.extra:
            notes += ("; " if notes else "") + f"needs schedkit[{cls.extra}]"
        text = f"{name:12} {doc_line(cls)}" + (f" ({notes})" if notes else "")
        lines.append(textwrap.fill(text, 79, initial_indent="  ", subsequent_indent=" " * 15))
    p = subparsers.add_parser(
        "convert", help="convert another format into a schedkit/v1 problem",
        description=textwrap.fill("Convert another format into a schedkit/v1 problem. The converted "
                                  "problem is validated before it is written.", 79),
        epilog="importers:\n" + "\n".join(lines), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", metavar="KIND", choices=[name for name, _ in importers],
                   help="source format, an importer listed below")
    p.add_argument("file", metavar="FILE", help="the file to convert")
    p.add_argument("-o", "--output", required=True, help="problem file to write (.json or .yaml)")
    onnx = p.add_argument_group("onnx options")
    onnx.add_argument("--platform", metavar="DEVICES",
                      help="devices file (schedkit-platform/v1) with each device's roofline; "
                           "'schedkit generate platform' writes one")
    onnx.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                      help="static shape of a model input (data=1,3,224,224) or value of a symbolic "
                           "dimension (batch=1); repeat for several")
    onnx.add_argument("--static-memory", action="store_true", default=None,
                      help="also give each task its weights as static memory (checked by the "
                           "latency formulation's memory block)")
    onnx.add_argument("--costs", action="append", metavar="TABLE[:DEVICE]",
                      help="measured times (a cost table from 'schedkit profile' or 'costs import') "
                           "for the platform's devices of the table's device type, or of DEVICE (a "
                           "device or device type); the roofline elsewhere; repeat for several")
    msr = p.add_argument_group("msr options")
    msr.add_argument("--cpus", type=int, metavar="N", help="number of CPUs [the file's maxCPUs]")
    msr.add_argument("--accelerators", type=int, metavar="N",
                     help="number of accelerators [the file's maxFPGAs]")
    msr.add_argument("--forward-only", action="store_true", default=None,
                     help="leave out the backward nodes")
    p.set_defaults(handler=run_convert, **files(("file", "platform"), {"output": PROBLEM_FILES}))
    return p


def run_validate(args: argparse.Namespace) -> int:
    """Handle ``schedkit validate``: 0 when valid, 3 with one ``violation:`` line per violation.

    The verdict is :func:`schedkit.validate.verdict`'s, as in ``report``, ``plot`` and ``trace``;
    what the problem gives and the judging blocks ignore is said once on stderr
    (``schedkit: note: ...``), as ``solve`` says it.

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
    >>> from schedkit import Problem, solve
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> solve(Problem.load("examples/tiny.yaml"), "heft").write(out)
    >>> run_validate(argparse.Namespace(problem="examples/tiny.yaml", schedule=str(out)))
    valid: heft on tiny: status=heuristic makespan=4.51625 bound=3.482608696 gap=22.89% time=...
    0
    """
    from schedkit.schedule import Schedule
    from schedkit.validate import verdict

    problem = load_problem(args.problem)
    schedule = Schedule.load(args.schedule)
    blocks = None
    if getattr(args, "formulation", None):
        from schedkit.milp.formulation import get_formulation

        blocks = list(get_formulation(args.formulation).blocks)
    found, notes, _ = verdict(problem, schedule, blocks)
    say(*(f"schedkit: note: {note}" for note in notes), err=True)
    if found:
        say(*(f"violation: {message}" for message in found), f"invalid: {len(found)} violation(s)")
        return EXIT_INVALID
    say(f"valid: {schedule.summary(problem.spec.time_unit)}")
    return 0


def _milp(formulation: str | None):
    from schedkit.milp import Milp

    return Milp(formulation=formulation)


def run_load_solution(args: argparse.Namespace) -> int:
    """Handle ``schedkit load-solution``: an external solver's solution file as a schedule.

    The model is rebuilt from the same problem and formulation as ``export`` to map the
    column names back; the schedule is validated.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status.
    """
    from schedkit.milp.export import load_solution

    problem = load_problem(args.problem)
    milp = _milp(args.formulation)
    built = milp.build(problem)
    schedule = load_solution(built, args.solution, method=f"external:{milp.formulation.name}",
                             bound=getattr(args, "bound", None))
    say(schedule.summary(problem.spec.time_unit))
    if args.output:
        schedule.write(args.output)
    return 0


def run_convert(args: argparse.Namespace) -> int:
    """Handle ``schedkit convert``: read with the importer, validate, write the problem.

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
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "toy.txt").write_text("2 2\\n0 3 1 2\\n1 4 0 1\\n")
    >>> run_convert(argparse.Namespace(kind="jssp", file=str(folder / "toy.txt"),
    ...                                output=str(folder / "toy.json")))
    wrote .../toy.json: 4 tasks on 2 devices
    0

    An importer's options are flags; a flag the importer does not take is an error, and
    what the importer had to guess is a ``schedkit: warning:`` line on stderr.
    """
    import inspect
    import warnings

    from schedkit.errors import SchedkitError
    from schedkit.importers import IMPORTERS, convert

    takes = inspect.signature(IMPORTERS.get(args.kind).read).parameters
    options = {}
    for name in _CONVERT_OPTIONS:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name not in takes:
            raise SchedkitError(f"convert {args.kind} does not take --{name.replace('_', '-')}")
        if name == "costs":  # tables as the importer's plain data (importers never read them)
            from schedkit.cli.costs import costs_option

            value = costs_option(value)
        options[name] = value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = convert(args.kind, args.file, **options)
    say(*(f"schedkit: warning: {warning.message}" for warning in caught), err=True)
    write_problem_data(data, args.output)
    measured = ", ".join(f"{count} on {device}" for device, count in (data.get("measured") or {}).items())
    say(f"wrote {args.output}: {len(data['tasks'])} tasks on {len(data['devices'])} devices"
        + (f" (measured durations: {measured})" if measured else ""))
    return 0


#: The importer options ``convert`` has a flag for (argparse destinations).
_CONVERT_OPTIONS = ("platform", "shape", "static_memory", "costs", "cpus", "accelerators", "forward_only")


def write_problem_data(data: dict, path: str | Path) -> None:
    """Write problem data as JSON or YAML (by suffix), atomically.

    The text is :func:`schedkit.generators.dump`'s: YAML with one device, link, task or
    edge per line.

    Parameters
    ----------
    data : dict
        ``schedkit/v1`` problem data.
    path : str or Path
        The file to write: ``.json``, ``.yaml`` or ``.yml``.

    Raises
    ------
    ProblemError
        When the suffix is neither ``.json``, ``.yaml`` nor ``.yml`` (nothing is written).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "p.yaml"
    >>> write_problem_data({"name": "p", "devices": [{"name": "d"}]}, out)
    >>> print(out.read_text(), end="")
    name: p
    devices:
      - {name: d}
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump

    if Path(path).suffix.lower() not in (".json", ".yaml", ".yml"):
        from schedkit.errors import ProblemError

        raise ProblemError(f"{path}: write problems as .json, .yaml or .yml")
    write_text_atomic(path, dump(data, path))
