"""``merge``: greedy node merging to at most N nodes (She et al. 2025, Algorithm 1), then any method.

Large graphs are coarsened until an exact method can take them: pairs of nodes are merged,
one pair at a time, until at most ``nodes`` remain. A merged node runs its members back to
back on one device: its devices are the intersection of its members', its duration on each
the sum of theirs, its memory the sum (:mod:`schedkit.reductions.coarsen`).

Which pair is merged next (schedkit's reading of the algorithm; thresholds are relative
to the mean node weight ``W = total least duration / N``):

- **Never a cycle.** An edge ``a -> b`` is merged only when no other path leads from ``a``
  to ``b`` (redundant edges, implied by longer paths, are never contracted); two nodes
  without an edge only when no path joins them. A merged node keeps a device its members
  share, with room for their memory and for the rest of its collocation group.
- **Safe edges first**: chain links (the head has one input and the tail one output,
  redundant edges ignored) lose no parallelism and go first, under ``edge_factor * W``.
- **Then the pair that lengthens the critical path least**: the pair whose merged node
  has the shortest longest path through it, in HEFT's mean costs (a node's mean duration,
  an edge's mean transfer time; :func:`~schedkit.problem.graph.costed_paths`), edges before
  non-edges at equal length, the lightest first. A merge serialises its two nodes, and
  contracting an edge saves its transfer: pairs in the graph's slack go first, links on a
  critical path are contracted (as in clustering for scheduling), and the coarse graph keeps
  the parallelism a method needs to use several devices. Edges stay under
  ``edge_factor * W``; non-edges (nodes next to each other in level order) under the
  stricter ``pair_factor * W``. Memory stays under the same factors times the mean task
  memory per node. The paths are recomputed after every ``max(8, nodes left // 16)``
  merges; in between, a merged node's own are exact and its neighbours' as they stood.
- When no pair passes, the thresholds are doubled. When no pair passes at any threshold
  and what holds the nodes apart is that they belong to two collocation groups (a DNN's
  operator graph has a group per layer), merging may join two groups: both then share
  one device (:class:`~schedkit.reductions.coarsen.Collocation`), pairs that join none first.

On a large graph (more than :data:`GREEDY_TASKS` tasks, or more than the time limit lets
greedy merging weigh), greedy merging starts from runs of the level order instead of the
tasks (:func:`~schedkit.decompositions.merge_levels.level_runs`: linear time, never a
cycle, several runs per level where the levels are few), as many as
:data:`GREEDY_SHARE` of the time left allows; ``invert`` times the expansion and HEFT's
order without making a schedule of either and makes one schedule at the end, and skips
the refinement when the time left would not time one candidate.

Which edges may be contracted (``edges``): ``all``, as above; ``links``, chain links only
(other edges only when nothing else merges any more); ``auto`` (the default) merges both
ways and keeps the coarse problem with the smaller lower bound
(:func:`~schedkit.problem.bounds.lower_bound`; ``all`` at a tie). Contracting an edge whose
head has other inputs makes the tail wait for them too: on a wide graph, such merges chain
the levels together and leave devices idle (measured on a 10 x 100 layered graph at N = 60:
coarse bounds 734 with ``all``, 508 with ``links``), while on a deep, narrow one they are
what keeps the critical path short (250 x 4: 508 with ``all``, 1283 with ``links``).

``invert`` expands the coarse schedule (members back to back in topological order in
their node's slot, times left-shifted on the original problem), then keeps every task on
its device and, when that is shorter, lets HEFT's list schedule order each device again
(:func:`~schedkit.reductions.coarsen.reordered`; on slow links, members that feed other
devices no longer wait behind the rest of their node). Last, for at most ``refine``
seconds, a local search changes devices while that list schedule gets shorter
(:func:`~schedkit.reductions.refine.refined`): windows of the tasks re-placed by earliest
finish, the others kept, and moves of whole groups, then ever smaller parts of them. The
coarse solve optimised the coarse makespan, and its devices are seldom the best ones for
the expanded schedule. A restriction, with no bound. Under the method's ``time_limit``, the
refinement gets at most a quarter of the time left after coarsening (:data:`REFINE_SHARE`),
the coarse solve the rest, and it stops at the limit whatever ``refine`` says.

The refinement has a second start: HEFT's list schedule of the whole problem
(:meth:`Merge.heft_start`; under a time limit made first, before the coarsening). The
expanded schedule is refined first, as before, HEFT's while time is left, and the
shortest schedule of all is returned (:func:`best_refined`): ``merge`` is never worse
than the list heuristic it could have started from, nor than its refined expansion alone.
(Refining the shorter start first lost up to 0.7 % on 1000-task layered graphs whose
refinement ran out of time: HEFT's schedule is a poorer basin than the expanded one.)
Where the levels outnumber the nodes, the coarse graph is a chain of level ranges
whatever is merged (a 1,000-level graph of 100,000 tasks at 40 nodes), its best
schedule runs on one device, and the expanded schedule cannot be refined into a good one
in the time (measured on 50 devices: 139,307 from the chain, 106,101 after 4.4 s of
windows, HEFT 6,381). ``refine=0`` returns the expanded schedule itself.

Examples
--------
>>> from schedkit import Problem, solve
>>> from schedkit.generators import layered
>>> p = Problem.from_dict(layered(levels=6, width=5, edge_prob=0.3, long_range_prob=0.1,
...                               devices=3, seed=4))
>>> coarse, _ = Merge(nodes=8).apply(p)
>>> len(p.tasks), len(coarse.tasks)
(30, 8)
>>> s = solve(p, "merge", nodes=8, inner="milp", executor="serial")
>>> s.status, len(s.tasks)
('feasible', 30)
"""

from __future__ import annotations

import math
import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schedkit.reductions import Reduction, register_decomposition
from schedkit.reductions.budget import finish_seconds, list_schedule_seconds, slowdown, wall_per_cpu
from schedkit.reductions.coarsen import Collocation, coarse_problem, expanded, makespan_of, reordered_times
from schedkit.reductions.reduction import DEFAULT_BLOCKS
from schedkit.reductions.refine import refined_mapping
from schedkit.decompositions.merge_graph import greedy_merge
from schedkit.decompositions.merge_levels import level_runs
from schedkit.errors import ProblemError, SchedkitError
from schedkit.numerics import shorter
from schedkit.problem import Problem
from schedkit.problem.bounds import lower_bound
from schedkit.problem.edge_table import edge_count
from schedkit.problem.graph import upward_rank
from schedkit.schedule import Quality, Result, Termination
from schedkit.timing import list_schedule, to_schedule

__all__ = ["Merge", "MergeOptions", "merge_groups"]

#: Under a time limit, the refinement gets at most this share of the time left after
#: coarsening (and at most ``refine`` seconds); the coarse solve gets the rest.
REFINE_SHARE = 0.25


class MergeOptions(BaseModel):
    """Options of ``merge``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    nodes: int = Field(40, ge=1)
    """Merge until at most this many nodes remain."""
    edge_factor: float = Field(2.0, gt=0)
    """An edge merge keeps the node under this many times the mean node duration."""
    pair_factor: float = Field(1.0, gt=0)
    """A merge of two unconnected nodes keeps it under this many times the mean (stricter)."""
    edges: Literal["auto", "all", "links"] = "auto"
    """Which edges may be contracted: ``all``, chain ``links`` only, or ``auto``: merge both
    ways and keep the coarse problem with the smaller lower bound."""
    refine: float = Field(5.0, ge=0)
    """At most this many seconds of refinement after expansion: windows of tasks re-placed
    by earliest finish, and groups, then halves, quarters, ... of them, down to single
    tasks, moved to other devices while the schedule gets shorter
    (:func:`~schedkit.reductions.refine.refined`), from the expanded schedule and from
    HEFT's with the time left; ``0``: none, and no HEFT start."""


def merge_groups(problem: Problem, nodes: int, edge_factor: float = 2.0,
                 pair_factor: float = 1.0, edges: str = "auto") -> list[list[int]]:
    """The groups of tasks (each in topological order) greedy merging makes, at most ``nodes``
    (the options are :class:`MergeOptions`').

    Raises
    ------
    SchedkitError
        When no more pairs can be merged (no shared device, memory) before ``nodes`` is
        reached.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [[p.tasks[i] for i in g] for g in merge_groups(p, 3)]
    [['embed', 'mlp'], ['attn', 'norm', 'logits'], ['sample']]
    """
    options = MergeOptions(nodes=nodes, edge_factor=edge_factor, pair_factor=pair_factor, edges=edges)
    return _coarsened(problem, options)[0]


def _coarsened(problem: Problem, o: MergeOptions, first: int | None = None) -> tuple[list[list[int]], Problem]:
    """The groups and the coarse problem of the rule ``o.edges``; for ``auto``, of the rule
    (``all`` first) whose coarse problem has the smaller lower bound.

    With more tasks than ``first``, greedy merging starts from about ``first`` runs of the
    level order (:func:`~schedkit.decompositions.merge_levels.level_runs`), not from the
    tasks: the runs cost linear time, the greedy the square of what it starts from.
    """
    if first is None or len(problem.tasks) <= max(first, o.nodes):
        return _greedy(problem, o)[:2]
    runs = level_runs(problem, first)
    name = f"{problem.name}/runs{len(runs)}"
    if len(runs) <= o.nodes:
        return runs, coarse_problem(problem, runs, name)
    inner, _, classes = _greedy(coarse_problem(problem, runs, name), o)
    position = {i: k for k, i in enumerate(problem.topological_order)}
    groups = sorted((sorted((i for g in members for i in runs[g]), key=position.__getitem__) for members in inner),
                    key=lambda m: position[m[0]])
    return groups, coarse_problem(problem, groups, f"{problem.name}/merged{len(groups)}",
                                  colocate=classes.rebound(problem))


def best_refined(problem: Problem, starts: list[tuple[list[int], list[float]]], groups: list[list[int]],
                 seconds: float) -> tuple[list[int], list[float]]:
    """The shortest of ``starts`` (each a mapping and its start times) and of their
    refinements (:func:`~schedkit.reductions.refine.refined_mapping`, which keeps the
    incumbent of each): the starts in turn, in their order, while ``seconds`` last.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> serial = ([1] * 6, [0.0, 1.8, 11.3, 22.3, 22.9, 28.9])      # all on the cpu: 29.2
    >>> device_of, start = best_refined(p, [serial], [], 0)
    >>> device_of == serial[0], round(makespan_of(p, device_of, start), 3)
    (True, 29.2)
    >>> round(makespan_of(p, *best_refined(p, [serial], [], 5)), 3)
    4.516
    """
    end = time.perf_counter() + seconds
    lengths = [makespan_of(problem, *s) for s in starts]
    k = min(range(len(starts)), key=lengths.__getitem__)
    best_length, best = lengths[k], starts[k]
    for (device_of, _), length in zip(starts, lengths):
        left = end - time.perf_counter()
        if left <= 0:
            break
        found = refined_mapping(problem, device_of, length, groups, left)
        if found is not None and shorter(makespan_of(problem, *found), best_length):
            best_length, best = makespan_of(problem, *found), found
    return best


def _greedy(problem: Problem, o: MergeOptions) -> tuple[list[list[int]], Problem, Collocation]:
    """The groups of greedy merging, their coarse problem and their joined collocation
    groups (see :func:`_coarsened`)."""
    found, failure = [], None
    for contract in (True, False) if o.edges == "auto" else (o.edges == "all",):
        try:
            g = greedy_merge(problem, o.nodes, o.edge_factor, o.pair_factor, contract)
        except SchedkitError as exc:  # the other rule may still get there
            failure = failure or exc
            continue
        groups = g.groups()
        coarse = coarse_problem(problem, groups, f"{problem.name}/merged{len(groups)}", colocate=g.classes)
        found.append((lower_bound(coarse), groups, coarse, g.classes))
    if not found:
        raise failure
    best = found[0]
    for candidate in found[1:]:
        if shorter(candidate[0], best[0]):
            best = candidate
    return best[1], best[2], best[3]


#: Seconds per squared task of greedy merging from the tasks (an upper estimate; measured:
#: 1,000 tasks in 3.1 s, 2,500 in 10.5 s, MSR's BERT-12 operator graph, 783 tasks, in 0.6 s).
COARSEN_SECONDS = 3e-6

#: Seconds per squared run of greedy merging from runs of the level order, both rules of
#: ``edges="auto"`` (the runs of a dense graph have many edges between them; measured on
#: a 10,000-task layered graph: 395 runs in 2.6 s, 1,109 in 11 s).
RUN_SECONDS = 1.2e-5

#: Greedy merging weighs a pair over the devices its two nodes share: every this many
#: devices add :data:`RUN_SECONDS` once more (measured: 577 runs of a 96-layer transformer
#: on 1,025 GPUs merged in 13.4 s at a 1.65 slowdown, 2.4e-5 CPU seconds per squared run).
RUN_DEVICES = 1000

#: Greedy merging starts from the tasks themselves up to this many (about 12 s at most);
#: a larger graph is first cut into about this many runs of the level order
#: (:func:`~schedkit.decompositions.merge_levels.level_runs`, linear time).
GREEDY_TASKS = 2000

#: Under a time limit, greedy merging gets at most this share of the time left: it starts
#: from fewer runs when the time is short.
GREEDY_SHARE = 0.25

#: CPU seconds per edge or task of ``invert``'s timing of the expanded schedule (measured
#: on a 100,000-task layered graph of 3.0 million edges: 0.98 s).
TIMING_SECONDS = 4e-7

#: CPU seconds per edge or task of the end of ``merge``'s solve: its schedule made, validated
#: and written (measured on HEFT's schedule of a 100,000-task layered graph of 3.1 million
#: edges, 450 MB: 0.34 + 1.0 + 1.9 s). :data:`~schedkit.reductions.budget.FINISH_SECONDS`,
#: measured on ``auto``'s end, is about twice as much: kept back by the decomposition method
#: from the coarse part, it left ``merge`` no time for HEFT's start on a shared machine.
END_SECONDS = 1.3e-6


@register_decomposition("merge")
class Merge(Reduction):
    """Greedy node merging to at most N nodes (She et al. 2025, Algorithm 1); any method on the
    coarse problem."""

    exactness = "restriction"
    supports = DEFAULT_BLOCKS
    Options = MergeOptions

    #: Wall-clock seconds per CPU second in this process (:func:`~schedkit.reductions.budget.slowdown`),
    #: the edges and tasks of the problem applied, and the end of its solve
    #: (:func:`~schedkit.reductions.budget.finish_seconds` at :data:`END_SECONDS`): what the
    #: reserves scale with.
    slowdown: float = 1.0
    size: int = 0
    finish: float = 0.0

    def greedy_tasks(self, problem: Problem) -> int:
        """How many tasks greedy merging may start from; a larger graph starts from about
        that many runs of the level order.

        Every graph of at most :data:`GREEDY_TASKS` tasks whose merging (:data:`COARSEN_SECONDS`
        per squared task) takes at most half the time left starts from its tasks, as
        before runs existed; otherwise the runs are as many as :data:`GREEDY_SHARE` of the
        time left allows (:data:`RUN_SECONDS` CPU seconds, more with :data:`RUN_DEVICES`,
        times :attr:`slowdown`), at most :data:`GREEDY_TASKS`, once :meth:`finish_seconds`
        are kept back.
        """
        n, most = len(problem.tasks), GREEDY_TASKS
        if self.deadline is None:
            return max(most, self.options.nodes)
        left = max(0.0, self.deadline - time.perf_counter())
        if n <= most and COARSEN_SECONDS * n * n <= left / 2:
            return n
        left = max(0.0, left - self.finish_seconds()) / self.slowdown
        per_run = RUN_SECONDS * (1 + len(problem.devices) / RUN_DEVICES)
        return max(self.options.nodes, min(most, int(math.sqrt(GREEDY_SHARE * left / per_run))))

    def finish_seconds(self, timing: bool = True) -> float:
        """Wall-clock seconds kept back, after the parts, for the timing of the expanded
        schedule (``timing``: :data:`TIMING_SECONDS` per edge and task, times :attr:`slowdown`),
        then the end of the solve (:attr:`finish`)."""
        return self.finish + (self.slowdown * self.size * TIMING_SECONDS if timing else 0.0)

    def apply(self, problem, blocks=None):
        self.size = edge_count(problem) + len(problem.tasks)
        if self.deadline is not None:
            self.slowdown, self.finish = slowdown(problem), finish_seconds(problem, END_SECONDS)
        # Under a time limit, the floor first: the coarsening then takes what is left. (Without
        # one, invert makes it: ``schedkit decompose`` only applies.)
        start = None if self.deadline is None else self.heft_start(problem)
        groups, coarse = _coarsened(problem, self.options, self.greedy_tasks(problem))
        payload = {"problem": problem, "groups": groups, "start": start}
        if all(len(g) == 1 for g in groups):    # (nothing merged: the problem itself, whose answer is the answer)
            return problem, self.inverse(problem, payload, exactness="equivalent")
        return coarse, self.inverse(problem, payload)

    def heft_start(self, problem: Problem) -> tuple[list[int], list[float]] | None:
        """HEFT's list schedule of the whole problem (every task's device and start): the
        list heuristic ``merge`` could have started from, the refinement's second start.

        ``None`` without a refinement (``refine=0`` asks for the expanded schedule itself),
        when the time left, once the end of the solve (:attr:`finish`) is kept back, would
        not hold it (:func:`~schedkit.reductions.budget.list_schedule_seconds` at :attr:`slowdown`),
        or when placing every task on its earliest-finishing device gets stuck (memory used
        up, no link). ``invert`` then skips the expanded schedule if it could not be timed
        in the time left.
        Under a time limit, the wall-clock seconds it takes per CPU second raise
        :attr:`slowdown` (which :func:`~schedkit.reductions.budget.slowdown` measures only on
        large graphs): on a shared machine the coarsening then starts from fewer runs.
        """
        if self.options.refine <= 0:
            return None
        # (the end of the solve only: the expanded schedule is not timed when the time is gone)
        left = None if self.deadline is None else self.deadline - time.perf_counter() - self.finish
        if left is not None and list_schedule_seconds(problem, self.slowdown) > left:
            return None
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            found = list_schedule(problem, upward_rank(problem))
        except ProblemError:
            return None
        if left is not None:  # (seconds of work: a surer measure than a small graph's first passes)
            self.slowdown = max(self.slowdown, wall_per_cpu(time.perf_counter() - wall, time.process_time() - cpu))
        return found

    def invert_seconds(self, left: float) -> float:
        """What ``invert`` keeps after the parts: the refinement's seconds (``refine``, at most
        :data:`REFINE_SHARE` of the time left) and the timing of the expanded schedule (the
        end of the solve is kept by the decomposition method itself)."""
        return min(self.options.refine, REFINE_SHARE * left) + self.finish_seconds() - self.finish

    def invert(self, results, inverse):
        problem, groups = inverse.payload["problem"], inverse.payload["groups"]
        # (times first, one schedule at the end: on 100,000 tasks each schedule costs seconds)
        began = time.perf_counter()
        # The refinement and the list schedule stop early enough for the schedule, its
        # validation and its file to be made by the method's time limit.
        deadline = None if self.deadline is None else self.deadline - self.finish_seconds(timing=False)
        heft = self.heft_start(problem) if self.deadline is None else inverse.payload["start"]
        starts = [heft] if heft else []
        if not starts or deadline is None or deadline - began >= self.finish_seconds() - self.finish:
            # (else the expanded schedule would not be timed in time, and HEFT's start is in hand)
            device_of, orders = expanded(problem, groups, results[0].schedule)
            starts.insert(0, (device_of, reordered_times(problem, device_of, orders, deadline)))
        seconds = self.options.refine
        if deadline is not None:  # the method's time limit: what the coarse solve left
            seconds = min(seconds, max(0.0, deadline - time.perf_counter()))
            if seconds < time.perf_counter() - began:
                seconds = 0.0  # (not one candidate of the refinement would be timed in time)
        device_of, start = best_refined(problem, starts, groups, seconds)
        schedule = to_schedule(problem, device_of, start, self.name)
        merged = any(len(g) > 1 for g in groups)
        message = None if merged else (f"merge merged nothing ({len(problem.tasks)} tasks, at most "
                                       f"{self.options.nodes} nodes asked): the problem was solved as it is")
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                      bound=None if merged else results[0].bound, message=message)
