"""The ``schedkit`` command line.

Every error a user can cause prints one line, ``schedkit: error: ...``, and exits
with status 1 (2 for a malformed command line), without a traceback and without
writing any output file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schedkit.errors import SchedkitError

EXIT_ERROR = 1
EXIT_INVALID = 3


def _load_problem(path):
    from schedkit.problem import Problem

    return Problem.load(path)


def _add_formulation(p):
    p.add_argument("--formulation", "-f", default=None,
                   help="preset name (latency, jssp) or a YAML/JSON formulation file [latency]")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedkit",
        description="Map and schedule task graphs on heterogeneous devices as mixed-integer programs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("solve", help="solve a problem and print a summary")
    p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
    p.add_argument("--method", "-m", default="milp", help="a method from 'schedkit methods' [milp]")
    _add_formulation(p)
    p.add_argument("--solver", help="highs (default, embedded) or any Pyomo solver name")
    p.add_argument("--time-limit", type=float, help="seconds; the status tells when it stops without proof")
    p.add_argument("--gap", type=float, help="relative MIP gap at which to stop")
    p.add_argument("--threads", type=int,
                   help="solver threads (default: 2 with 2+ cores; the second proves subset bounds)")
    p.add_argument("--seed", type=int, help="seed of randomised methods")
    p.add_argument("--iterations", type=int, help="iterations of search methods")
    p.add_argument("--warm-start", dest="warm_start", default=None,
                   help="MILP: 'auto' (default), 'none', or a method whose schedule starts the solver")
    p.add_argument("--lns-seconds", dest="lns_seconds", type=float, default=None,
                   help="MILP: seconds of local search improving the start before the exact solve "
                        "(default: 0.15 per task, at most 30 and a third of --time-limit; 0: off)")
    p.add_argument("--verbose", "-v", action="store_true", help="stream the solver log")
    p.add_argument("--show", action="store_true", help="print the schedule, device by device")
    p.add_argument("-o", "--output", help="write the schedule (JSON) here")

    p = sub.add_parser("validate", help="check a schedule against its problem")
    p.add_argument("problem")
    p.add_argument("schedule")

    p = sub.add_parser("export", help="write the MILP as an LP or MPS file for any solver")
    p.add_argument("problem")
    _add_formulation(p)
    p.add_argument("-o", "--output", required=True, help="model.lp or model.mps")

    p = sub.add_parser("load-solution", help="turn an external solver's solution into a schedule")
    p.add_argument("problem")
    p.add_argument("solution", help="solution file of a model written by 'schedkit export'")
    _add_formulation(p)
    p.add_argument("-o", "--output", help="write the schedule (JSON) here")

    p = sub.add_parser("describe", help="print a formulation's mathematics")
    p.add_argument("formulation", nargs="?", default="latency")

    sub.add_parser("methods", help="list the registered methods")
    sub.add_parser("blocks", help="list the registered constraint blocks")
    sub.add_parser("formulations", help="list the preset formulations")

    p = sub.add_parser("convert", help="convert another format into a schedkit/v1 problem")
    p.add_argument("kind", choices=["jssp"], help="source format: jssp (standard job-shop)")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, help="problem file to write (.json or .yaml)")

    try:
        from schedkit.generators import add_generate_command
    except ImportError:  # generators are optional at this layer
        add_generate_command = None
    if add_generate_command is not None:
        add_generate_command(sub)
    return parser


# ---------------------------------------------------------------------- commands
def _solve_options(args) -> dict:
    from schedkit.methods import METHODS

    cls = METHODS.get(args.method)
    fields = cls.Options.model_fields
    given = {"formulation": args.formulation, "solver": args.solver, "time_limit": args.time_limit,
             "gap": args.gap, "threads": args.threads, "seed": args.seed,
             "iterations": args.iterations, "warm_start": args.warm_start,
             "lns_seconds": args.lns_seconds}
    options = {}
    for key, value in given.items():
        if value is None:
            continue
        if key not in fields:
            flag = "--" + key.replace("_", "-")
            raise SchedkitError(f"method '{args.method}' does not take {flag}")
        options[key] = value
    if args.verbose and "verbose" in fields:
        options["verbose"] = True
    return options


def cmd_solve(args) -> int:
    from schedkit.methods import solve

    problem = _load_problem(args.problem)
    options = _solve_options(args)
    schedule = solve(problem, args.method, **options)
    print(schedule.summary())
    if args.show:
        print(format_schedule(schedule))
    if args.output:
        schedule.write(args.output)
    return 0 if schedule.tasks else EXIT_ERROR


def format_schedule(schedule) -> str:
    """The schedule as text, one line per task, grouped by device."""
    lines = []
    by_device: dict[str, list] = {}
    for row in schedule.tasks:
        by_device.setdefault(row.device, []).append(row)
    for device in sorted(by_device):
        lines.append(f"{device}:")
        for row in sorted(by_device[device], key=lambda r: r.start):
            lines.append(f"  {row.start:>10.4g} - {row.end:<10.4g} {row.task}")
    return "\n".join(lines)


def cmd_validate(args) -> int:
    from schedkit.schedule import Schedule

    problem = _load_problem(args.problem)
    schedule = Schedule.load(args.schedule)
    found = schedule.violations(problem)
    if found:
        for message in found:
            print(f"violation: {message}")
        print(f"invalid: {len(found)} violation(s)")
        return EXIT_INVALID
    print(f"valid: {schedule.summary()}")
    return 0


def _milp(formulation):
    from schedkit.milp import Milp

    return Milp(formulation=formulation)


def cmd_export(args) -> int:
    from schedkit.milp.export import write_model

    problem = _load_problem(args.problem)
    built = _milp(args.formulation).build(problem)
    names = write_model(built, args.output)
    rows = built.linear.num_rows
    print(f"wrote {args.output}: {len(names)} columns, {rows} rows (horizon {built.horizon:g})")
    return 0


def cmd_load_solution(args) -> int:
    from schedkit.milp.export import load_solution

    problem = _load_problem(args.problem)
    milp = _milp(args.formulation)
    built = milp.build(problem)
    schedule = load_solution(built, args.solution, method=f"external:{milp.formulation.name}")
    print(schedule.summary())
    if args.output:
        schedule.write(args.output)
    return 0


def cmd_describe(args) -> int:
    from schedkit.milp.formulation import get_formulation

    print(get_formulation(args.formulation).describe())
    return 0


def cmd_methods(args) -> int:
    from schedkit.methods import list_methods

    for name, summary in list_methods():
        print(f"{name:24} {summary}")
    return 0


def cmd_blocks(args) -> int:
    from schedkit.milp.formulation import list_blocks

    for kind, summary in list_blocks():
        print(f"{kind:16} {summary}")
    return 0


def cmd_formulations(args) -> int:
    from schedkit.milp.formulation import list_formulations

    for name, blocks in list_formulations():
        print(f"{name:12} {blocks}")
    return 0


def cmd_convert(args) -> int:
    from schedkit.importers.jssp import load_jssp
    from schedkit.problem.spec import parse_spec

    data = load_jssp(args.file)
    parse_spec(data, source=args.file)  # the converted problem must be valid
    write_problem_data(data, args.output)
    print(f"wrote {args.output}: {len(data['tasks'])} tasks on {len(data['devices'])} devices")
    return 0


def write_problem_data(data: dict, path) -> None:
    """Write problem data as JSON or YAML (by suffix), atomically."""
    from schedkit.atomic import write_text_atomic

    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False)
    elif suffix == ".json":
        text = json.dumps(data, indent=1) + "\n"
    else:
        raise SchedkitError(f"{path}: write problems as .json, .yaml or .yml")
    write_text_atomic(path, text)


COMMANDS = {
    "solve": cmd_solve, "validate": cmd_validate, "export": cmd_export,
    "load-solution": cmd_load_solution, "describe": cmd_describe, "methods": cmd_methods,
    "blocks": cmd_blocks, "formulations": cmd_formulations, "convert": cmd_convert,
}


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = COMMANDS.get(args.command)
    if handler is None:  # sub-commands added by plug-ins carry their own handler
        handler = getattr(args, "handler", None)
    try:
        return handler(args)
    except SchedkitError as exc:
        print(f"schedkit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # e.g. 'schedkit describe | head': the reader left, nothing to report
        sys.stderr.close()
        return 0
    except OSError as exc:
        target = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"schedkit: error: {target}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("schedkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
