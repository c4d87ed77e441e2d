"""The validator: structural checks plus the union of the semantic blocks' ``violations``.

Every schedule, from any method, is judged by the same code. Which blocks judge it
is derived, not listed: a formulation's blocks whose ``role`` is ``semantic`` and that
apply to the problem; without a formulation, every registered block that states the
problem's own semantics (``default``) and applies to it. Cuts and symmetry orderings
are never checked: they do not define what a valid schedule is.

Examples
--------
>>> from schedkit import Problem, Schedule
>>> from schedkit.schedule import TaskRun
>>> p = Problem.load("examples/tiny.yaml")
>>> [b.kind for b in semantic_blocks(p)]
['assignment', 'memory', 'no_overlap', 'precedence']
>>> bad = Schedule(problem="tiny", method="manual", status="heuristic",
...                tasks=[TaskRun(task="embed", device="gpu0", start=0, end=0.4)])
>>> violations(p, bad)[0]
"task 'attn' is not scheduled"
"""

from __future__ import annotations

from schedkit.blocks import BLOCKS
from schedkit.errors import InvalidScheduleError
from schedkit.numerics import time_tolerance


def semantic_blocks(problem, blocks=None) -> list:
    """The blocks that judge a schedule of ``problem``.

    Parameters
    ----------
    blocks : sequence of Block, optional
        A formulation's blocks: those with role ``semantic`` that apply to ``problem``
        are kept. By default, one default instance of every registered block that
        states the problem's own semantics (``Block.default``) and applies to it.
    """
    if blocks is None:
        blocks = [cls() for _, cls in BLOCKS.items() if cls.default and cls.role == "semantic"]
    return [b for b in blocks if b.role == "semantic" and b.applies_to(problem)]


def structural_violations(problem, schedule) -> list[str]:
    """Checks that do not depend on any block: names, each task once, makespan, transfers."""
    out = []
    if schedule.problem != problem.name:
        out.append(f"schedule is for problem '{schedule.problem}', not '{problem.name}'")
    seen = {}
    for row in schedule.tasks:
        if row.task not in problem.task_index:
            out.append(f"unknown task '{row.task}'")
        elif row.task in seen:
            out.append(f"task '{row.task}' is scheduled twice")
        if row.device not in problem.device_index:
            out.append(f"task '{row.task}' is on unknown device '{row.device}'")
        if row.end < row.start:
            out.append(f"task '{row.task}' ends before it starts")
        if row.start < 0:
            out.append(f"task '{row.task}' starts before time 0")
        seen[row.task] = row
    for name in problem.tasks:
        if name not in seen:
            out.append(f"task '{name}' is not scheduled")
    if out:
        return out
    tol = time_tolerance(schedule.makespan)
    latest = max([r.end for r in schedule.tasks] + [t.end for t in schedule.transfers])
    if schedule.makespan is None or abs(schedule.makespan - latest) > tol:
        out.append(f"makespan {schedule.makespan} differs from the latest end {latest}")
    if schedule.bound is not None and schedule.makespan is not None \
            and schedule.bound > schedule.makespan + tol and schedule.status != "infeasible":
        out.append(f"bound {schedule.bound} exceeds makespan {schedule.makespan}")
    edges = {(problem.tasks[i], problem.tasks[j]): size for i, j, size in problem.edges}
    for t in schedule.transfers:
        key = (t.src, t.dst)
        label = f"transfer {t.src}->{t.dst}"
        if key not in edges:
            out.append(f"{label}: no such edge")
            continue
        src, dst = seen[t.src], seen[t.dst]
        if (t.from_, t.to) != (src.device, dst.device):
            out.append(f"{label}: goes {t.from_}->{t.to} but the tasks sit on {src.device}->{dst.device}")
            continue
        need = problem.comm_time(edges[key], problem.device_index[t.from_], problem.device_index[t.to])
        if t.start < src.end - tol:
            out.append(f"{label}: starts at {t.start:g} before '{t.src}' ends at {src.end:g}")
        if t.end - t.start < need - tol:
            out.append(f"{label}: lasts {t.end - t.start:g}, needs {need:g}")
        if t.end > dst.start + tol:
            out.append(f"{label}: ends at {t.end:g} after '{t.dst}' starts at {dst.start:g}")
    return out


def violations(problem, schedule, blocks=None) -> list[str]:
    """Every violation of ``schedule`` on ``problem`` (structural, then block by block).

    ``blocks``: a formulation's blocks (see :func:`semantic_blocks`); by default the
    problem's own semantics.
    """
    if schedule.status in ("infeasible", "no_solution") and not schedule.tasks:
        return []
    out = structural_violations(problem, schedule)
    if out:
        return out
    for block in semantic_blocks(problem, blocks):
        out.extend(f"{block.kind}: {msg}" for msg in block.violations(problem, schedule))
    return out


def validate(problem, schedule, blocks=None) -> None:
    """Raise :class:`~schedkit.errors.InvalidScheduleError` listing the violations, if any."""
    found = violations(problem, schedule, blocks)
    if found:
        raise InvalidScheduleError(found, context=f"schedule of {schedule.method}")
