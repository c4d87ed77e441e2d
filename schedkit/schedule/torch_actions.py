"""A pipeline schedule as the per-rank action table that ``torch.distributed.pipelining`` runs.

PyTorch's ``_PipelineScheduleRuntime._load_csv(path, format="compute_only")`` reads a CSV file
with one row per rank and one column per step; a cell is an action ``{stage}{kind}{micro-batch}``
(``0F0``: stage 0, forward, micro-batch 0) or empty (idle). The kinds are ``F`` (forward), ``I``
(backward for the input), ``W`` (backward for the weights) and ``B`` (full backward, I and W at
once); stage and micro-batch indices are global. PyTorch then adds the sends and receives
itself (its "lowering"), so transfers of the schedule are not written.

The tasks of the problem must be named as :mod:`schedkit.generators.pipeline` names them,
``{kind}_s{stage}_m{micro-batch}``, and make a full pipeline: stages ``0 .. S-1``, micro-batches
``0 .. M-1``, and for each pair a forward and either ``B`` or both ``I`` and ``W``. PyTorch's
model is one chain: every micro-batch runs stage s on the one rank that holds stage s, the
forward of stage s after that of stage s-1, the backward of stage s after that of stage s+1 (the
last stage's after its forward), W after I. A schedule that breaks this model is refused, naming
the first offending task, and so is a bidirectional plan such as DualPipe's: its two directions
run stage s on two devices, and numbering the second direction's stages S .. 2S-1 instead (a V
shape, each stage on one rank) makes a file that PyTorch's runtime refuses, since its lowering
then chains the two directions and finds no order for the sends and receives.

Ranks are the devices that run the pipeline, in the problem's order of devices. Columns are the
distinct start times of the schedule, so a rank's actions keep their order and, when every
action lasts one time unit, a column is a time step and an empty cell a bubble.

Examples
--------
>>> parse_action_task("I_s2_m5"), parse_action_task("conv1")
(('I', 2, 5), None)
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from schedkit.errors import ProblemError, ScheduleError
from schedkit.numerics import time_tolerance

__all__ = ["KINDS", "TorchActions", "parse_action_task", "torch_actions"]

#: The action kinds of ``torch.distributed.pipelining`` that a task may be (its name's prefix).
KINDS = {"F": "forward", "I": "backward for the input", "W": "backward for the weights",
         "B": "full backward"}
_TASK = re.compile(r"([FIWB])_s(\d+)_m(\d+)")
_SHOWN = 5  # offending names a message lists before it only counts the rest


@dataclass(frozen=True)
class TorchActions:
    """The action table: ``rows[r][k]`` is rank r's action at step k (``""``: idle).

    Attributes
    ----------
    ranks : tuple of str
        The device of each rank.
    stages, microbatches : int
        S and M: PyTorch's ``num_stages`` and ``n_microbatches``.
    rows : tuple of tuple of str
        Per rank, its actions by step, without trailing idle steps.
    """

    ranks: tuple[str, ...]
    stages: int
    microbatches: int
    rows: tuple[tuple[str, ...], ...]

    @property
    def actions(self) -> int:
        """How many actions the table holds (its non-empty cells)."""
        return sum(1 for row in self.rows for cell in row if cell)

    @property
    def steps(self) -> int:
        """How many columns the widest row has."""
        return max((len(row) for row in self.rows), default=0)

    def to_csv(self) -> str:
        """The table as CSV text, the format of PyTorch's ``_load_csv(..., "compute_only")``.

        Examples
        --------
        >>> print(TorchActions(("gpu0", "gpu1"), 2, 1, (("0F0", "", "", "0I0", "0W0"),
        ...                                            ("", "1F0", "1I0", "1W0"))).to_csv(), end="")
        0F0,,,0I0,0W0
        ,1F0,1I0,1W0
        """
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(self.rows)
        return text.getvalue()


def parse_action_task(name: str) -> tuple[str, int, int] | None:
    """``(kind, stage, micro-batch)`` of a pipeline task's name, or None for any other task.

    Examples
    --------
    >>> parse_action_task("W_s0_m12"), parse_action_task("F_s1_m0x")
    (('W', 0, 12), None)
    """
    match = _TASK.fullmatch(name)
    return None if match is None else (match[1], int(match[2]), int(match[3]))


def _listed(names: list[str]) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _parse_problem(problem) -> tuple[dict[tuple[str, int, int], str], int, int]:
    """Each action's task, S and M; a problem that is not a full pipeline is refused."""
    actions, other = {}, []
    for name in problem.tasks:
        key = parse_action_task(name)
        if key is None:
            other.append(name)
        else:
            actions[key] = name
    if other:
        raise ProblemError(f"problem '{problem.name}': {len(other)} task(s) are not pipeline actions "
                           f"(named KIND_sSTAGE_mMICROBATCH, KIND one of {', '.join(KINDS)}): "
                           f"{_listed(other)}")
    if not actions:
        raise ProblemError(f"problem '{problem.name}' has no tasks")
    stages = 1 + max(s for _, s, _ in actions)
    microbatches = 1 + max(m for _, _, m in actions)
    missing = []
    for s in range(stages):
        for m in range(microbatches):
            backward = ("B",) if ("B", s, m) in actions else ("I", "W")
            if ("B", s, m) in actions and ("I", s, m) in actions:
                raise ProblemError(f"problem '{problem.name}': stage {s} of micro-batch {m} has both "
                                   f"a full backward and an input backward")
            missing += [f"{k}_s{s}_m{m}" for k in ("F",) + backward if (k, s, m) not in actions]
    if missing:
        raise ProblemError(f"problem '{problem.name}' is not a full pipeline of {stages} stages and "
                           f"{microbatches} micro-batches (PyTorch runs F, and B or I and W, of every "
                           f"micro-batch at every stage): missing {_listed(missing)}")
    return actions, stages, microbatches


def _runs(problem, schedule) -> dict[str, object]:
    """Each task's one row of the schedule; a schedule of another problem is refused."""
    if schedule.problem != problem.name:
        raise ScheduleError(f"the schedule is for problem '{schedule.problem}', not '{problem.name}'")
    runs: dict[str, object] = {}
    for row in schedule.tasks:
        if row.task not in problem.task_index:
            raise ScheduleError(f"task '{row.task}' of the schedule is not in problem '{problem.name}'")
        if row.task in runs:
            raise ScheduleError(f"task '{row.task}' runs more than once in the schedule")
        runs[row.task] = row
    unplaced = [name for name in problem.tasks if name not in runs]
    if unplaced:
        raise ScheduleError(f"the schedule does not run {len(unplaced)} task(s) of problem "
                            f"'{problem.name}': {_listed(unplaced)}")
    return runs


def _before(kind: str, s: int, m: int, stages: int, actions: dict) -> tuple | None:
    """The action PyTorch's chain puts right before ``(kind, s, m)``, or None."""
    if kind == "F":
        return ("F", s - 1, m) if s > 0 else None
    if kind == "W":
        return ("I", s, m)
    if s == stages - 1:  # the loss: the last stage's backward follows its own forward
        return ("F", s, m)
    return ("B", s + 1, m) if ("B", s + 1, m) in actions else ("I", s + 1, m)


def torch_actions(problem, schedule) -> TorchActions:
    """The action table of a pipeline schedule (see the module documentation).

    Parameters
    ----------
    problem : Problem
        A pipeline: tasks named ``{F,I,W,B}_s{stage}_m{micro-batch}``.
    schedule : Schedule
        A schedule of it, every stage on one device.

    Returns
    -------
    TorchActions
        Ranks, stages, micro-batches and the rows; ``to_csv()`` gives the file.

    Raises
    ------
    ProblemError
        When a task is not a pipeline action or the pipeline is not full, naming them.
    ScheduleError
        For a schedule of another problem, a stage on several devices (DualPipe), or an action
        that starts before the one PyTorch runs before it ends, naming it.

    Examples
    --------
    A one-way pipeline (stage s on ``gpu{s}`` for every micro-batch), scheduled by HEFT:

    >>> from schedkit import Problem, solve
    >>> from schedkit.generators.pipeline import pipeline
    >>> data = pipeline(stages=2, microbatches=2, weights=0)
    >>> for task in data["tasks"]:
    ...     task["durations"] = {"gpu" + task["name"][3]: 1.0}
    >>> problem = Problem.from_dict(data)
    >>> plan = torch_actions(problem, solve(problem, "heft"))
    >>> plan.ranks, plan.stages, plan.microbatches, plan.actions
    (('gpu0', 'gpu1'), 2, 2, 12)
    >>> print(plan.to_csv(), end="")
    0F0,0F1,,,0I0,0I1,0W0,0W1
    ,1F0,1F1,1I0,1I1,1W0,1W1
    """
    actions, stages, microbatches = _parse_problem(problem)
    runs = _runs(problem, schedule)
    rank_of: dict[int, str] = {}
    for s in range(stages):
        devices = sorted({runs[name].device for (_, st, _), name in actions.items() if st == s},
                         key=problem.device_index.__getitem__)
        if len(devices) > 1:
            raise ScheduleError(
                f"stage {s} runs on {len(devices)} devices ({', '.join(devices)}): PyTorch's pipeline "
                f"runtime holds each stage on one rank, so a bidirectional plan (DualPipe's) cannot "
                f"be exported")
        rank_of[s] = devices[0]
    tolerance = time_tolerance(max(row.end for row in runs.values()))
    for key, name in actions.items():
        prior = _before(*key, stages, actions)
        if prior is not None and runs[actions[prior]].end > runs[name].start + tolerance:
            first = runs[actions[prior]]
            raise ScheduleError(
                f"task '{name}' starts at {runs[name].start:g}, before '{first.task}' ends at "
                f"{first.end:g}: PyTorch runs {KINDS[key[0]]} of stage {key[1]} only after it")
    ranks = tuple(d for d in problem.devices if d in rank_of.values())
    # A column per distinct start time (within the tolerance): order kept, bubbles visible.
    order = sorted(actions.items(), key=lambda item: runs[item[1]].start)
    columns, column, opened = {}, -1, None
    for _, name in order:
        start = runs[name].start
        if opened is None or start > opened + tolerance:
            column, opened = column + 1, start
        columns[name] = column
    cells: dict[str, dict[int, str]] = {d: {} for d in ranks}
    for (kind, s, m), name in order:
        row, column = cells[rank_of[s]], columns[name]
        if column in row:  # only where the schedule overlaps tasks on a device
            raise ScheduleError(f"two actions start together on '{rank_of[s]}': {row[column]} and "
                                f"{s}{kind}{m} ('{name}')")
        row[column] = f"{s}{kind}{m}"
    rows = tuple(tuple(cells[d].get(k, "") for k in range(max(cells[d]) + 1)) for d in ranks)
    return TorchActions(ranks, stages, microbatches, rows)
