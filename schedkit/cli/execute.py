"""``schedkit execute``: run a schedule of an ONNX model on onnxruntime workers and compare.

``schedkit execute MODEL.onnx SCHEDULE.json [--problem P.json] [--map DEVICE=cpu]... [--runs N]
[--warmup W]`` runs each device's tasks of the schedule on a CPU worker of its own
(:func:`schedkit.execute.execute`) and prints the measured latency against the predicted
makespan and, per device, the busy time measured and predicted. The split run's values must
equal a single-session run of the whole model. Nothing is written.

Examples
--------
>>> parser = argparse.ArgumentParser(prog="schedkit")
>>> _ = add_execute_command(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["execute", "m.onnx", "s.json", "--map", "gpu0=cpu", "--runs", "5"])
>>> args.model, args.schedule, args.map, args.runs, args.warmup
('m.onnx', 's.json', ['gpu0=cpu'], 5, 2)
"""

from __future__ import annotations

import argparse
from typing import Any

from schedkit.cli.common import files, say

__all__ = ["add_execute_command", "run_execute"]

#: Units a schedule's times may be read in.
_UNITS = ("s", "ms", "us")


def add_execute_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``execute``.

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
    >>> _ = add_execute_command(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["execute", "m.onnx", "s.json"]).handler.__name__
    'run_execute'
    """
    p = subparsers.add_parser(
        "execute", help="run a schedule of an ONNX model on onnxruntime CPU workers and compare "
                        "measured and predicted times (needs schedkit[profile])",
        description="Run the placed model: each device of the schedule is a worker thread with its "
                    "own onnxruntime sessions and thread budget; its tasks are cut from the model "
                    "into sub-models of consecutive tasks, run in the schedule's order, tensors "
                    "handed between workers. Prints the measured latency (median over --runs after "
                    "--warmup) against the predicted makespan and, per device, the busy time "
                    "measured and predicted; the split run's values must equal a single-session run "
                    "of the whole model. Only CPUs run here: --map DEVICE=cpu runs another device's "
                    "tasks on a CPU worker.")
    p.add_argument("model", help="the ONNX model the schedule's problem was converted from")
    p.add_argument("schedule", help="its schedule (schedkit solve -o)")
    p.add_argument("--problem", default=None, metavar="FILE",
                   help="the problem the schedule solves (schedkit convert onnx -o): checked against "
                        "the schedule, and the source of device kinds and time unit")
    p.add_argument("--map", action="append", default=None, metavar="DEVICE=cpu",
                   help="run a device that is not a CPU on a CPU worker (repeat for several)")
    p.add_argument("--runs", type=int, default=10, help="measured runs [10]")
    p.add_argument("--warmup", type=int, default=2, help="unmeasured runs before them [2]")
    p.add_argument("--threads-per-device", type=int, default=None, metavar="T",
                   help="intra-op threads of each worker [the usable cores split evenly]")
    p.add_argument("--shape", action="append", default=None, metavar="NAME=D1,D2,...",
                   help="shape of a model input with dynamic dimensions, as for convert onnx")
    p.add_argument("--optimization", choices=["basic", "extended", "all"], default="basic",
                   help="onnxruntime's graph optimisation level [basic, the level schedkit profile "
                        "measures durations at]")
    p.add_argument("--time-unit", choices=_UNITS, default=None,
                   help="unit of the schedule's times [the problem's, else ms as convert onnx writes]")
    p.set_defaults(handler=run_execute, **files(("model", "schedule", "problem")))
    return p


def run_execute(args: argparse.Namespace) -> int:
    """Handle ``schedkit execute``: run, then print the comparison.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        0 (a user error raises a one-line :class:`~schedkit.errors.SchedkitError`).
    """
    from schedkit.execute import execute, parse_device_map
    from schedkit.schedule import Schedule

    device_map = parse_device_map(args.map)
    schedule = Schedule.load(args.schedule)
    problem = None
    if args.problem is not None:
        from schedkit.cli.common import load_problem

        problem = load_problem(args.problem)
    result = execute(args.model, schedule, problem=problem, device_map=device_map, runs=args.runs,
                     warmup=args.warmup, threads=args.threads_per_device, shape=args.shape,
                     unit=args.time_unit, optimization=args.optimization, source=str(args.schedule))
    say(*result.lines())
    return 0
