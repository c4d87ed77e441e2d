"""Which phases ``auto`` runs on a problem, in which order, with which share of the time left.

A pure function of the problem's :class:`~schedkit.auto.traits.Traits`, so that the
plan is documented and tested apart from the methods it calls:

1. ``incumbent``: list heuristics (HEFT, and the chain split where memory forces several
   devices): a valid schedule within a second or two, whatever comes next.
2. ``bridge_dp`` when the graph has bridges or articulation points: exact on a chain of
   modules (DiviML's MILP-SPLIT), often a proof in seconds. It refuses, in one line that
   the schedule file's phases record, a memory capacity that can bind (memory is shared by
   every module on a device).
   ``series`` where ``bridge_dp`` does not apply to the formulation (transfers that wait for
   ports: MOIRAI's model): the same chain, each module solved once with its ends free, and
   only the (entry, exit) device pairs a dynamic program needs solved again
   (:func:`~schedkit.auto.series.series_search`): a proven bound, often the optimum.
3. ``exact``: the MILP raced with CP-SAT on the whole problem, started from the incumbent,
   when its model fits the time and memory left (:func:`~schedkit.milp.model_size.too_large`).
   On small graphs (at most :data:`SMALL` tasks) it comes first after ``bridge_dp`` and
   takes most of the time: it proves what it finds.
4. ``kedge`` on larger graphs: modules from k-edge-connected components, solved exactly in
   topological order, with DiviML's lower bound.
5. ``spine`` on larger graphs: a lower bound summed over windows of tasks that run one after the other in
   every schedule, between *pivots* that almost every task is before or after
   (:mod:`schedkit.auto.spine_bound`): the bound that sees transfers where no chain of cuts
   splits the graph (an encoder-decoder transformer). Not where memory forces several
   devices: its windows' bounds do not see memory, the problem's own bounds do.
6. ``windows`` on larger graphs (up to :data:`WINDOWS_MAX_TASKS`): windows of the
   incumbent re-solved by the exact race with the rest kept
   (:func:`~schedkit.auto.windows.window_search`): it repairs what a split into modules or
   stretches decided without seeing the whole (MSR's ResNet-50 operator graph: the chain
   split's 404 to 392 in 30 s).
7. ``refine``: local search on the incumbent's devices (windows re-placed by earliest
   finish, swaps, moves; :func:`~schedkit.reductions.refine.refined`) with the time left.

Each phase starts from the best schedule so far and stops at its share of the time left: its
``weight`` over the weights of the phases still to run (:func:`share`), so that a phase that
cannot run (a model too large, a decomposition that refuses the problem) leaves its time to
the others. ``auto`` stops as soon as the bound meets the incumbent.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.auto.traits import traits_of
>>> phases = plan(traits_of(Problem.load("examples/hetero20.yaml")))
>>> [(p.name, round(share(phases[k:]), 2)) for k, p in enumerate(phases)]
[('bridge_dp', 0.44), ('series', 0.8), ('exact', 0.86), ('refine', 1.0)]
"""

from __future__ import annotations

from dataclasses import dataclass

from schedkit.auto.traits import Traits

__all__ = ["Phase", "plan", "share", "cuts_least", "SMALL"]

#: Graphs up to this many tasks go to the exact solve first (after ``bridge_dp``).
SMALL = 300
#: ``kedge`` runs on graphs of at least this many tasks.
KEDGE_MIN_TASKS = 100
#: ``windows`` runs on graphs of at most this many tasks (each window re-times the whole
#: schedule: on far larger graphs a window costs seconds before its part is solved).
WINDOWS_MAX_TASKS = 20_000
#: ``spine`` runs on graphs of at most this many tasks (:data:`schedkit.problem.spine.MAX_TASKS`).
SPINE_MAX_TASKS = 5000
#: The least time ``spine`` needs: the graph's closure, the windows' parts and their floors.
SPINE_LEAST, SPINE_LEAST_PER_TASK = 1.0, 0.001
#: The least time ``windows`` needs: a few windows of a second each.
WINDOWS_LEAST = 3.0
#: The least time a decomposition phase needs to be worth starting: seconds, and seconds per
#: task (measured: ``kedge`` takes 2-4 s to split 600 tasks before its parts run).
SPLIT_LEAST, SPLIT_LEAST_PER_TASK = 3.0, 0.008
#: The same for the exact solve (a model to build before any search).
EXACT_LEAST, EXACT_LEAST_PER_TASK = 1.0, 0.002


@dataclass(frozen=True)
class Phase:
    """One phase of the plan.

    Attributes
    ----------
    name : str
        ``bridge_dp``, ``series``, ``exact``, ``kedge``, ``spine``, ``windows`` or ``refine``.
    method : str
        The registered method it runs (``milp`` for ``exact`` and for the parts of
        ``windows``; ``refine``, the kernel's local search, and ``spine``, a bound, are not
        registered methods).
    weight : float
        Its share of the time left is its weight over the weights of the phases still to run.
    """

    name: str
    method: str
    weight: float
    least: float = 0.5
    """Seconds below which the phase is skipped: what it costs before it can return anything
    (a decomposition splits the graph and starts its workers; a MILP builds its model)."""


def plan(traits: Traits) -> list[Phase]:
    """The phases after the incumbent for a problem of these ``traits`` (see above)."""
    phases = []
    exact = EXACT_LEAST + EXACT_LEAST_PER_TASK * traits.tasks
    split = SPLIT_LEAST + SPLIT_LEAST_PER_TASK * traits.tasks
    if traits.inputs > 1:  # a workload in batches: only the MILP splits inputs
        return [Phase("exact", "milp", 1.0, exact)]
    if traits.cuts:
        # (exact when it completes: it gets most of the time, and a proof ends auto)
        phases.append(Phase("bridge_dp", "bridge_dp", 28.0, split))
        phases.append(Phase("series", "milp", 28.0, exact))
    if traits.tasks <= SMALL:
        phases.append(Phase("exact", "milp", 6.0, exact))
    else:
        if traits.tasks >= KEDGE_MIN_TASKS:
            phases.append(Phase("kedge", "kedge", 3.0, split))
        phases.append(Phase("exact", "milp", 2.0, exact))
    if SMALL < traits.tasks <= SPINE_MAX_TASKS and not traits.memory_tight:
        phases.append(Phase("spine", "spine", 3.0, SPINE_LEAST + SPINE_LEAST_PER_TASK * traits.tasks))
    if traits.tasks > SMALL and traits.tasks <= WINDOWS_MAX_TASKS:
        phases.append(Phase("windows", "milp", 3.0, WINDOWS_LEAST))
    phases.append(Phase("refine", "refine", 1.0))
    return phases


def cuts_least(tasks: int) -> float:
    """The least time of the phases that cuts enable (``bridge_dp``, ``series``) on ``tasks``
    tasks: with less, the cuts change nothing in the plan and need not be counted.

    Examples
    --------
    >>> cuts_least(100), cuts_least(100_000)
    (1.2, 201.0)
    """
    return min(SPLIT_LEAST + SPLIT_LEAST_PER_TASK * tasks, EXACT_LEAST + EXACT_LEAST_PER_TASK * tasks)


def share(phases: list[Phase]) -> float:
    """The share of the time left that ``phases[0]`` may take, the others still to run.

    Examples
    --------
    >>> kedge, exact, refine = Phase("kedge", "kedge", 3.0), Phase("exact", "milp", 2.0), Phase("refine", "refine", 1.0)
    >>> share([kedge, exact, refine]), share([kedge, refine])
    (0.5, 0.75)
    """
    return phases[0].weight / sum(p.weight for p in phases)
