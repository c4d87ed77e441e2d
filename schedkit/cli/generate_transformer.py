"""``schedkit generate transformer``: a decoder-only transformer's operator graph on a devices file
(:mod:`schedkit.generators.transformer`).

GPT-3 175B, forward and backward, on one server of eight A100s::

    schedkit generate platform --cpus 1 --gpus 8 -o a100x8.yaml
    schedkit generate transformer --layers 96 --hidden 12288 --heads 96 --seq 2048 --batch 1 \\
        --forward-backward --platform a100x8.yaml -o gpt3.json
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from schedkit.cli.common import PROBLEM_FILES, files, infeasibilities, say

__all__ = ["add_transformer_kind", "run_generate_transformer"]


def add_transformer_kind(kinds: Any) -> argparse.ArgumentParser:
    """Add ``generate transformer`` to the kinds of ``schedkit generate``.

    The sizes have no argparse default and are not argparse-required: a missing one is refused by
    :func:`~schedkit.generators.transformer.transformer` in one line naming the flag.

    Examples
    --------
    >>> from schedkit.cli.generate import add_generate_command
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_generate_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["generate", "transformer", "--layers", "2", "--hidden", "64",
    ...                           "--heads", "4", "--seq", "16", "--batch", "2", "--platform", "p.yaml"])
    >>> args.handler.__name__, args.layers, args.forward_backward, args.micro_batches, args.dtype
    ('run_generate_transformer', 2, False, None, 2)
    """
    from schedkit.generators.transformer_costs import MLPS, NORMS

    p = kinds.add_parser(
        "transformer", help="a decoder-only transformer's operator graph, timed on a devices file",
        description="Write the operator graph of a decoder-only transformer: per layer a norm, QKV, "
                    "scores, softmax, attention-weighted values, output projection, residual add, a "
                    "norm, MLP up, activation, MLP down, residual add (names L{l}.attn.qkv, "
                    "L{l}.mlp.down, ...), FLOPs and bytes from the shapes, durations from the devices "
                    "file's rooflines as 'convert onnx' computes them, parameters as weight_memory "
                    "and outputs as activation_memory.")
    for flag, what in (("--layers", "L: decoder layers"), ("--hidden", "H: model width"),
                       ("--heads", "A: attention heads (must divide H)"),
                       ("--seq", "S: tokens per sequence"),
                       ("--batch", "B: sequences (the global batch, split over --micro-batches)")):
        p.add_argument(flag, type=int, default=None, help=f"{what} (required)")
    p.add_argument("--forward-backward", action="store_true",
                   help="add the backward operators: per weight product an input gradient (.bwd_input) "
                        "and a weight gradient (.bwd_weight), per other operator one .bwd")
    p.add_argument("--micro-batches", type=int, default=None, metavar="M",
                   help="M independent copies of the graph of B/M sequences each, names suffixed _mb{m}")
    p.add_argument("--vocab", type=int, default=None, metavar="V",
                   help="add the token embedding and the LM head over V tokens (default: neither)")
    p.add_argument("--ffn", type=int, default=None, help="MLP inner size (default 4 H)")
    p.add_argument("--kv-heads", type=int, default=None,
                   help="key/value heads, grouped-query attention (must divide A; default A)")
    p.add_argument("--dtype", type=int, default=2, metavar="BYTES", help="bytes per element (default 2)")
    p.add_argument("--norm", choices=list(NORMS), default="layer", help="LayerNorm or RMSNorm (default layer)")
    p.add_argument("--mlp", choices=list(MLPS), default="gelu",
                   help="gelu: two matrices (GPT); swiglu: three, the gate and up product as one "
                        "(LLaMA) (default gelu)")
    p.add_argument("--static-memory", action="store_true",
                   help="also give each task its parameters as static memory (checked by the memory block)")
    p.add_argument("--platform", default=None, metavar="DEVICES",
                   help="the devices file (schedkit-platform/v1) whose rooflines time the operators "
                        "(required; 'schedkit generate platform' writes one)")
    p.add_argument("--name", default=None, help="problem name (default from the sizes)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output file, .json or .yaml/.yml (default: JSON on stdout)")
    p.set_defaults(handler=run_generate_transformer, **files(("platform",), {"output": PROBLEM_FILES}))
    return p


def run_generate_transformer(args: argparse.Namespace) -> int:
    """Handle ``schedkit generate transformer``: build the graph, check it loads, write it.

    A bad argument raises a one-line :class:`~schedkit.errors.ProblemError` before anything is
    written.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> args = argparse.Namespace(layers=1, hidden=32, heads=2, seq=8, batch=1, forward_backward=True,
    ...                           micro_batches=None, vocab=None, ffn=None, kv_heads=None, dtype=2,
    ...                           norm="rms", mlp="gelu", static_memory=False,
    ...                           platform="examples/platform_cpu_2gpu.yaml", name=None, output=str(out))
    >>> run_generate_transformer(args)
    0
    >>> len(json.loads(out.read_text())["tasks"])
    28
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.generators import dump
    from schedkit.generators.transformer import transformer
    from schedkit.problem import Problem

    data = transformer(args.layers, args.hidden, args.heads, args.seq, args.batch, args.platform,
                       forward_backward=args.forward_backward, micro_batches=args.micro_batches,
                       vocab=args.vocab, ffn=args.ffn, kv_heads=args.kv_heads, dtype=args.dtype,
                       norm=args.norm, mlp=args.mlp, static_memory=args.static_memory, name=args.name)
    problem = Problem.from_dict(data)  # schedkit must accept what it writes
    text = dump(data, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(args.output, text)
    for warning in infeasibilities(problem):
        say(f"schedkit: warning: {args.output or 'stdout'}: {warning}", err=True)
    return 0
