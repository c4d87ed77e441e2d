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

The tree costs one max-flow per task (about 11,000 s on 10,000 tasks). When it would take
more than ``tree_seconds`` (or half the time limit left), the modules are **bands** of a
topological order instead, of about ``module_tasks`` tasks each, cut where fewest edges
cross (:mod:`~schedkit.decompositions.kedge_bands`: linear time, a chain of modules). Under
a time limit, the bands not yet solved are joined into as many rounds as the time left
allows (:data:`ROUND_SECONDS`); when even one round would not end in time, the method returns
heft's schedule of the whole problem, saying why (:meth:`Kedge.out_of_time`).

The modules are solved **in topological order**, one round each: module ``t`` is a part
of its own in which every device busy with earlier modules is taken by a stand-in task
that lasts until the device is free, and every channel into the module leaves that
stand-in, so the module sees when its inputs can arrive on each device. Its schedule is
appended to the earlier ones (each device runs the earlier modules first, the module's
times left-shifted after them: the earlier modules' times do not change); memory used by
earlier modules is taken off the devices' capacities, and collocation groups keep the
device an earlier module chose.

**Lower bound**: DiviML's recursive bound through the channels
(:mod:`~schedkit.decompositions.kedge_bound`), its bound parts solved beside the module's
own part in each round; ``invert`` reports the largest as the schedule's bound
(``exactness = "relaxation"``), or the devices' load bound when that is larger
(:func:`~schedkit.problem.bounds.load_bound`: where modules overlap in time, as with weakly dependent channels,
the paths through the channels say little and the load says more).

Examples
--------
>>> from schedkit import Problem, solve
>>> from schedkit.generators import rwnn
>>> p = Problem.from_dict(rwnn(modules=3, nodes=5, channels=2, dependency="sdep", seed=3))
>>> s = solve(p, "kedge", inner="milp", executor="serial")
>>> s.status, s.bound <= s.makespan, len(kedge_modules(p, 3))
('feasible', True, 3)
>>> banded = solve(p, "kedge", inner="heft", tree_seconds=0, module_tasks=9, executor="serial")
>>> banded.bound <= banded.makespan, len(banded.tasks)
(True, 27)
"""

from __future__ import annotations

import math
import time

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from schedkit.reductions import Split, register_decomposition
from schedkit.reductions.budget import GRACE, finish_seconds, slowdown
from schedkit.reductions.reduction import DEFAULT_BLOCKS
from schedkit.reductions.subproblem import edge_row, heavier, remaining_capacities, spec_data, task_row
from schedkit.decompositions.kedge_bands import band_modules
from schedkit.decompositions.kedge_bound import bound_part, fresh, heads, whole_floor
from schedkit.decompositions.kedge_modules import choose_k, gomory_hu_seconds, kedge_modules
from schedkit.decompositions.kedge_parts import edge_at, edges_into, plain_part
from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.problem.bounds import load_bound
from schedkit.problem.edge_table import edge_count
from schedkit.schedule import Quality, Result, Termination
from schedkit.timing import to_schedule
from schedkit.timing.fixed_order import start_order
from schedkit.timing.resources import arrival

__all__ = ["Kedge", "KedgeOptions", "kedge_modules", "choose_k", "gomory_hu_seconds", "band_modules"]

#: A round of bands needs about this many seconds, plus this many per task and edge of its
#: module (measured on a 100,000-task layered graph of 223,000 edges, 2 shared cores: rounds
#: of 5,000 tasks, milp's module and bound parts side by side, took 0.5 s; given 0.35 s, a
#: third of the parts came back without a schedule). Under a time limit, the bands left are
#: joined into as many rounds as the time left allows (:meth:`Kedge._regroup`); a graph whose
#: bands need more than the time left gets heft's schedule of the whole problem instead.
ROUND_SECONDS, ROUND_SECONDS_PER_ITEM = 0.2, 3e-5

#: Seconds per task, on bands, that ``invert`` keeps back from the parts: heft for a part
#: the time left without a schedule (3.7 s on 100,000 tasks) and the schedule of the whole.
INVERT_SECONDS_PER_TASK = 4e-5


class KedgeOptions(BaseModel):
    """Options of ``kedge``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    k: int | None = Field(None, ge=1)
    """Edge connectivity of a module (DiviML: one more than the channels between modules);
    by default the smallest k that gives balanced modules. On bands: fewer than k edges
    cross every cut."""
    max_share: float = Field(0.3, gt=0, le=1)
    """Modules are balanced when none holds more than this share of the tasks."""
    min_tasks: int = Field(3, ge=1)
    """Components with fewer tasks join a neighbouring module."""
    bound: bool = True
    """Compute DiviML's recursive lower bound (one more part per module output; on bands,
    one per module)."""
    lookahead: int = Field(0, ge=0)
    """Modules after each one solved with it (a rolling horizon): only the module's own
    devices and orders are kept, but they were chosen knowing where its outputs go and
    what memory the next modules need."""
    tree_seconds: float = Field(60.0, ge=0)
    """The Gomory-Hu tree is computed when it takes about this many seconds at most (and
    at most half the time limit left); else the modules are bands of a topological order."""
    module_tasks: int = Field(5000, ge=1)
    """Tasks per module on bands (parts the inner method can answer in a round's share)."""


@register_decomposition("kedge")
class Kedge(Split):
    """DiviML's multi-channel split: k-edge-connected modules solved in topological order,
    with DiviML's recursive lower bound."""

    exactness = "relaxation"
    optional_parts = True  # a bound part may fail: a weaker bound is used
    supports = DEFAULT_BLOCKS
    in_series = True
    Options = KedgeOptions

    def _modules(self, problem: Problem) -> tuple[list[list[int]], bool]:
        """The modules, and whether they are bands (the tree would take too long)."""
        o = self.options
        cached = getattr(self, "_found", None)
        if cached is not None and cached[0] is problem:  # (refusal, then apply: one search)
            return cached[1], cached[2]
        most = o.tree_seconds
        if self.deadline is not None:
            most = min(most, (self.deadline - time.perf_counter()) / 2)
        banded = gomory_hu_seconds(problem) > most
        if banded:
            modules = band_modules(problem, o.module_tasks, o.max_share, o.k)
        elif o.k is not None:
            modules = kedge_modules(problem, o.k, o.min_tasks)
        else:
            modules = choose_k(problem, o.max_share, o.min_tasks)[1]
        self._found = (problem, modules, banded)
        return modules, banded

    def refusal(self, problem, blocks=None):
        why = super().refusal(problem, blocks)
        if why is None and len(self._modules(problem)[0]) < 2:
            if self.options.k is not None:
                why = f"k={self.options.k} does not split the task graph into two modules or more"
            else:
                why = "no k splits the task graph into two modules or more; try bridge_dp or merge"
        return why

    def preview(self, problem, blocks=None):
        """One plain problem per module, in topological order."""
        modules, _ = self._modules(problem)
        into = edges_into(problem, modules)
        return [plain_part(problem, tasks, into[t], f"{problem.name}/module{t + 1}")
                for t, tasks in enumerate(modules)]

    def apply(self, problem, blocks=None):
        modules, banded = self._modules(problem)
        position = np.empty(len(problem.tasks), dtype=np.int64)
        position[problem.topological_order] = np.arange(len(problem.tasks))
        state = {"problem": problem, "modules": modules, "banded": banded, "hurried": False,
                 "into": edges_into(problem, modules),
                 "position": position.tolist(),
                 "rounds": [], "absorbed": 0, "device_of": {}, "orders": [[] for _ in problem.devices],
                 "starts": {}, "ends": {}, "ready": {}, "dep": {}, "bound": 0.0, "failed": None}
        self._regroup(state)
        parts = self._round(state, 0)
        return parts, self.inverse(problem, state)

    def advance(self, results, inverse):
        state = dict(inverse.payload)
        self._absorb(state, results)
        t = len(state["rounds"])
        if state["failed"] is not None or t >= len(state["modules"]):
            return None
        self._regroup(state)
        parts = self._round(state, len(results))
        return parts, self.inverse(state["problem"], state)

    def round_share(self, inverse):
        """An equal share for every module not yet solved (the one just made included): a
        share by size starves the small modules, whose parts cost a solver's set-up time
        whatever their size (on MSR's Inception-v3 at 10 s, 40 of 86 parts ran out of time
        by size, 17 with equal shares)."""
        state = inverse.payload
        return 1.0 / max(1, len(state["modules"]) - len(state["rounds"]) + 1)

    def invert_seconds(self, left):
        """On bands, heft's time for the largest band (a part the limit leaves without a
        schedule is finished by heft after its round), the whole schedule's, and the
        :data:`~schedkit.reductions.budget.GRACE` a part may take past its round's end."""
        found = getattr(self, "_found", None)
        if found is None or not found[2]:
            return 0.0
        problem, modules = found[0], found[1]
        return slowdown(problem) * INVERT_SECONDS_PER_TASK * max(map(len, modules)) + GRACE

    def out_of_time(self, problem, blocks=None):
        """Why bands cannot be solved before the time limit, even as one round (``None``
        when they can, or when the modules come from the tree): the method then returns
        heft's schedule of the whole problem, when that fits in the time."""
        if self.deadline is None or not self._modules(problem)[1]:
            return None
        items = len(problem.tasks) + edge_count(problem)
        need = slowdown(problem) * (ROUND_SECONDS + ROUND_SECONDS_PER_ITEM * items)
        left = self.deadline - time.perf_counter() - finish_seconds(problem)
        if need <= left:
            return None
        return (f"its modules' rounds need about {need:.1f} s on {len(problem.tasks):,} tasks and "
                f"{edge_count(problem):,} edges, more than the {max(0.0, left):.1f} s the time limit "
                f"leaves (try merge or a larger limit)")

    def _regroup(self, state: dict) -> None:
        """On bands under a time limit, join the bands not yet solved, neighbours in
        topological order (still a chain), into as many rounds as the time left allows, and
        make no more bound parts (the bound keeps the longest paths and the load): a round
        given less than it needs leaves its parts to heft, one after the other, past the
        limit."""
        if not state["banded"] or self.deadline is None:
            return
        problem, t = state["problem"], len(state["rounds"])
        rest = state["modules"][t:]
        tasks = sum(map(len, rest))
        items = tasks + sum(map(len, state["into"][t:]))
        left = (self.deadline - time.perf_counter() - finish_seconds(problem)) / slowdown(problem)
        count = max(1, min(len(rest), int((left - ROUND_SECONDS_PER_ITEM * items) // ROUND_SECONDS)))
        if count == len(rest):
            return
        state["hurried"] = True  # (from now on: no bound part, whose time the modules need)
        sizes = np.cumsum([len(m) for m in rest])
        ends = np.searchsorted(sizes, np.arange(1, count + 1) * tasks / count, side="left")
        ends = np.unique(np.minimum(ends, len(rest) - 1)).tolist()
        joined, into, begin = [], [], 0
        for end in ends:
            joined.append(sorted(i for m in rest[begin:end + 1] for i in m))
            into.append(sorted(k for edges in state["into"][t + begin:t + end + 1] for k in edges))
            begin = end + 1
        state["modules"] = state["modules"][:t] + joined
        state["into"] = state["into"][:t] + into

    # -------------------------------------------------------------- one round per module
    def _round(self, state: dict, first: int) -> list[Problem]:
        problem: Problem = state["problem"]
        t = len(state["rounds"])
        modules = state["modules"]
        tasks = modules[t]
        ahead = [i for later in modules[t + 1:t + 1 + self.options.lookahead] for i in later]
        edges = sorted(k for s in range(t, min(len(modules), t + 1 + self.options.lookahead))
                       for k in state["into"][s])
        parts = [self._module_part(state, t, tasks + ahead, edges)]
        bounds = []
        if state["banded"]:
            if self.options.bound and not state["hurried"]:
                parts.append(plain_part(problem, tasks, state["into"][t], f"{problem.name}/module{t + 1}/bound:all"))
                bounds.append((None, tasks))
        elif self.options.bound:
            inside = set(tasks)
            outputs = [i for i in tasks if any(j not in inside for j, _ in problem.succs[i])]
            sinks = any(not problem.succs[i] for i in tasks)
            for o in outputs + ([None] if sinks else []):
                pre = tasks if o is None else [i for i in tasks if i == o or (problem.descendants[i] >> o) & 1]
                label = "all" if o is None else problem.tasks[o]
                parts.append(bound_part(problem, state["dep"], pre, f"{problem.name}/module{t + 1}/bound:{label}"))
                bounds.append((o, pre))
        state["rounds"] = state["rounds"] + [{"first": first, "bounds": bounds}]
        return parts

    def _module_part(self, state: dict, t: int, tasks: list[int], edges: list[int]) -> Problem:
        """``tasks`` after the modules placed so far; ``edges``: the edges into them, in file order."""
        problem: Problem = state["problem"]
        device_of, ready = state["device_of"], state["ready"]
        stand_ins, inner, channels = [], [], {}
        name_of = {d: fresh(problem, f"~busy:{problem.devices[d]}") for d in ready}
        for d, until in sorted(ready.items()):
            stand_ins.append({"name": name_of[d], "durations": {problem.devices[d]: until}})
        inside = set(tasks)
        for k in edges:
            i, j, size = edge_at(problem, k)
            if i in inside:
                inner.append(edge_row(problem, problem.tasks[i], problem.tasks[j], size))
            else:
                key = (name_of[device_of[i]], problem.tasks[j])
                channels[key] = heavier(problem, channels.get(key, 0.0), size)
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
                "edges": inner + [edge_row(problem, a, b, s) for (a, b), s in sorted(channels.items())]}
        try:
            return Problem.from_dict(data)
        except ProblemError as exc:
            raise ProblemError(f"kedge: module {t + 1} cannot be placed after the modules before it: "
                               f"{exc}") from None

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
        device_of, starts, ends, ready = (dict(state[key]) for key in ("device_of", "starts", "ends", "ready"))
        orders = [list(order) for order in state["orders"]]
        own = {problem.tasks[i]: i for i in tasks}  # (not the lookahead's tasks: a later round places them)
        rows = {own[r.task]: r for r in result.schedule.tasks if r.task in own}
        placed = {i: problem.device_index[r.device] for i, r in rows.items()}
        device_of.update(placed)
        # The module after the earlier ones on every device, left-shifted (fixed_order_times,
        # module by module: nothing of an earlier module waits for a later one).
        free = {d: ends[order[-1]] for d, order in enumerate(orders) if order}
        for i in start_order(problem, placed, {i: r.start for i, r in rows.items()}, among=rows):
            d = device_of[i]
            length = problem.durations[i][d]
            begin = free.get(d, 0.0) if length > 0 else 0.0  # (no time held: in no device order)
            for p, size in problem.preds[i]:
                begin = max(begin, arrival(problem, ends[p], size, device_of[p], d))
            starts[i], ends[i] = begin, begin + length
            ready[d] = max(ready.get(d, 0.0), ends[i])
            if length > 0:
                orders[d].append(i)
                free[d] = ends[i]
        dep = dict(state["dep"])
        bound = state["bound"]
        bounds = results[round_["first"] + 1:round_["first"] + 1 + len(round_["bounds"])]
        if state["banded"]:  # (dep: the longest paths; the bound part: the whole module)
            head = heads(problem, state["dep"], sorted(tasks, key=state["position"].__getitem__))
            outputs = [i for i in tasks if any(j not in device_of for j, _ in problem.succs[i])]
            dep.update({o: head[o] + problem.min_duration[o] for o in outputs})
            bound = max([bound, whole_floor(problem, head, None)] + [whole_floor(problem, head, part.bound)
                                                                     for part in bounds if part.bound is not None])
        else:
            for (o, pre), part in zip(round_["bounds"], bounds):
                inside = set(pre)
                floor = max(part.bound or 0.0, whole_floor(problem, heads(
                    problem, state["dep"], [i for i in problem.topological_order if i in inside]), None))
                if o is not None:
                    dep[o] = floor
                bound = max(bound, floor)
        state.update(device_of=device_of, orders=orders, starts=starts, ends=ends, ready=ready, dep=dep,
                     bound=bound, absorbed=state["absorbed"] + 1)

    def invert(self, results, inverse):
        state = dict(inverse.payload)
        problem: Problem = state["problem"]
        if state["absorbed"] < len(state["rounds"]):
            self._absorb(state, results)
        if state["failed"] is not None or len(state["device_of"]) < len(problem.tasks):
            return Result.nothing(self.name, problem.name, Termination.FINISHED,
                                  message=state["failed"] or "not every module was solved")
        n = len(problem.tasks)
        schedule = to_schedule(problem, [state["device_of"][i] for i in range(n)],
                               [state["starts"][i] for i in range(n)], self.name)
        bound = min(max(state["bound"], load_bound(problem)), schedule.makespan) if self.options.bound else None
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                      bound=bound if bound is None or math.isfinite(bound) else None)

