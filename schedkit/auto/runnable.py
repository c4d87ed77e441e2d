"""Which phases of ``auto``'s plan can run on a problem, asked before the time is shared out.

Each phase gets its weight's share of the time left (:func:`~schedkit.auto.phases.share`),
counted over the phases still to run: a phase that cannot run at all, left in the plan until
its turn, holds back its share from every phase before it. :func:`runnable` drops such phases
first, each recorded as skipped with its reason: an exact phase whose model cannot fit even
the whole time left, a decomposition that does not support a block of the formulation
(:func:`decomposition_refusal`; MOIRAI's ``channels``), a ``spine`` where the series search
bounds every module (:func:`~schedkit.auto.spine_bound.refusal`). On MOIRAI's Inception-v4
the series search then gets 45-46 s of 60 instead of 38.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.semantics import get_formulation
>>> p = Problem.load("examples/hetero20.yaml")
>>> decomposition_refusal("kedge", p, list(get_formulation("moirai").blocks), own_checks=False)
"block 'channels' is not supported by decomposition 'kedge'"
"""

from __future__ import annotations

from typing import Callable

from schedkit.auto.phases import Phase
from schedkit.errors import SchedkitError
from schedkit.methods import METHODS
from schedkit.problem import Problem
from schedkit.reductions.budget import Budget
from schedkit.timing import TimingRules

__all__ = ["runnable", "decomposition_refusal", "honours"]


def decomposition_refusal(name: str, problem: Problem, blocks: list, own_checks: bool = True) -> str | None:
    """Why decomposition ``name`` refuses ``problem`` judged by ``blocks``, in one line, or
    ``None``; ``own_checks=False`` asks only whether it supports the blocks (its own checks
    of the graph, ``kedge``'s split, can cost seconds: they are said when it runs)."""
    from schedkit.reductions import DECOMPOSITIONS
    from schedkit.reductions.reduction import Reduction

    if name not in DECOMPOSITIONS.names():
        return f"{name} is not installed"
    reduction = DECOMPOSITIONS.get(name)()
    return reduction.refusal(problem, blocks) if own_checks else Reduction.refusal(reduction, problem, blocks)


def honours(name: str, formulation, problem: Problem) -> bool:
    """Whether method ``name`` is installed and its schedules can satisfy ``formulation`` on
    ``problem`` (a heuristic cannot honour a block of your own that sets no timing rule)."""
    if name not in METHODS.names():
        return False
    try:
        METHODS.get(name)(formulation=formulation).blocks(problem)
    except SchedkitError:
        return False
    return True


def runnable(problem: Problem, phases: list[Phase], state, budget: Budget, blocks: list, rules: TimingRules,
             too_large: Callable[[Problem, float | None], str | None]) -> list[Phase]:
    """``phases`` without those that cannot run, each recorded in ``state`` (an
    :class:`~schedkit.auto.state.Incumbent`) as skipped with its reason; ``too_large(problem,
    seconds)``: why the exact model does not fit ``seconds``, or ``None``."""
    from schedkit.auto.series import refusal as series_refusal
    from schedkit.auto.spine_bound import refusal

    kept = []
    # (bridge_dp's refusal where the series search could stand in: '' where it applies)
    chained = (decomposition_refusal("bridge_dp", problem, blocks) or "") \
        if any(p.name == "series" for p in phases) else None
    for phase in phases:
        left = budget.left()
        why = None
        if phase.name == "exact" and (left is None or left >= phase.least):
            # (a phase the time left cannot give its least is skipped for that when its turn
            # comes: its model's size, seconds to count on 100,000 tasks, is not asked)
            why = too_large(problem, left)
        elif phase.name == "series" and chained == "":
            continue    # (bridge_dp applies: it solves the same chain, every pair)
        elif phase.name == "series":
            why = series_refusal(blocks, rules)
        elif phase.name == "bridge_dp" and chained:
            why = chained   # (the series search solves the chain in its stead)
        elif phase.name == "kedge":
            why = decomposition_refusal("kedge", problem, blocks, own_checks=False)
        elif phase.name == "spine":
            why = refusal(problem, rules)
        if why is not None:
            state.skip(phase.name, phase.method, why)
            continue
        kept.append(phase)
    return kept
