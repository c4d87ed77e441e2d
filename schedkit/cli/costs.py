"""Measured costs on the command line: ``profile``, ``costs import`` and ``calibrate``.

``schedkit profile MODEL.onnx -o T.json`` measures a model with onnxruntime
(:mod:`schedkit.costs.profile`), ``schedkit costs import PROFILE.json -o T.json`` reads a
profile measured elsewhere (:mod:`schedkit.costs.imports`), ``schedkit calibrate --costs
T.json --platform P.yaml --device cpu -o P2.yaml`` fits a device's roofline to a table
(:mod:`schedkit.costs.calibrate`), and ``schedkit convert onnx MODEL --platform P.yaml --costs
T.json[:DEVICE]`` uses the measured times (:func:`costs_option`).

Examples
--------
>>> parser = argparse.ArgumentParser(prog="schedkit")
>>> add_costs_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["profile", "m.onnx", "--runs", "5", "-o", "t.json"])
>>> args.handler.__name__, args.runs, args.warmup, args.outputs
('run_profile', 5, 3, {'output': ('.json',)})
>>> parser.parse_args(["costs", "import", "p.json", "-o", "t.json"]).handler.__name__
'run_costs_import'
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files, say

__all__ = ["add_costs_commands", "run_profile", "run_costs_import", "run_calibrate", "costs_option"]


def add_costs_commands(subparsers: Any) -> None:
    """Add ``profile``, ``costs import`` and ``calibrate``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    """
    from schedkit.costs.profile import OPTIMIZATION_LEVELS

    p = subparsers.add_parser(
        "profile", help="measure each node of an ONNX model with onnxruntime into a cost table",
        description="Run an ONNX model with onnxruntime on random inputs and write a cost table "
                    "(schedkit-costs/v1, milliseconds): per node its median, mean and p95 time over "
                    "--runs profiled runs after --warmup runs, its output bytes, FLOPs and bytes "
                    "moved; the whole model's latency without the profiler, and the time a run "
                    "spends outside the nodes (measured in pairs of runs; 'convert onnx --costs' "
                    "shares it among the nodes). Node names are "
                    "the task names of 'convert onnx'. Needs the 'profile' extra.")
    p.add_argument("model", metavar="MODEL", help="the ONNX model")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="measured runs [10]")
    p.add_argument("--warmup", type=int, default=3, metavar="W", help="warm-up runs left out [3]")
    p.add_argument("--threads", type=int, default=None, metavar="T",
                   help="onnxruntime's intra-op threads [the machine's CPU count]")
    p.add_argument("--provider", default="CPUExecutionProvider", metavar="P",
                   help="execution provider [CPUExecutionProvider]")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="static shape of a model input or value of a symbolic dimension, as for "
                        "'convert onnx'; repeat for several")
    p.add_argument("--optimization", choices=list(OPTIMIZATION_LEVELS), default="basic",
                   help="onnxruntime's graph optimisation level [basic]: 'extended' also fuses "
                        "activations into convolutions (those nodes get time 0)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    p.add_argument("-o", "--output", required=True, metavar="TABLE.json", help="cost table to write")
    p.set_defaults(handler=run_profile, **files(("model",), {"output": (".json",)}))

    p = subparsers.add_parser("costs", help="cost tables: 'costs import' reads a profile measured elsewhere")
    kinds = p.add_subparsers(dest="costs_command", required=True, metavar="ACTION")
    q = kinds.add_parser(
        "import", help="a profile (onnxruntime's profile JSON, a PyTorch/Chrome trace) as a cost table",
        description="Read a profile measured elsewhere as a cost table (schedkit-costs/v1); its "
                    "format is told by its content. With --model, node names become the task names "
                    "of 'convert onnx' and nodes get their FLOPs and bytes (for 'calibrate').")
    q.add_argument("file", metavar="PROFILE", help="the profile JSON")
    q.add_argument("--model", metavar="MODEL.onnx", help="the ONNX model that was profiled")
    q.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="--shape for that model, as for 'convert onnx'")
    q.add_argument("--warmup", type=int, default=0, metavar="W", help="runs at the start to leave out [0]")
    q.add_argument("--device-type", default=None, metavar="TYPE",
                   help="device type to record (cpu, gpu) [the profile's]")
    q.add_argument("--latency-ms", type=float, default=None, metavar="MS",
                   help="a trace's latency per run measured without the profiler: host times are "
                        "scaled to it [an .ops.json beside the trace, else none]")
    q.add_argument("-o", "--output", required=True, metavar="TABLE.json", help="cost table to write")
    q.set_defaults(handler=run_costs_import, **files(("file", "model"), {"output": (".json",)}))

    p = subparsers.add_parser(
        "calibrate", help="fit a platform device's roofline to a cost table",
        description="Fit a device's peak FLOP/s, memory bandwidth and launch overhead (the roofline "
                    "'convert onnx' uses) to a cost table, by robust least squares on log(predicted / "
                    "measured) per node and on each whole model's sum (scipy); write the platform "
                    "file with only that device changed, and print the errors before and after.")
    p.add_argument("--costs", required=True, action="append", metavar="TABLE.json",
                   help="a measured cost table; repeat to fit the device to several models at once")
    p.add_argument("--platform", required=True, metavar="DEVICES", help="the devices file to calibrate")
    p.add_argument("--device", required=True, metavar="NAME", help="the device of the file to fit")
    p.add_argument("-o", "--output", required=True, metavar="NEW.yaml", help="platform file to write")
    # (--costs is a list: run_calibrate checks the output against those tables itself)
    p.set_defaults(handler=run_calibrate, **files(("platform",), {"output": PROBLEM_FILES}))


def run_profile(args: argparse.Namespace) -> int:
    """Handle ``schedkit profile``: profile, write the table, print one summary line."""
    from schedkit.costs.profile import profile_model
    from schedkit.progress import steps

    began = time.perf_counter()
    show = None if getattr(args, "quiet", False) else steps(f"profile {Path(args.model).name}", "runs")
    table, left_out = profile_model(args.model, runs=args.runs, warmup=args.warmup, threads=args.threads,
                                    provider=args.provider, shape=args.shape,
                                    optimization=getattr(args, "optimization", "basic"), progress=show)
    if left_out:
        say(f"schedkit: note: {len(left_out)} kernel(s) of nodes onnxruntime made itself are left out "
            f"({sum(left_out.values()):.6g} ms per run)", err=True)
    table.write(args.output)
    nodes_sum = sum(n.median for n in table.nodes)
    device = table.device
    say(f"wrote {args.output}: {len(table.nodes)} nodes of {table.model.name}, {table.runs} runs on "
        f"{device.type} ({device.provider}, {device.threads} thread(s)): {table.total.median:.4g} ms per "
        f"run (nodes' sum {nodes_sum:.4g} ms, {table.total.overhead:.3g} ms outside them per paired "
        f"run), profiled in {time.perf_counter() - began:.1f} s")
    return 0


def run_costs_import(args: argparse.Namespace) -> int:
    """Handle ``schedkit costs import``: read the profile, write the table."""
    from schedkit.costs.imports import ImportOptions, import_costs

    options = ImportOptions(model=args.model, shape=args.shape, warmup=args.warmup,
                            device_type=args.device_type, latency_ms=getattr(args, "latency_ms", None))
    if args.warmup < 0:
        from schedkit.errors import ProblemError

        raise ProblemError(f"--warmup {args.warmup}: give 0 or more runs to leave out")
    table, notes = import_costs(args.file, options)
    say(*(f"schedkit: note: {note}" for note in notes), err=True)
    table.write(args.output)
    say(f"wrote {args.output}: {len(table.nodes)} nodes of {table.model.name}, {table.runs} run(s) "
        f"on {table.device.type} (from {table.source})")
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    """Handle ``schedkit calibrate``: fit, print the errors before and after, write the platform."""
    from schedkit.atomic import check_output, write_text_atomic
    from schedkit.costs.calibrate import calibrate_platform
    from schedkit.costs.table import read_cost_table
    from schedkit.generators import dump
    from schedkit.problem.reading import read_data, read_text

    paths = args.costs if isinstance(args.costs, list) else [args.costs]
    check_output(args.output, paths)
    tables = [read_cost_table(path) for path in paths]
    data = read_data(args.platform)
    new, fit = calibrate_platform(data, tables, args.device, sources=[str(p) for p in paths],
                                  platform_source=str(args.platform))
    lines = [f"calibrated {args.device} on {', '.join(t.model.name for t in tables)} "
             f"({fit.nodes} measured nodes):",
             f"  peak_flops        {fit.before.peak_flops:.4g} -> {fit.after.peak_flops:.4g} FLOP/s",
             f"  memory_bandwidth  {fit.before.memory_bandwidth:.4g} -> {fit.after.memory_bandwidth:.4g} bytes/s",
             f"  launch_overhead   {fit.before.launch_overhead:.4g} -> {fit.after.launch_overhead:.4g} s"]
    for table, b, a in zip(tables, fit.errors_before, fit.errors_after):
        unit = table.unit
        lead = f"  {table.model.name}: " if len(tables) > 1 else "  "
        total = f"; {b.total:.4g} {unit} median end to end" if b.total is not None else ""
        lines += [f"{lead}|log(predicted/measured)| per node: median {b.median:.3f} -> {a.median:.3f}, "
                  f"p90 {b.p90:.3f} -> {a.p90:.3f}",
                  f"{lead}whole model: predicted {b.predicted:.4g} -> {a.predicted:.4g} {unit}; measured "
                  f"{b.measured + b.overhead:.4g} {unit} (nodes' sum {b.measured:.4g} + {b.overhead:.3g} "
                  f"outside them){total}"]
    say(*lines)
    text = dump(new, args.output)
    if Path(args.output).suffix.lower() != ".json":
        lead = []
        for line in read_text(args.platform).splitlines():  # the file's own leading comments
            if not line.startswith("#"):
                break
            lead.append(line)
        note = (f"# {args.device} calibrated by 'schedkit calibrate' to "
                f"{', '.join(Path(p).name for p in paths)}\n")
        text = "".join(line + "\n" for line in lead) + note + text
    write_text_atomic(args.output, text)
    say(f"wrote {args.output}")
    return 0


def costs_option(values: list[str] | None) -> list | None:
    """``convert onnx --costs TABLE[:DEVICE]`` values as the importer's measured times.

    ``DEVICE`` names a device or a device type of the platform; without it, the table goes to
    the platform's devices of the table's device type. A path that exists is never split.

    Examples
    --------
    >>> costs_option(None) is None
    True
    >>> costs_option(["missing.json:gpu0"])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: missing.json: no such file
    """
    if not values:
        return None
    from schedkit.costs.table import read_cost_table

    measured = []
    for value in values:
        path, target = value, None
        head, sep, tail = value.rpartition(":")
        if sep and head and tail and "/" not in tail and "\\" not in tail and not Path(value).exists():
            path, target = head, tail
        measured.append(read_cost_table(path).measured(target, source=path))
    return measured
