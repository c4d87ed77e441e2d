"""``bridge_dp``: DiviML's MILP-SPLIT, a chain of modules solved per device pair and joined by a DP.

The task graph is cut where it narrows to one edge or one task that every path from the
inputs to the outputs crosses:

- a **bridge** of the undirected graph (networkx) ``a -> b`` whose tail ``a`` follows
  every task before it and whose head ``b`` precedes every task after it;
- an **articulation point** ``x`` (not the end of such a bridge) with every other task
  before or after it and no edge jumping over it. It becomes a zero-cost bridge to a twin
  ``x'`` of duration 0 that must sit on ``x``'s device: ``x`` ends one module, ``x'``
  starts the next with ``x``'s out-edges.

Between two cuts lies a **module** ``M_t`` with one entry (the head of the cut before it)
and one exit (the tail of the cut after it). For every input device ``u`` and output
device ``v``, ``OPT(M_t, u, v)`` is the best makespan of the module alone with its entry
pinned to ``u`` and its exit to ``v``: one part each, independent jobs. ``invert`` runs
the dynamic program over the chain,

    dp(M_t, v) = min over u, v' of  dp(M_t-1, v') + com(t, v', u) + OPT(M_t, u, v),

where ``com`` is the cut's transfer from ``v'`` to ``u`` (0 on one device, forbidden
from ``x`` to a twin elsewhere), follows the chosen pairs back and stitches their
schedules: each device runs module after module in the order its part chose, the times
recomputed left-shifted on the whole problem.

Every task of a module follows its entry and precedes its exit, so in any schedule the
modules run one after the other and the DP is exact: with exact parts it equals the
monolithic optimum (``exactness = "equivalent"``), and the same DP over the parts' lower
bounds is a lower bound of the whole problem, reported as the schedule's bound. A graph
without such a cut cannot be split (use ``kedge``); static memory that can bind (a device
that cannot hold every task that may run on it: memory is shared by every module on a
device) and collocation groups that span modules are refused.

Examples
--------
>>> from schedkit import Problem, solve
>>> from schedkit.generators import rwnn
>>> p = Problem.from_dict(rwnn(modules=3, nodes=4, channels=1, seed=2))
>>> s = solve(p, "bridge_dp", inner="milp", executor="serial")
>>> s.status, s.makespan == solve(p, "milp", threads=1).makespan
('optimal', True)
>>> parts, _ = BridgeDP().apply(p)
>>> len(parts), parts[0].name, parts[1].name
(33, 'rwnn-3x4-c1-sdep-mixed-2/m1/*-gpu0', 'rwnn-3x4-c1-sdep-mixed-2/m1/*-gpu1')
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from schedkit.blocks.interchangeable import device_groups, first_difference
from schedkit.reductions import DECOMPOSITIONS, Split, register_decomposition
from schedkit.reductions.reduction import DEFAULT_BLOCKS
from schedkit.reductions.subproblem import module_part, orders_by_start, stitch
from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.problem.series_cuts import TWIN, Cut, chain_cuts, modules
from schedkit.schedule import Quality, Result, Termination
from schedkit.validate import semantic_blocks

__all__ = ["BridgeDP", "BridgeOptions", "Cut", "TWIN", "chain_cuts", "modules"]



class BridgeOptions(BaseModel):
    """Options of ``bridge_dp``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    min_tasks: int = Field(1, ge=1)
    """Join neighbouring modules until each has at least this many tasks (fewer, larger
    parts; the DP stays exact)."""


@register_decomposition("bridge_dp")
class BridgeDP(Split):
    """MILP-SPLIT (DiviML): modules between bridges and articulation points, one part per module
    and device pair, a dynamic program over the chain."""

    exactness = "equivalent"
    optional_parts = True  # an infeasible device pair is simply not chosen
    supports = DEFAULT_BLOCKS
    in_series = True
    Options = BridgeOptions

    def refusal(self, problem, blocks=None):
        kinds = {b.kind for b in semantic_blocks(problem, blocks)}
        if "memory" in kinds and _memory_binds(problem):
            return ("block 'memory' (finite device memory) is shared by every module on a device; "
                    "bridge_dp cannot split it")
        why = super().refusal(problem, blocks)
        if why is not None:
            return why
        cuts = chain_cuts(problem)
        if not cuts:
            return ("the task graph has no bridge or articulation point that every path crosses; "
                    "try kedge")
        groups, _ = modules(problem, cuts, self.options.min_tasks)
        if len(groups) < 2:
            return f"no two modules have {self.options.min_tasks} tasks or more; lower min_tasks"
        module_of = {i: k for k, g in enumerate(groups) for i in g}
        for group, members in problem.colocate_groups.items():
            if len({module_of[i] for i in members}) > 1:
                return f"collocation group '{group}' spans two modules"
        return None

    def apply(self, problem, blocks=None):
        groups, cuts = modules(problem, chain_cuts(problem), self.options.min_tasks)
        parts, plan = [], []
        canonical = _Mirrors(problem)
        for t, tasks in enumerate(groups):
            before = cuts[t - 1] if t > 0 else None
            after = cuts[t] if t < len(cuts) else None
            entry = None if before is None else before.head
            exit_ = None if after is None else after.tail
            twin = before is not None and before.twin
            pairs, solved = [], {}  # canonical pair -> its part (None: no part)
            for u0 in (problem.allowed[entry] if entry is not None else (None,)):
                for v0 in (problem.allowed[exit_] if exit_ is not None else (None,)):
                    if entry == exit_ and entry is not None and u0 != v0:
                        continue
                    # A pair that mirrors one already made (identical devices swapped) reuses
                    # its part: the same optimum, the schedule relabelled back in invert.
                    (u, v), back = canonical(u0, v0)
                    if (u, v) in solved:
                        if solved[(u, v)] is not None:
                            pairs.append((u0, v0, solved[(u, v)], back))
                        continue
                    solved[(u, v)] = None
                    name = f"{problem.name}/m{t + 1}/{_label(problem, u)}-{_label(problem, v)}"
                    try:
                        part = module_part(problem, tasks, name, entry, exit_, twin, u, v)
                    except ProblemError:
                        continue  # the pins leave some edge without a linked pair of devices
                    solved[(u, v)] = len(parts)
                    pairs.append((u0, v0, len(parts), back))
                    parts.append(part)
            plan.append({"tasks": tasks, "pairs": pairs,
                         "cut": None if before is None else (before.tail, before.head, before.size)})
        return parts, self.inverse(problem, {"problem": problem, "modules": plan})

    def invert(self, results, inverse):
        problem: Problem = inverse.payload["problem"]
        plan = inverse.payload["modules"]
        value: dict = {None: 0.0}  # best makespan up to the previous module, by its exit device
        bound: dict = {None: 0.0}
        choice: list[dict] = []
        for module in plan:
            best, low, back = {}, {}, {}
            for u, v, k, mirror in module["pairs"]:
                result = results[k]
                come, source = _arrival(problem, module["cut"], value, u)
                if result.schedule is not None and come + result.objective < best.get(v, math.inf):
                    best[v] = come + result.objective
                    back[v] = ((k, mirror), source)
                if result.quality is not Quality.INFEASIBLE:
                    floor = _arrival(problem, module["cut"], bound, u)[0] + (result.bound or 0.0)
                    low[v] = min(low.get(v, math.inf), floor)
            value, bound = best, low
            choice.append(back)
        name = problem.name
        if not value:
            return Result.nothing(self.name, name, Termination.FINISHED,
                                  message="no device pair of some module has a schedule")
        v = min(value, key=lambda d: (value[d], -1 if d is None else d))
        chosen = []
        for back in reversed(choice):
            k, v = back[v]
            chosen.append(k)
        device_of = [0] * len(problem.tasks)
        orders: list[list[int]] = [[] for _ in problem.devices]
        for k, mirror in reversed(chosen):
            schedule = _Mirrors.relabelled(problem, results[k].schedule, mirror)
            for row in schedule.tasks:
                if row.task in problem.task_index:
                    device_of[problem.task_index[row.task]] = problem.device_index[row.device]
            for d, order in enumerate(orders_by_start(problem, schedule)):
                orders[d] += order
        stitched = stitch(problem, device_of, orders, self.name)
        floor = min(bound.values()) if bound else None
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=stitched,
                      bound=None if floor is None or not math.isfinite(floor) else min(floor, stitched.makespan))


class _Mirrors:
    """The canonical device pair of a module's (entry device, exit device), under the swaps of
    interchangeable devices (members of a ``group`` that the problem keeps identical, see
    :func:`~schedkit.blocks.interchangeable.first_difference`): relabelling a schedule by such
    a swap gives a schedule of the same makespan, so ``OPT(M, u, v)`` is solved once per class
    of pairs (on two servers of four GPUs: 6 parts per module instead of 64).

    Calling it with ``(u, v)`` gives ``((u', v'), back)``: the canonical pair, and ``back``
    (a tuple mapping each canonical device to the real one; ``None``: the pair is canonical).
    """

    def __init__(self, problem: Problem):
        self.n = len(problem.devices)
        self.group_of: dict[int, list[int]] = {}
        if first_difference(problem) is None:
            for members in device_groups(problem).values():
                for d in members:
                    self.group_of[d] = members

    def __call__(self, u, v):
        to = list(range(self.n))

        def swap(a: int, b: int) -> None:
            for d, c in enumerate(to):
                to[d] = b if c == a else a if c == b else c

        if u is not None and u in self.group_of:
            swap(to[u], self.group_of[u][0])
        if v is not None and to[v] in self.group_of:
            members = self.group_of[to[v]]
            taken = to[u] if u is not None else None
            target = next(d for d in members if d != taken) if to[v] != taken else taken
            swap(to[v], target)
        pair = (None if u is None else to[u], None if v is None else to[v])
        if to == list(range(self.n)):
            return pair, None
        back = [0] * self.n
        for d, c in enumerate(to):
            back[c] = d
        return pair, tuple(back)

    @staticmethod
    def relabelled(problem: Problem, schedule, back):
        """``schedule`` of the canonical pair moved onto the real devices."""
        if back is None:
            return schedule
        name = problem.devices
        rows = [r.model_copy(update={"device": name[back[problem.device_index[r.device]]]}) for r in schedule.tasks]
        return schedule.model_copy(update={"tasks": rows, "transfers": []})


def _memory_binds(problem: Problem) -> bool:
    """Whether some device cannot hold every task that may run on it (else memory says nothing)."""
    return any(sum(problem.task_memory[i] for i in range(len(problem.tasks)) if d in problem.allowed[i]) > cap
               for d, cap in enumerate(problem.device_memory))


def _arrival(problem: Problem, cut, before: dict, u) -> tuple[float, object]:
    """The least ``before[v'] + com(v', u)`` over the previous module's exit devices ``v'``."""
    if cut is None:
        return before.get(None, math.inf), None
    tail, head, size = cut
    best, source = math.inf, None
    for v, time in before.items():
        if tail == head:
            cost = 0.0 if v == u else math.inf
        else:
            cost = problem.comm_time(size, v, u) if problem.pair_allowed(size, v, u) else math.inf
        if time + cost < best:
            best, source = time + cost, v
    return best, source


def _label(problem: Problem, device) -> str:
    return "*" if device is None else problem.devices[device]


