"""``auto``'s ``spine`` phase: a lower bound summed over the windows of a spine.

The windows of a spine (:mod:`schedkit.problem.spine`) run one after the other in every
schedule, so the makespan is at least the sum of their own problems' lower bounds. Each
window's part (:func:`window_part`) holds its tasks and a *twin* of the pivot that opens it:
a task of duration 0 on any of the pivot's devices that sends the pivot's data to the
window's tasks, since those transfers too start after the window opens. Its bound is the
part's combinatorial bound (:func:`~schedkit.auto.part_bound.part_floor`), raised by its
placement relaxation (:mod:`schedkit.auto.relaxation`) while time is left, larger windows
first.

Windows alike (:mod:`schedkit.auto.alike`) share one relaxation of their least part.

Where the graph has no chain of cuts, this is the bound that sees transfers. MOIRAI's
Transformer under ``-f moirai`` (1,374 tasks; the encoder's output skips to every decoder
layer, so one module holds 1,358 tasks): the whole problem's bound is 10.0 and the chain's
10.3; windows between 30 pivots hold 1,070 tasks, their floors sum to 12.7 and, with the ten
attention windows' shared relaxation, 17.0 in 10-11 s (2 cores).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.semantics import get_formulation
>>> p = Problem.load("examples/tiny.yaml")
>>> f = get_formulation("moirai")
>>> from schedkit.problem.bounds import formulation_bound
>>> blocks, rules = list(f.blocks), f.timing_rules(p)
>>> round(formulation_bound(p, blocks), 4), round(spine_bound(p, blocks, rules, 10), 4)   # optimum 4.5163
(3.4826, 4.3163)
"""

from __future__ import annotations

import time

from schedkit.auto.alike import alike, least_part
from schedkit.auto.relaxation import MAX_TASKS as RELAX_MAX_TASKS, relaxation_bound
from schedkit.auto.part_bound import part_floor
from schedkit.auto.series import MAX_CHAIN_TASKS
from schedkit.problem import Problem
from schedkit.problem.series_cuts import TWIN, chain_cuts, modules
from schedkit.problem.spine import Spine, spine
from schedkit.reductions.subproblem import edge_row, sub_problem
from schedkit.timing import TimingRules

__all__ = ["spine_bound", "spine_phase", "window_part", "applies", "refusal", "CLASS_SECONDS"]

#: Seconds of placement relaxation for a class of four windows alike or more (a quarter of
#: it per window below four): the least part of MOIRAI's Transformer's ten attention windows
#: (67 tasks) bounds 0.36 after 2-4 s and 0.73 after 8 s (a window alone 0.78 after 4 s at
#: best), against 0.83 on one device; the relaxation's LP spreads each task over devices and
#: sees no transfer, the search must branch.
CLASS_SECONDS = 12.0


def applies(problem: Problem, rules: TimingRules) -> bool:
    """Whether the windows' bounds add up: a task starts after its predecessors end (the
    formulation orders the edges) and one input runs (a workload interleaves inputs)."""
    return problem.inputs == 1 and rules.ordered_edges


def spine_bound(problem: Problem, blocks: list, rules: TimingRules, seconds: float | None,
                found: Spine | None = None) -> float | None:
    """The sum of the windows' bounds of ``problem``'s spine (``found``, else
    :func:`~schedkit.problem.spine.spine`), in about ``seconds`` (``None``: each class of
    windows alike at most :data:`CLASS_SECONDS`); ``None`` where the graph has no spine or the
    bounds do not add up (:func:`applies`).
    """
    began = time.perf_counter()
    found = found if found is not None else spine(problem) if applies(problem, rules) else None
    if found is None:
        return None
    deadline = None if seconds is None else began + seconds
    floors, parts = [], {}
    for t, window in enumerate(found.windows):
        if deadline is not None and time.perf_counter() > deadline:
            return sum(floors)      # (the windows bounded so far: fewer windows, a smaller sum)
        if len(window) == 1:        # (a window of one task lasts at least that task's least duration)
            floors.append(problem.min_duration[window[0]])
            continue
        parts[t] = window_part(problem, found, t)
        floors.append(part_floor(parts[t], blocks))
    # (the classes that hold the most tasks gain the most)
    classes = sorted((c for c in alike(problem, found.windows, found.entries)
                      if 1 < len(found.windows[c[0][0]]) <= RELAX_MAX_TASKS),
                     key=lambda c: -len(c) * len(found.windows[c[0][0]]))
    weights = [len(c) * len(found.windows[c[0][0]]) for c in classes]
    for k, members in enumerate(classes):
        limit = CLASS_SECONDS * min(len(members), 4) / 4
        if deadline is not None:
            limit = min(limit, (deadline - time.perf_counter()) * weights[k] / sum(weights[k:]))
            if limit <= 0:
                break
        if len(members) > 1:
            part = least_part(problem, found.windows, found.entries, members)
            floor = part_floor(part, blocks)
        else:
            part, floor = parts[members[0][0]], floors[members[0][0]]
        bound = relaxation_bound(part, rules, limit, floor)
        for t, _ in members:
            floors[t] = max(floors[t], bound)
    return sum(floors)


def refusal(problem: Problem, rules: TimingRules) -> str | None:
    """Why the ``spine`` phase would bound nothing the other phases do not, in one line, or
    ``None`` when it runs (cheap: ``auto`` asks before it shares out its time).

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.semantics import get_formulation
    >>> p = Problem.load("examples/hetero20.yaml")
    >>> refusal(p, get_formulation("latency").timing_rules(p))
    'chain cuts split the graph into modules of at most 64 tasks, which the series phase bounds by their own solves'
    """
    if not applies(problem, rules):
        return ("the windows' bounds do not add up: a workload of several inputs, "
                "or a formulation that does not order the edges")
    if _chained(problem):
        return (f"chain cuts split the graph into modules of at most {MAX_CHAIN_TASKS} "
                "tasks, which the series phase bounds by their own solves")
    return None


def spine_phase(problem: Problem, state, seconds: float | None, blocks: list, rules: TimingRules) -> None:
    """``auto``'s ``spine`` phase: the spine's bound goes to ``state`` (an
    :class:`~schedkit.auto.state.Incumbent`), which keeps it when it is the best so far."""
    began = time.perf_counter()
    why = refusal(problem, rules)
    if why is not None:
        state.skip("spine", "spine", why)
        return
    state.begin("spine", "spine")
    found = spine(problem)
    if found is None:
        state.end(note="no task has almost every task before or after it")
        return
    left = None if seconds is None else seconds - (time.perf_counter() - began)
    record = state.phases[-1]
    record.bound = spine_bound(problem, blocks, rules, left, found)
    if state.bound_at_least(record.bound, record.label):
        state.emit("better")
    state.end(note=f"{len(found.windows)} windows between {len(found.pivots)} pivots hold "
                   f"{found.covered} of {len(problem.tasks)} tasks")


def _chained(problem: Problem) -> bool:
    """Whether chain cuts split ``problem`` into modules small enough for the series phase."""
    cuts = chain_cuts(problem)
    return bool(cuts) and max(len(g) for g in modules(problem, cuts)[0]) <= MAX_CHAIN_TASKS


def window_part(problem: Problem, found: Spine, t: int) -> Problem:
    """Window ``t``'s part: its tasks and, after the first, the twin of the pivot that opens
    it, which sends that pivot's data to the window's tasks.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> part = window_part(p, spine(p), 1)
    >>> part.tasks, [(part.tasks[i], part.tasks[j]) for i, j, _ in part.edges][:2]
    (['attn', 'mlp', 'norm', 'embed~twin'], [('attn', 'norm'), ('mlp', 'norm')])
    """
    tasks, entry = found.windows[t], found.entries[t]
    name = f"{problem.name}/window{t + 1}"
    if entry is None:
        return sub_problem(problem, tasks, name)
    inside = set(tasks)
    twin = problem.tasks[entry] + TWIN
    stand_in = [{"name": twin, "durations": {problem.devices[d]: 0.0 for d in problem.allowed[entry]}}]
    data = [edge_row(problem, twin, problem.tasks[j], size) for j, size in problem.succs[entry] if j in inside]
    return sub_problem(problem, tasks, name, extra_tasks=stand_in, extra_edges=data)
