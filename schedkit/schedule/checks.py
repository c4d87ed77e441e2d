"""The checks on a schedule that depend on no block: its status against its content, its rows,
and its makespan, bound and transfer rows against the problem (:mod:`schedkit.validate` runs
them before the blocks' checks).

Examples
--------
>>> from schedkit.schedule import Schedule
>>> status_violations(Schedule(problem="p", method="m", status="infeasible"))[0][:52]
"status 'infeasible' claims that no schedule exists: "
"""

from __future__ import annotations

import math

import numpy as np

from schedkit.errors import ScheduleError
from schedkit.numerics import OPTIMAL_GAP, closed, lasts, time_tolerance
from schedkit.schedule.batched import is_batched
from schedkit.schedule.bulk_checks import row_ends, transfers_pass

#: What a status without rows claims, which no check of rows can confirm.
UNVERIFIABLE = {"infeasible": "claims that no schedule exists: a proof the validator cannot check",
                "no_solution": "has no schedule: nothing the validator can check"}


def expect_schedule(value):
    """``value`` when it has a schedule's fields, else a one-line
    :class:`~schedkit.errors.ScheduleError` naming the type given.

    (The check reads fields, not the class: the validator cannot import
    :class:`~schedkit.schedule.Schedule`, whose ``validate()`` imports the validator.)

    Examples
    --------
    >>> expect_schedule("s.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ScheduleError: expected a Schedule, not str
    """
    if not all(hasattr(value, name) for name in ("tasks", "transfers", "status", "makespan", "formulation")):
        raise ScheduleError(f"expected a Schedule, not {type(value).__name__}")
    return value


def status_violations(schedule) -> list[str]:
    """Whether the schedule's numbers are finite and its status agrees with its content.

    ``infeasible`` and ``no_solution`` carry no task rows, and are never valid: the validator
    judges schedules, and such a file makes a claim it cannot check (a heuristic may well
    schedule the problem). Every other status carries rows; ``optimal`` needs a bound within
    :data:`~schedkit.numerics.OPTIMAL_GAP` of the makespan.

    Examples
    --------
    >>> from schedkit.schedule import Schedule, TaskRun
    >>> s = Schedule(problem="p", method="m", status="optimal", bound=40.0,
    ...              tasks=[TaskRun(task="a", device="d", start=0, end=55)])
    >>> status_violations(s)
    ["status 'optimal' but the makespan 55 is 27.27% above the bound 40"]
    """
    out = []
    for name in ("makespan", "objective", "bound", "solve_seconds"):
        value = getattr(schedule, name)
        if value is not None and not math.isfinite(value):
            out.append(f"{name} is {value}, not a finite number")
    status = schedule.status
    if status in UNVERIFIABLE:
        if schedule.tasks:
            out.append(f"status '{status}' but the schedule has {len(schedule.tasks)} task rows")
        else:
            out.append(f"status '{status}' {UNVERIFIABLE[status]}")
        return out
    if not schedule.tasks:
        out.append(f"status '{status}' but the schedule has no task rows")
        return out
    makespan, bound = schedule.makespan, schedule.bound
    if status == "optimal" and makespan is not None and math.isfinite(makespan):
        if bound is None:
            out.append("status 'optimal' but no bound proves it")
        elif math.isfinite(bound) and not closed(makespan, bound, OPTIMAL_GAP):
            out.append(f"status 'optimal' but the makespan {makespan:.10g} is "
                       f"{100 * (makespan - bound) / makespan:.2f}% above the bound {bound:.10g}")
    return out


def row_violations(problem, schedule) -> list[str]:
    """Rows name known tasks and devices, each task once, with finite times, ``0 <= start <= end``.

    Blocks cannot judge a schedule that fails these.
    """
    out = []
    if schedule.problem != problem.name:
        out.append(f"schedule is for problem '{schedule.problem}', not '{problem.name}'")
    seen = {}
    for row in schedule.tasks:
        if row.task not in problem.task_index:
            out.append(f"unknown task '{row.task}'")
        elif row.task in seen and row.inputs is None and seen[row.task].inputs is None:
            out.append(f"task '{row.task}' is scheduled twice")  # (batches of inputs may share a task)
        if row.device not in problem.device_index:
            out.append(f"task '{row.task}' is on unknown device '{row.device}'")
        if not (math.isfinite(row.start) and math.isfinite(row.end)):
            out.append(f"task '{row.task}' runs over [{row.start}, {row.end}), not finite times")
        elif row.end < row.start:
            out.append(f"task '{row.task}' ends before it starts")
        elif row.start < 0:
            out.append(f"task '{row.task}' starts before time 0")
        seen[row.task] = row
    for name in problem.tasks:
        if name not in seen:
            out.append(f"task '{name}' is not scheduled")
    return out


def consistency_violations(problem, schedule) -> list[str]:
    """The makespan is the latest end (the objective and bound agree with it); a transfer row
    belongs to an edge, goes between its tasks' devices, starts after its source ends and
    lasts its transfer time (:func:`~schedkit.numerics.lasts`: relative to that time, not to the
    makespan). (Whether each transfer the semantics need is present and arrives in time is
    the ``precedence`` block's check: it depends on the formulation.)
    """
    out = []
    seen = {r.task: r for r in schedule.tasks}
    tol = time_tolerance(schedule.makespan if schedule.makespan is not None
                         and math.isfinite(schedule.makespan) else 0.0)
    # The transfer rows' ends, read once for the makespan and the rows' checks; their largest
    # is the max of the scalar loop when all are finite (with NaN, max depends on the order).
    ends = row_ends(schedule.transfers)
    moved = [float(ends.max())] if len(ends) and np.isfinite(ends).all() else [t.end for t in schedule.transfers]
    latest = max([r.end for r in schedule.tasks] + moved)
    if schedule.makespan is None or not abs(schedule.makespan - latest) <= tol:
        out.append(f"makespan {schedule.makespan} differs from the latest end {latest:.10g}")
    if schedule.objective is not None and schedule.makespan is not None \
            and not abs(schedule.objective - schedule.makespan) <= tol:
        out.append(f"objective {schedule.objective} differs from the makespan {schedule.makespan}")
    if schedule.bound is not None and schedule.makespan is not None \
            and schedule.bound > schedule.makespan + tol:
        out.append(f"bound {schedule.bound} exceeds makespan {schedule.makespan}")
    if schedule.transfers and is_batched(schedule):
        out.append("a batched schedule carries no transfer rows (under batching a transfer is a delay)")
        return out
    if transfers_pass(problem, schedule, seen, tol, ends):
        return out  # every row passes: the loop below would say nothing
    edges = {(problem.tasks[i], problem.tasks[j]): size for i, j, size in problem.edges}
    listed = set()
    for t in schedule.transfers:
        key = (t.src, t.dst)
        label = f"transfer {t.src}->{t.dst}"
        if key not in edges:
            out.append(f"{label}: no such edge")
            continue
        if key in listed:
            out.append(f"{label}: listed twice")
        listed.add(key)
        src, dst = seen[t.src], seen[t.dst]
        if (t.from_, t.to) != (src.device, dst.device):
            out.append(f"{label}: goes {t.from_}->{t.to} but the tasks sit on {src.device}->{dst.device}")
            continue
        if not (math.isfinite(t.start) and math.isfinite(t.end)):
            out.append(f"{label}: runs over [{t.start}, {t.end}), not finite times")
            continue
        u, v = problem.device_index[t.from_], problem.device_index[t.to]
        if not problem.pair_allowed(edges[key], u, v):
            continue  # the precedence block names the missing link
        need = problem.comm_time(edges[key], u, v)
        if t.start < src.end - tol:
            out.append(f"{label}: starts at {t.start:g} before '{t.src}' ends at {src.end:g}")
        if t.end - t.start < need and not lasts(t.end - t.start, need, t.end):
            out.append(f"{label}: lasts {t.end - t.start:g}, needs {need:g}")
    return out
