"""``schedkit generate platform [nodes]``: devices files (:mod:`schedkit.generators.platform`).

A devices file (``schedkit-platform/v1``) gives each device's roofline and the links; it carries
no tasks. ``schedkit convert onnx MODEL --platform FILE`` puts an ONNX model on it and
``schedkit generate rwnn --platform FILE`` a randomly wired network
(:meth:`~schedkit.importers.platform.Platform.retarget`): the way to run a generated RWNN on
``platform nodes``' identical servers and compare the ``symmetry`` block's orderings.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files, finite_float
from schedkit.errors import ProblemError

__all__ = ["PLATFORM_KINDS", "add_platform_kind", "run_generate_platform"]


#: Kinds of ``generate platform KIND`` besides the default (CPUs and GPUs from presets).
PLATFORM_KINDS = ("nodes", "diviml")
#: Flags of ``generate platform`` that only one kind takes: flag -> its kinds (None: the default).
_PLATFORM_FLAGS = {"cpus": (None,), "cpu_model": (None,), "nodes": ("nodes",), "gpus": (None, "nodes"),
                   "network_bandwidth": ("nodes",), "network_latency": ("nodes",), "network": ("nodes",)}


def add_platform_kind(kinds: Any) -> argparse.ArgumentParser:
    """Add ``generate platform [nodes]``: a devices file for ``convert onnx --platform`` and
    ``generate rwnn --platform``.

    Without a kind, CPUs and GPUs from presets (:func:`~schedkit.generators.platform.platform`);
    ``nodes``: identical servers of identical GPUs (:func:`~schedkit.generators.platform.nodes`).

    Examples
    --------
    >>> from schedkit.cli.generate import add_generate_command
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "platform", "--gpus", "4", "-o", "d.yaml"])
    >>> args.handler.__name__, args.platform_kind, args.gpus, args.gpu_model, args.outputs
    ('run_generate_platform', None, 4, 'a100', {'output': ('.json', '.yaml', '.yml')})
    >>> args = parser.parse_args(["generate", "platform", "nodes", "--nodes", "6", "--gpus", "4"])
    >>> args.platform_kind, args.nodes, args.gpus
    ('nodes', 6, 4)
    """
    from schedkit.generators.platform import CPU_MODELS, GPU_LINKS, GPU_MODELS, NETWORK, NETWORKS

    p = kinds.add_parser(
        "platform", help="a devices file (rooflines and links) for 'convert onnx --platform' "
                         "and 'generate rwnn --platform'",
        description="Write a schedkit-platform/v1 devices file. Without KIND: CPUs and GPUs from "
                    "presets, per device its peak FLOP/s, memory bandwidth, launch overhead and "
                    "memory; GPUs on the first CPU's PCIe, joined to each other by --gpu-link. "
                    "KIND 'nodes': --nodes identical servers of --gpus identical GPUs (n0_gpu0, "
                    "n0_gpu1, ...), each server's GPUs one group (interchangeable, for the "
                    "'symmetry' block), joined inside a server by --gpu-link and between servers "
                    "by a slower network (--network-bandwidth, --network-latency): each server "
                    "linked once to a switch, a device that runs no task, with half the latency "
                    "on each hop (a file linear in servers: 128 x 8 GPUs in about 1,300 lines), "
                    "or with --network pairs a link per pair of servers (quadratic; the same "
                    "transfer times, a channel per pair of servers under congestion instead of "
                    "one per server). KIND 'diviml': DiviML's A100, T4 and CPU on PCIe 4.0 x16, at "
                    "the relative speeds of its Table II (batch times: 'generate rwnn --inputs L'). "
                    "A devices file has no tasks: 'schedkit generate rwnn --platform FILE' puts a randomly wired network on it, "
                    "'schedkit convert onnx MODEL --platform FILE' a model.")
    p.add_argument("platform_kind", nargs="?", choices=PLATFORM_KINDS, default=None, metavar="KIND",
                   help="'nodes' for identical servers, 'diviml' for DiviML's A100 + T4 + CPU (default: CPUs "
                        "and GPUs from presets)")
    p.add_argument("--cpus", type=int, default=None, help="number of CPUs (default 1; not with nodes)")
    p.add_argument("--gpus", type=int, default=None,
                   help="number of GPUs (default 2); with nodes, GPUs per server (default 4)")
    p.add_argument("--nodes", type=int, default=None, help="nodes: number of servers (default 6)")
    p.add_argument("--gpu-model", default="a100",
                   help=f"GPU preset, or several in turn: a100,t4 ({', '.join(GPU_MODELS)}; default a100; "
                        f"nodes: one)")
    p.add_argument("--cpu-model", default=None,
                   help=f"CPU preset ({', '.join(CPU_MODELS)}; default server; not with nodes)")
    p.add_argument("--gpu-link", choices=list(GPU_LINKS), default="nvlink",
                   help="how GPUs are joined (default nvlink; none: through the CPU; nodes: "
                        "nvlink or pcie inside a server)")
    p.add_argument("--network-bandwidth", type=finite_float, default=None,
                   help=f"nodes: bandwidth between servers in bytes/s (default {NETWORK[0]:g}, 100 Gb/s)")
    p.add_argument("--network-latency", type=finite_float, default=None,
                   help=f"nodes: latency between servers in seconds (default {NETWORK[1]:g})")
    p.add_argument("--network", choices=NETWORKS, default=None,
                   help="nodes: 'switch' (default): each server linked once to a switch, one channel per "
                        "server; 'pairs': a link and a channel per pair of servers (quadratic in servers)")
    p.add_argument("--time-unit", choices=("ms", "s", "us"), default="ms",
                   help="unit of time of the problems converted with it (default ms)")
    p.add_argument("--name", default=None, help="platform name")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output file, .yaml/.yml or .json (default: YAML on stdout)")
    p.set_defaults(handler=run_generate_platform, **files((), {"output": PROBLEM_FILES}))
    return p


def run_generate_platform(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate platform [nodes]``: write the devices file (YAML with a units header).

    A flag the kind does not take (``--cpus`` with ``nodes``) is a one-line
    :class:`~schedkit.errors.ProblemError`.

    Examples
    --------
    >>> args = argparse.Namespace(platform_kind=None, cpus=1, gpus=1, gpu_model="t4", cpu_model="laptop",
    ...                           gpu_link="none", time_unit="ms", name="mini", output=None)
    >>> run_generate_platform(args)
    # schedkit-platform/v1 devices file ...
    format: schedkit-platform/v1
    name: mini
    time_unit: ms
    devices:
      - {name: cpu, type: cpu, peak_flops: 200000000000.0, memory_bandwidth: 40000000000.0, launch_overhead: 2.0e-06, memory: 16000000000.0}
      - {name: gpu0, type: gpu, peak_flops: 8100000000000.0, memory_bandwidth: 320000000000.0, launch_overhead: 8.0e-06, memory: 16000000000.0}
    links:
      - {src: cpu, dst: gpu0, bandwidth: 16000000000.0, latency: 1.0e-05}
    0
    >>> args = argparse.Namespace(platform_kind="nodes", nodes=2, gpus=1, cpus=2, output=None)
    >>> run_generate_platform(args)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: --cpus does not apply to 'platform nodes'
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump
    from schedkit.generators.platform import NETWORK, NETWORKS, PLATFORM_HEADER, diviml, nodes, platform
    from schedkit.importers.platform import parse_platform

    kind = getattr(args, "platform_kind", None)
    for flag, takers in _PLATFORM_FLAGS.items():
        if getattr(args, flag, None) is not None and kind not in takers:
            where = f"'platform {kind}'" if kind else "'platform' without a kind"
            raise ProblemError(f"--{flag.replace('_', '-')} does not apply to {where}")
    if kind == "diviml":
        data = diviml(time_unit=args.time_unit, name=args.name)
    elif kind == "nodes":
        data = nodes(nodes=6 if args.nodes is None else args.nodes, gpus=4 if args.gpus is None else args.gpus,
                     gpu_model=args.gpu_model, gpu_link=args.gpu_link,
                     network_bandwidth=NETWORK[0] if args.network_bandwidth is None else args.network_bandwidth,
                     network_latency=NETWORK[1] if args.network_latency is None else args.network_latency,
                     time_unit=args.time_unit, name=args.name, network=args.network or NETWORKS[0])
    else:
        data = platform(cpus=1 if args.cpus is None else args.cpus, gpus=2 if args.gpus is None else args.gpus,
                        gpu_model=args.gpu_model, cpu_model=args.cpu_model or "server",
                        gpu_link=args.gpu_link, time_unit=args.time_unit, name=args.name)
    parse_platform(data, source="generated platform")  # schedkit must accept what it writes
    yaml = args.output is None or not str(args.output).lower().endswith(".json")
    text = PLATFORM_HEADER + dump(data, "p.yaml") if yaml else dump(data, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(args.output, text)
    return 0
