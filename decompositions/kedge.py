"""``kedge``: DiviML's multi-channel splitting, modules solved in topological order, with a lower bound.

Where modules are joined by several channels there is no bridge to cut (``bridge_dp``),
but the channels are still fewer than the edges that hold a module together. Modules
are therefore the **k-edge-connected components** of the undirected task graph, read off
a Gomory-Hu tree (networkx): two tasks are k-edge-connected when every edge on their tree
path weighs at least k. Components smaller than ``min_tasks`` (tasks of low degree) join
the neighbouring module they share most edges with, and modules that depend on each other
both ways are joined, so that the modules form a DAG. ``k`` is the user's, or the smallest
that gives balanced modules: none holds more than ``max_share`` of the tasks (else the k
whose largest module is smallest).

The modules are solved **in topological order**, one round each: module ``t`` is a part
of its own in which every device busy with earlier modules is taken by a stand-in task
that lasts until the device is free, and every channel into the module leaves that
stand-in, so the module sees when its inputs can arrive on each device. Its schedule is
appended to the earlier ones (each device runs the earlier modules first, times
recomputed left-shifted on the whole problem); memory used by earlier modules is taken
off the devices' capacities, and collocation groups keep the device an earlier module
chose.

**Lower bound** (DiviML's recursive bound through the channels). For every task ``o`` of
a module with an edge leaving it, ``pre(o)`` is ``o`` and its ancestors inside the module;
every channel into ``pre(o)`` releases its task no earlier than the bound on its source's
end (``dep``) plus the least transfer between their devices. The best schedule of
``pre(o)`` with those releases ends no later than ``o`` does in any schedule, so its
proven lower bound bounds ``o``'s end; the same for the whole of every module that holds
an output of the network bounds the makespan. These bound parts run beside the module's
own part in each round; ``invert`` reports the largest as the schedule's bound
(``exactness = "relaxation"``), or the devices' load bound when that is larger
(:func:`~schedkit.problem.bounds.load_bound`: where modules overlap in time, as with weakly dependent channels,
the paths through the channels say little and the load says more). A bound part that
finds no bound falls back on the longest path of least durations from the releases.

Examples
--------
>>> from schedkit import Problem, solve
>>> from schedkit.generators import rwnn
>>> p = Problem.from_dict(rwnn(modules=3, nodes=5, channels=2, dependency="sdep", seed=3))
>>> s = solve(p, "kedge", inner="milp", executor="serial")
>>> s.status, s.bound <= s.makespan, len(kedge_modules(p, 3))
('feasible', True, 3)
"""

from __future__ import annotations

import math
import time

from pydantic import BaseModel, ConfigDict, Field

from schedkit.reductions import Split, register_decomposition
from schedkit.reductions.reduction import DEFAULT_BLOCKS
from schedkit.reductions.subproblem import (edge_row, heavier, orders_by_start, remaining_capacities, spec_data,
                                           stitch, sub_problem, task_row)
from schedkit.decompositions.kedge_modules import choose_k, gomory_hu_seconds, kedge_modules
from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.problem.bounds import load_bound
from schedkit.problem.edge_table import edge_count
from schedkit.schedule import Quality, Result, Termination

__all__ = ["Kedge", "KedgeOptions", "kedge_modules", "choose_k", "gomory_hu_seconds"]



class KedgeOptions(BaseModel):
    """Options of ``kedge``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    k: int | None = Field(None, ge=1)
    """Edge connectivity of a module (DiviML: one more than the channels between modules);
    by default the smallest k that gives balanced modules."""
    max_share: float = Field(0.3, gt=0, le=1)
    """Modules are balanced when none holds more than this share of the tasks."""
    min_tasks: int = Field(3, ge=1)
    """Components with fewer tasks join a neighbouring module."""
    bound: bool = True
    """Compute DiviML's recursive lower bound (one more part per module output)."""
    lookahead: int = Field(0, ge=0)
    """Modules after each one solved with it (a rolling horizon): only the module's own
    devices and orders are kept, but they were chosen knowing where its outputs go and
    what memory the next modules need."""


@register_decomposition("kedge")
class Kedge(Split):
    """DiviML's multi-channel split: k-edge-connected modules solved in topological order,
    with DiviML's recursive lower bound."""

    exactness = "relaxation"
    optional_parts = True  # a bound part may fail: a weaker bound is used
    supports = DEFAULT_BLOCKS
    Options = KedgeOptions

    def _modules(self, problem: Problem) -> list[list[int]]:
        o = self.options
        cached = getattr(self, "_found", None)
        if cached is not None and cached[0] is problem:  # (refusal, then apply: one tree)
            return cached[1]
        if o.k is not None:
            modules = kedge_modules(problem, o.k, o.min_tasks)
        else:
            modules = choose_k(problem, o.max_share, o.min_tasks)[1]
        self._found = (problem, modules)
        return modules

    def _too_slow(self, problem: Problem) -> str | None:
        """Why the modules cannot be found before the time limit (``None`` when they can)."""
        if self.deadline is None:
            return None
        need, left = gomory_hu_seconds(problem), self.deadline - time.perf_counter()
        if need <= left / 2:
            return None
        return (f"its modules take about {need:,.0f} s to find on {len(problem.tasks):,} tasks and "
                f"{edge_count(problem):,} edges (a Gomory-Hu tree: one max-flow per task), more than "
                f"half of the {max(0.0, left):.1f} s the time limit leaves; try merge or a larger limit")

    def refusal(self, problem, blocks=None):
        why = super().refusal(problem, blocks) or self._too_slow(problem)
        if why is None and len(self._modules(problem)) < 2:
            if self.options.k is not None:
                why = f"k={self.options.k} does not split the task graph into two modules or more"
            else:
                why = "no k splits the task graph into two modules or more; try bridge_dp or merge"
        return why

    def preview(self, problem, blocks=None):
        """One plain problem per module, in topological order."""
        return [sub_problem(problem, tasks, f"{problem.name}/module{t + 1}")
                for t, tasks in enumerate(self._modules(problem))]

    def apply(self, problem, blocks=None):
        state = {"problem": problem, "modules": self._modules(problem), "rounds": [], "absorbed": 0,
                 "device_of": {}, "orders": [[] for _ in problem.devices], "ends": {},
                 "dep": {}, "bound": 0.0, "failed": None}
        parts = self._round(state, 0)
        return parts, self.inverse(problem, state)

    def advance(self, results, inverse):
        state = dict(inverse.payload)
        self._absorb(state, results)
        t = len(state["rounds"])
        if state["failed"] is not None or t >= len(state["modules"]):
            return None
        parts = self._round(state, len(results))
        return parts, self.inverse(state["problem"], state)

    def round_share(self, inverse):
        """An equal share for every module not yet solved (the one just made included): a
        share by size starves the small modules, whose parts cost a solver's set-up time
        whatever their size (on MSR's Inception-v3 at 10 s, 40 of 86 parts ran out of time
        by size, 17 with equal shares)."""
        state = inverse.payload
        return 1.0 / max(1, len(state["modules"]) - len(state["rounds"]) + 1)

    # -------------------------------------------------------------- one round per module
    def _round(self, state: dict, first: int) -> list[Problem]:
        problem: Problem = state["problem"]
        t = len(state["rounds"])
        tasks = state["modules"][t]
        ahead = [i for later in state["modules"][t + 1:t + 1 + self.options.lookahead] for i in later]
        parts = [self._module_part(state, t, tasks + ahead)]
        bounds = []
        if self.options.bound:
            inside = set(tasks)
            outputs = [i for i in tasks if any(j not in inside for j, _ in problem.succs[i])]
            sinks = any(not problem.succs[i] for i in tasks)
            for o in outputs + ([None] if sinks else []):
                pre = tasks if o is None else [i for i in tasks if i == o or (problem.descendants[i] >> o) & 1]
                parts.append(self._bound_part(state, t, pre, o))
                bounds.append((o, pre))
        state["rounds"] = state["rounds"] + [{"first": first, "bounds": bounds}]
        return parts

    def _module_part(self, state: dict, t: int, tasks: list[int]) -> Problem:
        problem: Problem = state["problem"]
        device_of, ends = state["device_of"], state["ends"]
        ready = {}
        for i, d in device_of.items():
            ready[d] = max(ready.get(d, 0.0), ends[i])
        stand_ins, edges = [], {}
        name_of = {d: _fresh(problem, f"~busy:{problem.devices[d]}") for d in ready}
        for d, until in sorted(ready.items()):
            stand_ins.append({"name": name_of[d], "durations": {problem.devices[d]: until}})
        inside = set(tasks)
        for i, j, size in problem.edges:
            if j in inside and i not in inside:
                key = (name_of[device_of[i]], problem.tasks[j])
                edges[key] = heavier(problem, edges.get(key, 0.0), size)
        pins = {}
        for group, members in problem.colocate_groups.items():
            placed = [device_of[i] for i in members if i in device_of]
            for i in members:
                if i in inside and placed:
                    pins[i] = [placed[0]]
        devices = remaining_capacities(problem, device_of)
        rows = [task_row(problem, i, pins.get(i)) for i in tasks]
        data = {"name": f"{problem.name}/module{t + 1}", "devices": devices,
                "links": spec_data(problem, platform=True).get("links", []),
                "tasks": rows + stand_ins,
                "edges": [edge_row(problem, problem.tasks[i], problem.tasks[j], size)
                          for i, j, size in problem.edges if i in inside and j in inside]
                + [edge_row(problem, a, b, s) for (a, b), s in sorted(edges.items())]}
        try:
            return Problem.from_dict(data)
        except ProblemError as exc:
            raise ProblemError(f"kedge: module {t + 1} cannot be placed after the modules before it: "
                               f"{exc}") from None

    def _bound_part(self, state: dict, t: int, pre: list[int], o: int | None) -> Problem:
        problem: Problem = state["problem"]
        inside = set(pre)
        extra_tasks, extra_devices, extra_edges = [], [], []
        for e in pre:
            release = self._release(state, e)
            if release > 0:
                ghost = _fresh(problem, f"~release:{problem.tasks[e]}")
                extra_devices.append({"name": ghost})
                extra_tasks.append({"name": ghost, "durations": {ghost: release}})
                extra_edges.append({"src": ghost, "dst": problem.tasks[e], "size": 0.0})
        label = "all" if o is None else problem.tasks[o]
        return sub_problem(problem, inside, f"{problem.name}/module{t + 1}/bound:{label}",
                           extra_tasks=extra_tasks, extra_edges=extra_edges, extra_devices=extra_devices)

    def _release(self, state: dict, e: int) -> float:
        """No input of ``e`` from an earlier module arrives before this (the ``dep`` bound)."""
        problem: Problem = state["problem"]
        release = 0.0
        for p, size in problem.preds[e]:
            if p in state["dep"]:
                least = min((problem.comm_time(size, u, v) for u in problem.allowed[p] for v in problem.allowed[e]
                             if problem.pair_allowed(size, u, v)), default=0.0)
                release = max(release, state["dep"][p] + least)
        return release

    def _absorb(self, state: dict, results: list[Result]) -> None:
        """Append the last round's module schedule and bounds to the state."""
        problem: Problem = state["problem"]
        round_ = state["rounds"][-1]
        t = len(state["rounds"]) - 1
        state["absorbed"] = t  # until this round is in
        tasks = state["modules"][t]
        result = results[round_["first"]]
        if result.schedule is None:
            state["failed"] = f"module {t + 1} ({result.problem}) found no schedule" + \
                (f": {result.message}" if result.message else "")
            return
        device_of = dict(state["device_of"])
        orders = [list(order) for order in state["orders"]]
        own = {problem.tasks[i]: i for i in tasks}  # (not the lookahead's tasks: a later round places them)
        for row in result.schedule.tasks:
            if row.task in own:
                device_of[own[row.task]] = problem.device_index[row.device]
        for d, order in enumerate(orders_by_start(problem, result.schedule, own)):
            orders[d] += order
        done = sorted(device_of)
        partial = sub_problem(problem, done, problem.name)
        where = {i: k for k, i in enumerate(done)}
        schedule = stitch(partial, [device_of[i] for i in done],
                          [[where[i] for i in order] for order in orders], "kedge")
        ends = {done[k]: row.end for k, row in enumerate(schedule.tasks)}
        dep = dict(state["dep"])
        bound = state["bound"]
        for k, (o, pre) in enumerate(round_["bounds"]):
            part = results[round_["first"] + 1 + k]
            floor = max(part.bound or 0.0, self._longest(state, pre))
            if o is None:
                bound = max(bound, floor)
            else:
                dep[o] = floor
                bound = max(bound, floor)
        state.update(device_of=device_of, orders=orders, ends=ends, dep=dep, bound=bound,
                     absorbed=state["absorbed"] + 1)

    def _longest(self, state: dict, pre: list[int]) -> float:
        """The fallback bound: the longest path of least durations from the releases."""
        problem: Problem = state["problem"]
        inside = set(pre)
        head: dict[int, float] = {}
        for i in problem.topological_order:
            if i in inside:
                head[i] = max([self._release(state, i)] + [head[p] + problem.min_duration[p]
                                                           for p, _ in problem.preds[i] if p in inside])
        return max((head[i] + problem.min_duration[i] for i in pre), default=0.0)

    def invert(self, results, inverse):
        state = dict(inverse.payload)
        problem: Problem = state["problem"]
        if state["absorbed"] < len(state["rounds"]):
            self._absorb(state, results)
        if state["failed"] is not None or len(state["device_of"]) < len(problem.tasks):
            return Result.nothing(self.name, problem.name, Termination.FINISHED,
                                  message=state["failed"] or "not every module was solved")
        device_of = [state["device_of"][i] for i in range(len(problem.tasks))]
        schedule = stitch(problem, device_of, state["orders"], self.name)
        bound = min(max(state["bound"], load_bound(problem)), schedule.makespan) if self.options.bound else None
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                      bound=bound if bound is None or math.isfinite(bound) else None)



def _fresh(problem: Problem, name: str) -> str:
    while name in problem.task_index:
        name += "'"
    return name
