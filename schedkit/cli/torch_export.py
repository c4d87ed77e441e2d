"""``schedkit export-torch``: a pipeline schedule as ``torch.distributed.pipelining``'s action CSV.

``export`` writes the MILP for another solver; this command writes a schedule for another
runtime, so it has a command of its own. The table is
:func:`schedkit.schedule.torch_actions.torch_actions`'s; writing it needs no PyTorch.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="schedkit")
>>> add_torch_export_command(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["export-torch", "p.json", "s.json", "-o", "actions.csv"])
>>> args.handler.__name__, args.outputs
('run_torch_export', {'output': ('.csv',)})
"""

from __future__ import annotations

import argparse
from typing import Any

from schedkit.cli.common import files, load_problem, say

__all__ = ["add_torch_export_command", "run_torch_export"]


def add_torch_export_command(subparsers: Any) -> None:
    """Add ``export-torch PROBLEM SCHEDULE -o FILE.csv``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> add_torch_export_command(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["export-torch", "p.json", "s.json", "-o", "a.csv"]).output
    'a.csv'
    """
    p = subparsers.add_parser(
        "export-torch", help="write a pipeline schedule as torch.distributed.pipelining's action CSV",
        description="Write a pipeline schedule (tasks named F_s0_m0, I_s0_m0, W_s0_m0 or B_s0_m0, as "
                    "'schedkit generate pipeline' names them) as the per-rank action table that "
                    "PyTorch's _PipelineScheduleRuntime._load_csv(FILE, format='compute_only') runs: "
                    "a row per rank (the devices that run the pipeline, in the problem's order), a "
                    "column per distinct start time, cells such as 0F0 (stage 0, forward, "
                    "micro-batch 0). Each stage must run on one device: a bidirectional (DualPipe) "
                    "plan is refused.")
    p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
    p.add_argument("schedule", help="a schedule of that problem (schedkit solve -o)")
    p.add_argument("-o", "--output", required=True, help="action table to write (.csv)")
    p.set_defaults(handler=run_torch_export, **files(("problem", "schedule"), {"output": (".csv",)}))


def run_torch_export(args: argparse.Namespace) -> int:
    """Handle ``schedkit export-torch``: the line written says the validator's verdict, as ``trace``'s.

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
    DualPipe's plan of its instance runs each stage on two devices:

    >>> import json, pathlib, tempfile
    >>> from schedkit import Schedule
    >>> from schedkit.generators.dualpipe import dualpipe_schedule
    >>> from schedkit.generators.pipeline import pipeline
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "p.json").write_text(json.dumps(pipeline(2, 4)))
    >>> Schedule.model_validate(dualpipe_schedule(2, 4)).write(folder / "s.json")
    >>> run_torch_export(argparse.Namespace(problem=str(folder / "p.json"),
    ...                  schedule=str(folder / "s.json"), output=str(folder / "a.csv")))
    Traceback (most recent call last):
    ...
    schedkit.errors.ScheduleError: stage 0 runs on 2 devices (gpu0, gpu1): ...
    """
    from schedkit.atomic import write_text_atomic
    from schedkit.report.layout import check_fits
    from schedkit.schedule import Schedule
    from schedkit.schedule.torch_actions import torch_actions
    from schedkit.validate import verdict

    problem = load_problem(args.problem)
    schedule = Schedule.load(args.schedule)
    check_fits(problem, schedule, source=str(args.schedule))
    plan = torch_actions(problem, schedule)
    found = verdict(problem, schedule).violations  # (said, not refused: PyTorch needs only the order)
    write_text_atomic(args.output, plan.to_csv())
    ranks = ", ".join(f"{r}={device}" for r, device in enumerate(plan.ranks))
    say(f"wrote {args.output} ({'valid' if not found else f'invalid: {len(found)} violation(s)'}): "
        f"{plan.actions} actions of {plan.stages} stages and {plan.microbatches} micro-batches in "
        f"{plan.steps} steps on ranks {ranks}; run it with _PipelineScheduleRuntime(stages, "
        f"n_microbatches={plan.microbatches})._load_csv('{args.output}')")
    return 0
