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

import math

from schedkit.blocks import BLOCKS, block_from_data
from schedkit.errors import InvalidScheduleError
from schedkit.numerics import OPTIMAL_GAP, closed, time_tolerance
from schedkit.schedule.batched import is_batched


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


def symmetry_blocks(problem, blocks=None) -> list:
    """The blocks of ``blocks`` that relabel schedules of ``problem`` (role ``symmetry``).

    Asking whether one applies checks the problem against it: a ``symmetry`` block raises a
    one-line :class:`~schedkit.errors.ProblemError` when the devices of a group differ, which
    :meth:`~schedkit.methods.Method.result` thus reports before any work.
    """
    return [b for b in blocks or () if b.role == "symmetry" and b.applies_to(problem)]


def canonical(problem, schedule, blocks=None):
    """``schedule`` relabelled by every symmetry block of ``blocks`` (:meth:`Block.canonicalize
    <schedkit.blocks.Block.canonicalize>`): the one place where a schedule is put into the
    canonical order before it is validated (:meth:`~schedkit.methods.Method.result`) or used as
    a MILP warm start or CP-SAT hint. Without a symmetry block, ``schedule`` itself.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> from schedkit.blocks import Assignment
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> canonical(p, s, [Assignment()]) is s
    True
    """
    if schedule is None:
        return None
    for block in symmetry_blocks(problem, blocks):
        schedule = block.canonicalize(problem, schedule)
    return schedule


def ignored_data(problem, blocks) -> list[str]:
    """What ``problem`` gives that a formulation of ``blocks`` ignores, one line each.

    Each built-in block that states the problem's own semantics names the data it
    interprets (``memory capacities``); when the problem has such data and the formulation
    lacks the block, the data is ignored by its schedules. Conversely, a block the
    formulation adds (``memory_timeline``) that finds none of its data constrains nothing.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.blocks import Assignment, NoOverlap, Precedence
    >>> ignored_data(Problem.load("examples/tiny.yaml"), [Assignment(), Precedence(), NoOverlap()])
    ["the problem gives memory capacities, which the formulation ignores (it has no 'memory' block)"]
    >>> from schedkit.blocks import MemoryTimeline
    >>> ignored_data(Problem.load("examples/topcuoglu2002.json"), [Assignment(), Precedence(), MemoryTimeline()])
    ["block 'memory_timeline' finds no weights and activations over time in the problem (with a finite capacity where it needs one): it constrains nothing"]
    """
    kinds = {b.kind for b in blocks}.union(*(b.subsumes for b in blocks))
    out = []
    for kind, cls in BLOCKS.items():
        if cls.default and cls.interprets and kind not in kinds and cls().applies_to(problem):
            out.append(f"the problem gives {cls.interprets}, which the formulation ignores "
                       f"(it has no '{kind}' block)")
    # The converse, for blocks a user chose: a timeline on a problem without memory data
    # is not an error (the block is simply true), but it is worth one line.
    for block in blocks:
        if not block.default and block.interprets and block.role == "semantic" and not block.applies_to(problem):
            out.append(f"block '{block.kind}' finds no {block.interprets} in the problem (with a finite "
                       f"capacity where it needs one): it constrains nothing")
    return out


def status_violations(schedule) -> list[str]:
    """Whether the schedule's numbers are finite and its status agrees with its content.

    ``infeasible`` and ``no_solution`` carry no task rows; every other status does;
    ``optimal`` needs a bound within :data:`~schedkit.numerics.OPTIMAL_GAP` of the makespan.

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
    if status in ("infeasible", "no_solution"):
        if schedule.tasks:
            out.append(f"status '{status}' but the schedule has {len(schedule.tasks)} task rows")
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


def structural_violations(problem, schedule) -> list[str]:
    """Checks that do not depend on any block: the rows (:func:`row_violations`), then the
    makespan, objective, bound and transfer rows (:func:`consistency_violations`)."""
    return row_violations(problem, schedule) or consistency_violations(problem, schedule)


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
    lasts at least its transfer time. (Whether each transfer the semantics need is present
    and arrives in time is the ``precedence`` block's check: it depends on the formulation.)
    """
    out = []
    seen = {r.task: r for r in schedule.tasks}
    tol = time_tolerance(schedule.makespan if schedule.makespan is not None
                         and math.isfinite(schedule.makespan) else 0.0)
    latest = max([r.end for r in schedule.tasks] + [t.end for t in schedule.transfers])
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
        if t.end - t.start < need - tol:
            out.append(f"{label}: lasts {t.end - t.start:g}, needs {need:g}")
    return out


def recorded_blocks(schedule) -> list | None:
    """The blocks of the formulation a schedule records (``None`` when it records none).

    A block kind that is not registered here is a one-line
    :class:`~schedkit.errors.FormulationError` naming it.
    """
    data = schedule.formulation
    if not data:
        return None
    blocks = data.get("blocks") if isinstance(data, dict) else None
    if not isinstance(blocks, list):
        raise InvalidScheduleError(["its 'formulation' has no list of blocks"])
    return [block_from_data(b) for b in blocks]


def violations(problem, schedule, blocks=None) -> list[str]:
    """Every violation of ``schedule`` on ``problem``: status, structure, then block by block.

    All layers are reported (a task on a device it cannot run on is named as such even when
    its transfers are wrong too); the blocks are skipped only when rows name unknown or
    missing tasks or devices, which they cannot judge. ``blocks``: a formulation's blocks
    (see :func:`semantic_blocks`); by default those the schedule records (the formulation it
    was solved with), else the problem's own semantics.
    """
    if blocks is None:
        blocks = recorded_blocks(schedule)
    out = status_violations(schedule)
    if not schedule.tasks:
        return out
    rows = row_violations(problem, schedule)
    if rows:
        return out + rows
    out += consistency_violations(problem, schedule)
    for block in semantic_blocks(problem, blocks):
        out.extend(f"{block.kind}: {msg}" for msg in block.violations(problem, schedule))
    return out


def validate(problem, schedule, blocks=None) -> None:
    """Raise :class:`~schedkit.errors.InvalidScheduleError` listing the violations, if any."""
    found = violations(problem, schedule, blocks)
    if found:
        raise InvalidScheduleError(found, context=f"schedule of {schedule.method}")
