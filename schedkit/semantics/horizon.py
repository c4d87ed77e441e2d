"""The big-M horizon: the makespan of a schedule that satisfies every block of a formulation.

It belongs to the formulation, not to a solver: the MILP's big-M constants and CP-SAT's
time domains (:mod:`schedkit.cpsat`) both come from here.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.validate import semantic_blocks
>>> p = Problem.load("examples/tiny.yaml")
>>> horizon, schedule = choose_horizon(p, semantic_blocks(p))
>>> horizon == schedule.makespan
True
"""

from __future__ import annotations

import time

from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.timing import TimingRules, list_schedule, to_schedule
from schedkit.problem.graph import upward_rank
from schedkit.schedule.unrolled import Unrolled
from schedkit.validate import canonical, violations


def serial_horizon(problem: Problem) -> float:
    """Every task one after another at its longest duration, every transfer at its longest.

    A left-shifted schedule never waits without cause, so no optimal schedule is longer.
    """
    p = problem
    longest_comm = 0.0
    for i, j, size in p.edges:
        longest_comm += max((p.comm_time(size, u, v) for u in p.allowed[i] for v in p.allowed[j]
                             if p.pair_allowed(size, u, v)), default=0.0)
    if p.inputs > 1:  # at most L batches of a task, each at its longest; each input's transfers
        b = p.batches
        longest = [max(b.time(i, d, s) for d in p.allowed[i] for s in b.sizes[i][d]) for i in range(len(p.tasks))]
        return p.inputs * (sum(longest) + longest_comm)
    return sum(max(t.values()) for t in p.durations) + longest_comm


def choose_horizon(problem: Problem, blocks, warm=None, deadline: float | None = None):
    """``(horizon, schedule)``: the shortest candidate schedule that every block accepts.

    Candidates are ``warm`` (when given), list schedules by upward rank with
    earliest-finish device choice (transfers on channel and port timelines when the blocks
    include ``congestion``; memory levels under ``memory_timeline``) and every task on one
    device, for each device that may run them all (nothing to transfer: under congestion,
    often hard to beat). They are judged shortest first, and only until one is valid: on
    large graphs a schedule costs seconds to assemble and to check. Past ``deadline``
    (:func:`time.perf_counter`), no further candidate is timed. Without a valid candidate,
    the serial horizon is returned with ``None``. The schedule returned is in the canonical
    order of the blocks' symmetry blocks (:func:`~schedkit.validate.canonical`): it starts
    the solvers.
    """
    if problem.inputs > 1:
        return _batched_horizon(problem, blocks, warm)
    candidates = [(warm.makespan, lambda: warm)] if warm is not None else []
    rules = TimingRules.of(blocks, problem)

    def timed(rank, device_of=None) -> None:
        if deadline is not None and candidates and time.perf_counter() > deadline:
            return
        transfers = rules.transfers(problem)
        try:
            device_of, start = list_schedule(problem, rank, device_of=device_of, transfers=transfers,
                                             levels=rules.levels(problem, transfers))
        except ProblemError:  # (its memory cannot hold them, say)
            return
        # (a transfer ends before the task it feeds starts: the last task end is the makespan)
        makespan = max(s + problem.durations[i][device_of[i]] for i, s in enumerate(start))
        candidates.append((makespan, lambda: to_schedule(problem, device_of, start, "horizon", transfers)))

    for rank in (upward_rank(problem, "mean"), upward_rank(problem, "min")):
        timed(rank)
    rank = upward_rank(problem, "min")
    for d in range(len(problem.devices)):
        if all(d in allowed for allowed in problem.allowed):
            timed(rank, [d] * len(problem.tasks))
    for _, make in sorted(candidates, key=lambda c: c[0]):  # (stable: the earlier of equals first)
        schedule = make()
        if not violations(problem, schedule, blocks):
            return schedule.makespan, canonical(problem, schedule, blocks)
    return serial_horizon(problem), None


def _batched_horizon(problem: Problem, blocks, warm=None):
    """:func:`choose_horizon` for a workload of L inputs: the candidates of every equal split of
    the inputs (:meth:`~schedkit.problem.batches.Batches.splits`), folded into batches."""
    candidates = [warm] if warm is not None else []
    for size in problem.batches.splits(problem):
        try:
            unrolled = Unrolled.uniform(problem, size)
        except ProblemError:  # some task runs no batch of this size
            continue
        _, schedule = choose_horizon(unrolled.problem, blocks)
        if schedule is not None:
            candidates.append(unrolled.fold(schedule))
    valid = [s for s in candidates if not violations(problem, s, blocks)]
    if not valid:
        return serial_horizon(problem), None
    best = min(valid, key=lambda s: s.makespan)
    return best.makespan, canonical(problem, best, blocks)
