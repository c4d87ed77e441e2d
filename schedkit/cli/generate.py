"""``schedkit generate {layered,er,platform,rwnn,pipeline,transformer}``: seeded random problems
(:mod:`schedkit.generators`), devices files for the ONNX importer and the RWNN generator
(:mod:`schedkit.cli.generate_platform`) and She et al.'s DualPipe pipeline instance
(:mod:`schedkit.generators.pipeline`).

A generated RWNN on identical servers, to compare the ``symmetry`` block's orderings::

    schedkit generate platform nodes --nodes 6 --gpus 4 -o nodes.yaml
    schedkit generate rwnn --modules 1 --nodes 10 --platform nodes.yaml -o rwnn24.json
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files, finite_float, infeasibilities, say
from schedkit.cli.generate_platform import add_platform_kind, run_generate_platform
from schedkit.cli.generate_transformer import add_transformer_kind
from schedkit.errors import ProblemError, SchedkitError

__all__ = ["add_generate_command", "run_generate", "add_platform_kind", "run_generate_platform",
           "add_pipeline_kind", "run_generate_pipeline"]


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
        "generate", help="write a problem: random graphs, platforms, pipelines, transformers",
        description="Write a seeded random problem in the schedkit/v1 format.")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--devices", type=int, default=4, help="number of devices (default 4)")
        p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        p.add_argument("--latency", type=finite_float, default=0.0, help="latency of every link (default 0)")
        p.add_argument("--memory-slack", type=finite_float, default=None,
                       help="give tasks memory and devices SLACK * total / devices of capacity")
        p.add_argument("--name", default=None, help="problem name")
        p.add_argument("-o", "--output", default=None, metavar="FILE",
                       help="output file, .json or .yaml/.yml (default: JSON on stdout)")
        p.set_defaults(handler=run_generate, **files((), {"output": PROBLEM_FILES}))

    lay = kinds.add_parser("layered", help="levels of tasks with skip edges (Mayer et al. 2017)")
    lay.add_argument("--levels", type=int, default=10, help="number of levels (default 10)")
    lay.add_argument("--width", type=int, default=10, help="tasks per level (default 10)")
    lay.add_argument("--edge-prob", type=finite_float, default=0.3,
                     help="edge probability between adjacent levels (default 0.3)")
    lay.add_argument("--long-range-prob", type=finite_float, default=0.1,
                     help="probability of a skip edge into each task (default 0.1)")
    lay.add_argument("--types", type=int, default=None,
                     help="devices of TYPES types, durations keyed by type (a large cluster's file)")
    lay.add_argument("--group-size", type=int, default=None,
                     help="with --types: servers of GROUP_SIZE devices of one type, group links "
                          "inside and between servers")
    common(lay)
    er = kinds.add_parser("er", help="random ordered Erdos-Renyi DAG, per-device durations")
    er.add_argument("--tasks", type=int, default=14, help="number of tasks (default 14)")
    er.add_argument("--edge-prob", type=finite_float, default=0.3, help="edge probability (default 0.3)")
    common(er)
    add_platform_kind(kinds)
    add_rwnn_kind(kinds)
    add_pipeline_kind(kinds)
    add_transformer_kind(kinds)
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
    from schedkit.problem import Problem
    from schedkit.generators import dump, erdos_renyi, layered

    try:
        common = dict(devices=args.devices, seed=args.seed, latency=args.latency,
                      memory_slack=args.memory_slack, name=args.name)
        if args.kind == "layered":
            data = layered(args.levels, args.width, args.edge_prob, args.long_range_prob, **common,
                           types=args.types, group_size=args.group_size)
        elif args.kind == "er":
            data = erdos_renyi(args.tasks, args.edge_prob, **common)
        else:
            raise ProblemError(f"unknown generator {args.kind!r} (layered or er)")
        where = args.output or "stdout"
        problem = Problem.from_dict(data)  # schedkit must accept what it writes
        text = dump(data, args.output)
        if args.output is None:
            sys.stdout.write(text)
        else:
            write_text_atomic(args.output, text)
    except (SchedkitError, OSError) as exc:
        say(f"schedkit: error: {exc}", err=True)
        return 1
    for warning in infeasibilities(problem):
        say(f"schedkit: warning: {where}: {warning}", err=True)
    return 0


def add_rwnn_kind(kinds: Any) -> argparse.ArgumentParser:
    """Add ``generate rwnn``: DiviML's randomly wired networks (:mod:`schedkit.generators.rwnn`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "rwnn", "--channels", "2", "--dependency", "wdep"])
    >>> args.handler.__name__, args.modules, args.channels, args.dependency, args.graph
    ('run_generate_rwnn', 10, 2, 'wdep', 'mixed')
    """
    from schedkit.generators.rwnn import DEPENDENCIES, GRAPHS

    p = kinds.add_parser(
        "rwnn", help="a randomly wired network on a CPU and two GPUs (DiviML)",
        description="Write a randomly wired network (DiviML, after Xie et al. 2019): modules of ER, "
                    "WS or BA random graphs joined by 1 to 4 channels, on a CPU and two GPUs.")
    p.add_argument("--modules", type=int, default=10, help="number of modules (default 10)")
    p.add_argument("--nodes", type=int, default=8, help="nodes of each module's graph (default 8)")
    p.add_argument("--channels", type=int, default=1, help="edges between modules, 1 to 4 (default 1)")
    p.add_argument("--dependency", "--dependence", choices=DEPENDENCIES, default="sdep",
                   help="sdep: every output channel depends on every input channel; wdep: on some "
                        "(default sdep)")
    p.add_argument("--graph", choices=GRAPHS, default="mixed",
                   help="module generator: er, ws, ba or mixed (in turn; default)")
    p.add_argument("--edge-prob", type=finite_float, default=0.4,
                   help="ER edge probability (default 0.4; DiviML's ER(0.2): 0.2)")
    p.add_argument("--neighbours", type=int, default=4, help="WS ring neighbours (default 4, as DiviML's WS(4, 0.75))")
    p.add_argument("--rewire", type=finite_float, default=0.3,
                   help="WS rewiring probability (default 0.3; DiviML's WS(4, 0.75): 0.75)")
    p.add_argument("--attach", type=int, default=2, help="BA attachments per new node (default 2; DiviML's BA(5): 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--inputs", type=int, default=None, metavar="L", dest="workload_inputs",
                   help="a workload of L inputs on DiviML's batched platform (an A100, a T4 at 1.26x "
                        "and a CPU at 7.10x, PCIe 4.0 x16; see schedkit.generators.diviml): solve it "
                        "with -f throughput")
    p.add_argument("--batch-sizes", default=None, metavar="B,B,...",
                   help="with --inputs: the batch sizes every device runs (default L/4,L/2,3L/4,L)")
    p.add_argument("--platform", default=None, metavar="DEVICES",
                   help="a devices file (schedkit-platform/v1, time unit ms; 'schedkit generate platform "
                        "[nodes]' writes one) to put the network on instead of a CPU and two GPUs: a "
                        "node's time on its fastest device becomes its time on the platform's fastest "
                        "device, scaled by peak FLOP/s on the others")
    p.add_argument("--name", default=None, help="problem name")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output file, .json or .yaml/.yml (default: JSON on stdout)")
    p.set_defaults(handler=run_generate_rwnn, **files(("platform",), {"output": PROBLEM_FILES}))
    return p


def run_generate_rwnn(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate rwnn``: build the network and write it (on the devices of
    ``--platform``, when given: :meth:`~schedkit.importers.platform.Platform.retarget`).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "rwnn.json"
    >>> args = argparse.Namespace(modules=2, nodes=3, channels=1, dependency="sdep", graph="er",
    ...                           seed=0, name="mini", platform=None, output=str(out))
    >>> run_generate_rwnn(args)
    0
    >>> len(json.loads(out.read_text())["tasks"])
    10
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump, rwnn
    from schedkit.problem import Problem

    data = rwnn(args.modules, args.nodes, args.channels, args.dependency, args.graph, args.seed,
                edge_prob=getattr(args, "edge_prob", 0.4), neighbours=getattr(args, "neighbours", 4),
                rewire=getattr(args, "rewire", 0.3), attach=getattr(args, "attach", 2), name=args.name)
    # (``args.inputs`` names the command's input files)
    inputs, sizes = getattr(args, "workload_inputs", None), getattr(args, "batch_sizes", None)
    if sizes is not None and inputs is None:
        raise ProblemError("--batch-sizes: needs --inputs (the batches split a workload of inputs)")
    if inputs is not None:
        if getattr(args, "platform", None) is not None:
            raise ProblemError("--inputs: DiviML's batched platform replaces --platform; give one of them")
        from schedkit.generators.diviml import diviml_workload

        try:
            batch_sizes = None if sizes is None else [int(b) for b in sizes.split(",")]
        except ValueError:
            raise ProblemError(f"--batch-sizes: expected integers separated by commas, got {sizes!r}") from None
        data = diviml_workload(data, inputs, batch_sizes)
        if args.name:
            data["name"] = args.name
    if getattr(args, "platform", None) is not None:
        from schedkit.importers.platform import load_platform

        platform = load_platform(args.platform)
        if platform.time_unit != "ms":  # the network's times are drawn in milliseconds
            raise ProblemError(f"{args.platform}: an rwnn counts time in ms, the devices file in "
                               f"{platform.time_unit} (generate it with --time-unit ms)")
        data = platform.retarget(data)
    Problem.from_dict(data)  # schedkit must accept what it writes
    text = dump(data, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(args.output, text)
    return 0


def add_pipeline_kind(kinds: Any) -> argparse.ArgumentParser:
    """Add ``generate pipeline``: She et al.'s DualPipe instance (:mod:`schedkit.generators.pipeline`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "pipeline", "--stages", "4", "--microbatches", "8"])
    >>> args.handler.__name__, args.stages, args.microbatches, args.weight_share, args.memory
    ('run_generate_pipeline', 4, 8, 0.5, None)
    """
    p = kinds.add_parser(
        "pipeline", help="a training pipeline of PP stages: She et al.'s DualPipe experiment",
        description="Write She et al.'s DualPipe instance: PP stages on PP devices gpu0..gpu{PP-1}, "
                    "M micro-batches (half entering at each end), per stage and micro-batch a "
                    "forward F, an input backward I and a weight backward W, each pinned to its "
                    "device, with weights and activation deltas for a memory_timeline and "
                    "DualPipe's memory bound per device (2 stages of weights + PP+1 activations).")
    p.add_argument("--stages", type=int, required=True, help="PP: stages and devices (even)")
    p.add_argument("--microbatches", type=int, required=True, help="M: micro-batches in all (even)")
    for flag, what in (("--forward", "Tf, forward"), ("--input-backward", "Ti, backward for the input"),
                       ("--weight-backward", "Tw, backward for the weights")):
        p.add_argument(flag, type=finite_float, default=1.0, help=f"duration {what} (default 1)")
    p.add_argument("--weights", type=finite_float, default=1.0,
                   help="memory of one stage's parameters; a device holds two (default 1)")
    p.add_argument("--activation", type=finite_float, default=1.0,
                   help="activation memory a forward takes at its start (default 1)")
    p.add_argument("--weight-share", type=finite_float, default=0.5,
                   help="share of the activation W releases at its end; I releases the rest (default 0.5)")
    p.add_argument("--transfer", type=finite_float, default=0.0,
                   help="time of every transfer between stages (default 0: none)")
    p.add_argument("--memory", type=finite_float, default=None,
                   help="memory of every device (default DualPipe's 2 weights + (PP+1) activations)")
    p.add_argument("--one-way", dest="two_way", action="store_false",
                   help="every micro-batch enters at gpu0, stage s runs on gpu{s} only: the one chain "
                        "of stages torch.distributed.pipelining runs (see 'schedkit export-torch')")
    p.add_argument("--name", default=None, help="problem name (default dualpipe-ppPP-mM, oneway-ppPP-mM)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output file, .json or .yaml/.yml (default: JSON on stdout)")
    p.add_argument("--dualpipe", default=None, metavar="FILE",
                   help="also write DualPipe's own schedule of the instance (needs M >= 2 PP)")
    p.set_defaults(handler=run_generate_pipeline,
                   **files((), {"output": PROBLEM_FILES, "dualpipe": PROBLEM_FILES}))
    return p


def run_generate_pipeline(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate pipeline``: write the problem (and DualPipe's schedule).

    Both are built and checked before either file is written, so a bad argument writes
    nothing; the error propagates as a :class:`~schedkit.errors.SchedkitError`, which
    ``schedkit`` prints as one line.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "pp.json"
    >>> args = argparse.Namespace(stages=2, microbatches=4, forward=1.0, input_backward=1.0,
    ...                           weight_backward=1.0, weights=1.0, activation=1.0, weight_share=0.5,
    ...                           transfer=0.0, memory=None, name=None, output=str(out), dualpipe=None)
    >>> run_generate_pipeline(args)
    0
    >>> len(json.loads(out.read_text())["tasks"])
    24
    """
    from pathlib import Path

    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump
    from schedkit.generators.dualpipe import dualpipe_schedule
    from schedkit.generators.pipeline import pipeline
    from schedkit.milp.formulation import get_formulation
    from schedkit.problem import Problem
    from schedkit.schedule import Schedule

    if args.output is not None and args.dualpipe is not None and \
            Path(args.output).resolve() == Path(args.dualpipe).resolve():
        raise ProblemError(f"{args.dualpipe}: --dualpipe and -o name the same file")
    two_way = getattr(args, "two_way", True)
    if args.dualpipe is not None and not two_way:
        raise ProblemError("--dualpipe: DualPipe's schedule is of the two-way instance (drop --one-way)")
    times = dict(forward=args.forward, input_backward=args.input_backward,
                 weight_backward=args.weight_backward, transfer=args.transfer)
    data = pipeline(args.stages, args.microbatches, weights=args.weights, activation=args.activation,
                    weight_share=args.weight_share, memory=args.memory, name=args.name, two_way=two_way,
                    **times)
    problem = Problem.from_dict(data)  # schedkit must accept what it writes
    schedule, broken = None, []
    if args.dualpipe is not None:
        schedule = Schedule.model_validate(dualpipe_schedule(args.stages, args.microbatches,
                                                             name=data["name"], **times))
        schedule.validate(problem)  # DualPipe's schedule is a valid schedule of the instance
        # Judged by She et al.'s formulation too: a --memory below DualPipe's bound or
        # transfers that share a link at once (--transfer > 0) break it; say so, write it anyway.
        broken = schedule.violations(problem, get_formulation("fdjssp").blocks)
    text = dump(data, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(args.output, text)
    if schedule is not None:
        schedule.write(args.dualpipe)
        if broken:
            say(f"schedkit: warning: {args.dualpipe}: DualPipe's schedule breaks formulation fdjssp "
                f"({len(broken)} violations), e.g. {broken[0]}", err=True)
    return 0
