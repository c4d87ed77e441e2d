"""The validator: structural checks plus the union of the blocks' ``violations``.

Every schedule, from any method, is judged by the same code. Without explicit
blocks, the problem's semantic blocks apply: assignment, placement, precedence
with communication delay, no_overlap and memory.

Examples
--------
>>> from schedkit import Problem, Schedule
>>> from schedkit.schedule import TaskRun
>>> p = Problem.load("examples/tiny.yaml")
>>> bad = Schedule(problem="tiny", method="manual", status="heuristic",
...                tasks=[TaskRun(task="embed", device="gpu0", start=0, end=0.4)])
>>> violations(p, bad)[0]
"task 'attn' is not scheduled"
"""

from __future__ import annotations

from schedkit.errors import InvalidScheduleError

#: Relative tolerance of every numeric check (times are compared to it times the makespan).
RELATIVE_TOLERANCE = 1e-6


def tolerance(schedule) -> float:
    """Absolute time tolerance for ``schedule``."""
    return RELATIVE_TOLERANCE * max(1.0, abs(schedule.makespan or 0.0))


def semantic_blocks():
    """The blocks that state the problem semantics shared by every method."""
    from schedkit.blocks import Assignment, Memory, NoOverlap, Placement, Precedence

    return [Assignment(), Placement(), Precedence(communication=True), NoOverlap(), Memory()]


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
    tol = tolerance(schedule)
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
    """Every violation of ``schedule`` on ``problem`` (structural, then block by block)."""
    if schedule.status in ("infeasible", "no_solution") and not schedule.tasks:
        return []
    out = structural_violations(problem, schedule)
    if out:
        return out
    for block in blocks if blocks is not None else semantic_blocks():
        out.extend(f"{block.kind}: {msg}" for msg in block.violations(problem, schedule))
    return out


def validate(problem, schedule, blocks=None) -> None:
    """Raise :class:`~schedkit.errors.InvalidScheduleError` listing the violations, if any."""
    found = violations(problem, schedule, blocks)
    if found:
        raise InvalidScheduleError(found, context=f"schedule of {schedule.method}")
