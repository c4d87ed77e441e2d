"""The validator: structural checks plus the union of the semantic blocks' ``violations``.

Every schedule, from any method, is judged by the same code (:func:`verdict`; ``validate``,
``report``, ``plot`` and ``trace`` show its verdict). Which blocks judge it is derived, not
listed: a formulation's blocks whose ``role`` is ``semantic`` and that apply to the problem;
without a formulation, every registered block that states the problem's own semantics
(``default``) and applies to it. A formulation a schedule records may add checks, never
remove them, unless it is a registered preset (:func:`judged_blocks`). Cuts and symmetry
orderings are never checked: they do not define what a valid schedule is.

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
from typing import NamedTuple

from schedkit.blocks import BLOCKS, Block, block_from_data
from schedkit.errors import FormulationError, InvalidScheduleError, ProblemError, expect
from schedkit.numerics import shorter
from schedkit.problem.bounds import formulation_bound
from schedkit.problem.without_transfers import carries_data
from schedkit.timing.rules import TimingRules
from schedkit.registry import Registry
from schedkit.machine import paused_gc
from schedkit.schedule.bulk_checks import shared_reads
from schedkit.schedule.checks import consistency_violations, expect_schedule, row_violations, status_violations

__all__ = ["PRESETS", "Verdict", "canonical", "consistency_violations", "ignored_data", "judged_blocks",
           "recorded_blocks", "register_preset", "row_violations", "semantic_blocks", "status_violations",
           "symmetry_blocks", "validate", "verdict", "violations"]

#: The blocks of every registered preset formulation (:func:`register_preset`), by name: a
#: schedule that records one of them records an honest choice, even one weaker than the
#: problem's own semantics (``jssp`` ignores memory and communication).
PRESETS = Registry("formulation", group="schedkit.formulations", error=FormulationError)

#: The blocks the devices' load bound relies on, beside those
#: :func:`~schedkit.problem.bounds.formulation_bound` asks for.
_BOUNDED_BY = frozenset({"assignment", "no_overlap"})


def register_preset(name: str, blocks, *, replace: bool = False) -> None:
    """Record the blocks of the preset formulation ``name`` (``register_formulation`` calls it).

    Examples
    --------
    >>> sorted(PRESETS.names())[:3]
    ['fdjssp', 'jssp', 'latency']
    >>> [b.kind for b in PRESETS.get("jssp")][:3]
    ['assignment', 'precedence', 'no_overlap']
    """
    PRESETS.register(name, tuple(blocks), replace=replace)


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

    Each built-in block names the data it interprets (``memory capacities``); when the problem
    gives such data (:meth:`Block.finds_data <schedkit.blocks.Block.finds_data>`) and the
    formulation lacks the block, the data is ignored by its schedules. Conversely, a block the
    formulation adds (``memory_timeline``) that finds none of its data constrains nothing.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.blocks import Assignment, NoOverlap, Precedence
    >>> ignored_data(Problem.load("examples/tiny.yaml"), [Assignment(), Precedence(), NoOverlap()])
    ["the problem gives memory capacities, which the formulation ignores (it has no 'memory' block)"]
    >>> ignored_data(Problem.load("examples/tiny.yaml"), [Precedence(communication=False), NoOverlap()])[-1]
    "the problem gives the data its edges carry, which the formulation ignores (its 'precedence' does not wait for transfers)"
    >>> from schedkit.blocks import MemoryTimeline
    >>> ignored_data(Problem.load("examples/topcuoglu2002.json"), [Assignment(), Precedence(), MemoryTimeline()])
    ["block 'memory_timeline' finds no weights and activations over time in the problem (with a finite capacity where it needs one): it constrains nothing"]
    """
    kinds = {b.kind for b in blocks}.union(*(b.subsumes for b in blocks))
    out = []
    for kind, cls in BLOCKS.items():
        if cls.interprets and cls.role == "semantic" and kind not in kinds and cls().finds_data(problem):
            out.append(f"the problem gives {cls.interprets}, which the formulation ignores "
                       f"(it has no '{kind}' block)")
    rules = TimingRules.of(blocks, problem)
    if rules.ordered_edges and not rules.times_transfers and carries_data(problem):
        out.append("the problem gives the data its edges carry, which the formulation ignores "
                   "(its 'precedence' does not wait for transfers)")
    # The converse, for blocks a user chose: a timeline on a problem without memory data
    # is not an error (the block is simply true), but it is worth one line.
    for block in blocks:
        if not block.default and block.interprets and block.role == "semantic" and not block.applies_to(problem):
            out.append(f"block '{block.kind}' finds no {block.interprets} in the problem (with a finite "
                       f"capacity where it needs one): it constrains nothing")
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


def _covered(block, blocks) -> bool:
    return any(b.covers(block) for b in blocks) or any(block.kind in b.subsumes for b in blocks)


def _semantic(blocks) -> list:
    return [b for b in blocks if b.role == "semantic"]


def _same(one, other) -> bool:
    return all(_covered(b, other) for b in one) and all(_covered(b, one) for b in other)


def judged_blocks(problem, schedule, blocks=None) -> tuple[list, list[str]]:
    """The semantic blocks that judge ``schedule``, and what is wrong with the formulation it records.

    ``blocks`` given (the judge's choice: a method's formulation, ``validate -f``): those. Else
    the schedule's recorded formulation may add checks, never remove them: every default
    semantic block that applies to ``problem`` is checked, and a recorded formulation that
    lacks one (or holds a weaker one: ``precedence`` without communication) is refused naming
    it, unless it *is* a registered preset (:data:`PRESETS`: ``jssp`` is an honest choice). A
    method label ``NAME:PRESET`` (``milp:latency``) never picks the blocks; a recorded
    formulation weaker than the preset it names is refused too.

    Examples
    --------
    >>> from schedkit import Problem, Schedule, TaskRun
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = Schedule(problem="tiny", method="milp:jssp", status="heuristic",
    ...              formulation={"blocks": ["cuts"]},
    ...              tasks=[TaskRun(task="embed", device="gpu0", start=0, end=0.4)])
    >>> judge, claims = judged_blocks(p, s)
    >>> [b.kind for b in judge]
    ['assignment', 'no_overlap', 'memory', 'precedence']
    >>> claims[0]
    "formulation: the method 'milp:jssp' names formulation 'jssp', whose block 'assignment' the recorded formulation lacks"
    """
    if blocks is not None:
        return semantic_blocks(problem, blocks), []
    recorded = recorded_blocks(schedule)
    defaults = semantic_blocks(problem)
    if recorded is None:
        return defaults, []
    judge, out = semantic_blocks(problem, recorded), []
    # As recorded, not as applies to this problem: a preset's blocks are written out in full.
    honest = any(_same(_semantic(recorded), _semantic(preset)) for _, preset in PRESETS.items())
    _, _, label = schedule.method.rpartition(":")
    if label and label in PRESETS:
        for block in semantic_blocks(problem, PRESETS.get(label)):
            if not _covered(block, judge):
                out.append(f"formulation: the method '{schedule.method}' names formulation '{label}', "
                           f"whose block '{block.kind}' the recorded formulation lacks")
                judge = [b for b in judge if not block.covers(b)] + [block]
    if honest:
        return judge, out
    for block in defaults:
        if not _covered(block, judge):
            weaker = " (it holds a weaker one)" if any(b.kind == block.kind for b in judge) else ""
            why = f"the problem gives {block.interprets}" if block.interprets else "every schedule needs it"
            out.append(f"formulation: the recorded formulation lacks block '{block.kind}'{weaker}: {why}, "
                       f"and it is no registered preset")
            judge = [b for b in judge if not block.covers(b)] + [block]
    return judge, out


class Verdict(NamedTuple):
    """The validator's verdict on a schedule (:func:`verdict`)."""

    violations: list[str]
    """Every violation, one line each (empty: valid)."""
    notes: list[str]
    """What the problem gives that the judging blocks ignore (:func:`ignored_data`)."""
    blocks: list
    """The semantic blocks that judged it."""


def verdict(problem, schedule, blocks=None) -> Verdict:
    """The one judgement of ``schedule`` on ``problem``: ``validate``, ``report``, ``plot`` and
    ``trace`` all show it.

    All layers are reported: the status (a claim without rows is never valid), the recorded
    formulation (:func:`judged_blocks`), the rows, then the makespan against the instance's
    lower bound and block by block (a task on a device it cannot run on is named as such even
    when its transfers are wrong too); the blocks are skipped only when rows name unknown or
    missing tasks or devices, which they cannot judge.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> found = verdict(p, solve(p, "milp", formulation="jssp", threads=1))
    >>> found.violations, found.notes[0]
    ([], "the problem gives memory capacities, which the formulation ignores (it has no 'memory' block)")
    """
    from schedkit.problem import Problem

    expect(problem, Problem, "a Problem", ProblemError)
    expect_schedule(schedule)
    # The checks make tables of every row (dicts of 300,000 transfers): nothing cyclic, yet
    # each table would set off full passes of the cycle collector over the whole heap.
    # The checks read the same fields of the transfer rows: once (no row changes meanwhile).
    with paused_gc(), shared_reads():
        return _verdict(problem, schedule, blocks)


def _verdict(problem, schedule, blocks) -> Verdict:
    if blocks is not None:  # (names and data as in a formulation file are blocks too)
        blocks = [b if isinstance(b, Block) else block_from_data(b)
                  for b in expect(blocks, (list, tuple), "a list of blocks", FormulationError)]
    judge, out = judged_blocks(problem, schedule, blocks)
    source = list(blocks if blocks is not None else recorded_blocks(schedule) or ())
    notes = ignored_data(problem, source + [b for b in judge if b not in source])
    out = status_violations(schedule) + out
    if not schedule.tasks:
        return Verdict(out, notes, judge)
    rows = row_violations(problem, schedule)
    if rows:
        return Verdict(out + rows, notes, judge)
    out += consistency_violations(problem, schedule)
    kinds = {b.kind for b in judge}.union(*(b.subsumes for b in judge))
    batched = [r.task for r in schedule.tasks if r.inputs is not None]
    if batched and problem.inputs == 1 and "batching" not in kinds:
        out.append(f"{len(batched)} task row(s) list 'inputs' (first: '{batched[0]}'), but the problem "
                   f"has no workload of several inputs and no 'batching' block judges it")
    if _BOUNDED_BY <= kinds and schedule.makespan is not None and math.isfinite(schedule.makespan):
        bound = formulation_bound(problem, judge)
        if shorter(schedule.makespan, bound):
            out.append(f"makespan {schedule.makespan:.10g} is below the instance's lower bound "
                       f"{bound:.10g}: no schedule is that short")
    for block in judge:
        out.extend(f"{block.kind}: {msg}" for msg in block.violations(problem, schedule))
    return Verdict(out, notes, judge)


def violations(problem, schedule, blocks=None) -> list[str]:
    """Every violation of ``schedule`` on ``problem`` (the :func:`verdict`'s list).

    ``blocks``: a formulation's blocks (see :func:`semantic_blocks`); by default those the
    schedule records, never fewer than the problem's own semantics (:func:`judged_blocks`).
    """
    return verdict(problem, schedule, blocks).violations


def validate(problem, schedule, blocks=None) -> None:
    """Raise :class:`~schedkit.errors.InvalidScheduleError` listing the violations, if any."""
    found = violations(problem, schedule, blocks)
    if found:
        raise InvalidScheduleError(found, context=f"schedule of {schedule.method}")
