"""The chain of modules of :mod:`schedkit.auto.series`: device pairs, the dynamic programs over
them, and the schedules stitched from the modules' own.

A module's *pair* is the device of its entry (the task after the cut before it, or the twin
that stands for the articulation task there) and of its exit (the cut's tail after it).
:func:`program` finds the chain of pairs whose cut devices agree (an articulation task is on
one device; a bridge's transfer is paid between the two) of least total for any value of the
pairs: their bounds (a bound of the whole problem) or their schedules' makespans.
:func:`learn` records what a solve says of a module's pairs, :func:`next_ask` picks the next
solve of an open pair. :func:`schedules` stitches the best chain of solved pairs, shifted one
after the other and re-timed exactly (:func:`~schedkit.timing.retime`), and a chain that lets
the devices disagree at a cut (:func:`_joined`).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> module = Module(tasks=[4, 5], entry=4, twin=False, exit=None)
>>> pairs_of(p, module)
[(0, None), (1, None)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from schedkit.errors import SchedkitError
from schedkit.numerics import closed
from schedkit.problem import Problem
from schedkit.problem.series_cuts import TWIN
from schedkit.reductions.subproblem import orders_by_start, stitch
from schedkit.schedule import Quality, Result, Schedule, TaskRun, Transfer
from schedkit.timing import TimingRules, retime

__all__ = ["Module", "pair_of", "pairs_of", "program", "schedules", "learn", "raise_pairs", "covers", "least",
           "is_closed", "next_ask", "solved_bound"]


@dataclass
class Module:
    """A module between two cuts, and what the solves of its parts found."""

    tasks: list[int]
    entry: int | None           # the task whose device is the pair's first (the cut's head)
    twin: bool                  # the entry is the articulation task of the module before
    exit: int | None            # the cut's tail (the pair's second device)
    free: float = 0.0           # the free solve's bound: every pair's bound until one says more
    low: dict = field(default_factory=dict)     # (u, v) -> its best bound
    pairs: dict = field(default_factory=dict)   # (u, v) -> (the best makespan found, its schedule)
    asked: set = field(default_factory=set)     # the solves made
    relaxed: set = field(default_factory=set)   # the asks whose placement relaxation counts in ``low``


def pair_of(problem: Problem, module: Module, schedule: Schedule, own: bool = False) -> tuple:
    """The (entry device, exit device) of a module's schedule (``own``: a schedule of the
    whole problem, where the articulation task stands for its twin)."""
    device = {r.task: problem.device_index[r.device] for r in schedule.tasks}
    twin = TWIN if module.twin and not own else ""
    u = None if module.entry is None else device[problem.tasks[module.entry] + twin]
    v = None if module.exit is None else device[problem.tasks[module.exit]]
    return u, v


def pairs_of(problem: Problem, module: Module) -> list[tuple]:
    """Every (entry device, exit device) of ``module`` (``None`` for an end it lacks)."""
    us = [None] if module.entry is None else list(problem.allowed[module.entry])
    vs = [None] if module.exit is None else list(problem.allowed[module.exit])
    same = module.entry is not None and not module.twin and module.entry == module.exit
    return [(u, v) for u in us for v in vs if not same or u == v]


def _bridge(problem: Problem, chain: list[Module], t: int, before, u) -> float:
    """Time from the end of module ``t - 1`` (its exit on ``before``) to the start of module ``t``
    (its entry on ``u``): 0 across an articulation task (the twin is on its device), the
    bridge's transfer across a bridge."""
    module = chain[t]
    if t == 0:
        return 0.0
    if module.twin:
        return 0.0 if before == u else math.inf
    a, b = chain[t - 1].exit, module.entry
    size = next(s for j, s in problem.succs[a] if j == b)
    if before == u:
        return 0.0
    return problem.comm_time(size, before, u) if problem.pair_allowed(size, before, u) else math.inf


def program(problem: Problem, chain: list[Module], value) -> tuple[tuple[float, int], list]:
    """The least total of ``value(module, pair)`` (a time and a count, compared in that order;
    the bridges add to the time) over chains of pairs whose cut devices agree, and its pairs."""
    best: dict = {None: ((0.0, 0), [])}
    for t, module in enumerate(chain):
        step: dict = {}
        for u, v in pairs_of(problem, module):
            worth, count = value(module, (u, v))
            for before, ((total, n), path) in best.items():
                here = (total + _bridge(problem, chain, t, before, u) + worth, n + count)
                if here < step.get(v, ((math.inf, 0),))[0]:
                    step[v] = (here, path + [(u, v)])
        best = step
    if not best:
        return (math.inf, 0), []
    return min(best.values(), key=lambda x: x[0])


def schedules(problem: Problem, chain: list[Module], rules: TimingRules, start: Schedule | None) -> list[Schedule]:
    """The best chain of the pairs' schedules, and the best chain that lets the devices
    disagree at a cut (see :func:`_joined`)."""
    found = []
    (value, _), picked = program(problem, chain, lambda m, pair: (m.pairs[pair][0] if pair in m.pairs
                                                                    else math.inf, 0))
    if math.isfinite(value):
        found.append(_stitch(problem, chain, picked, rules))
    if start is not None or all(module.pairs for module in chain):
        found.append(_joined(problem, chain, rules, start))
    return [s for s in found if s is not None]


def _joined(problem: Problem, chain: list[Module], rules: TimingRules, start: Schedule | None) -> Schedule | None:
    """The pairs' schedules chained where the device of the task between two modules may
    differ: the data of that task then travel from the one to the other (counted, for the
    choice, as its transfers one after the other through one port), the schedules' devices
    and orders kept, all times the earliest on the whole problem. Where few pairs are solved
    (MOIRAI's GoogLeNet: each module's best ends on d3, the next starts best on d0), this is
    the chain there is. ``start``'s devices and orders of each module are one more choice
    (worth its window there), the only one for a module no solve reached."""
    spans = _spans(problem, chain, start) if start is not None else None
    best: dict = {None: (0.0, [])}
    for t, module in enumerate(chain):
        step: dict = {}
        options = [(pair, worth, schedule) for pair, (worth, schedule) in module.pairs.items()]
        if start is not None:
            options.append((pair_of(problem, module, start, own=True), spans[t], start))
        for (u, v), worth, schedule in options:
            for before, (total, path) in best.items():
                here = total + _travel(problem, chain, t, before, u) + worth
                if here < step.get(v, (math.inf,))[0]:
                    step[v] = (here, path + [schedule])
        best = step
    if not best:
        return None
    picked = min(best.values(), key=lambda x: x[0])[1]
    device_of = [0] * len(problem.tasks)
    orders: list[list[int]] = [[] for _ in problem.devices]
    for module, schedule in zip(chain, picked):
        mine = {problem.tasks[i]: i for i in module.tasks}
        for r in schedule.tasks:
            if r.task in mine:
                device_of[mine[r.task]] = problem.device_index[r.device]
        for d, order in enumerate(orders_by_start(problem, schedule, mine)):
            orders[d] += order
    try:
        return stitch(problem, device_of, orders, "auto", rules)
    except SchedkitError:
        return None


def _spans(problem: Problem, chain: list[Module], schedule: Schedule) -> list[float]:
    """Each module's window in ``schedule`` of the whole problem: from the end of the exit
    before it (0 for the first) to the end of its own exit (the makespan for the last)."""
    end = {r.task: r.end for r in schedule.tasks}
    ends = [end[problem.tasks[m.exit]] if m.exit is not None else schedule.makespan for m in chain]
    return [e - (ends[t - 1] if t else 0.0) for t, e in enumerate(ends)]


def _travel(problem: Problem, chain: list[Module], t: int, before, u) -> float:
    """:func:`_bridge`, where an articulation task on ``before`` sends its data to ``u``."""
    module = chain[t]
    if t == 0 or not module.twin or before == u:
        return _bridge(problem, chain, t, before, u)
    x = module.entry
    times = [problem.comm_time(size, before, u) if problem.pair_allowed(size, before, u) else math.inf
             for j, size in problem.succs[x] if j in module.tasks]
    return sum(times)


def _stitch(problem: Problem, chain: list[Module], picked: list, rules: TimingRules) -> Schedule | None:
    """The chosen pairs' schedules one after the other, re-timed on the whole problem."""
    tasks, transfers, offset = [], [], 0.0
    for t, (module, pair) in enumerate(zip(chain, picked)):
        schedule = module.pairs[pair][1]
        if t > 0 and not module.twin:     # (the bridge's transfer, from where the last module ended)
            a, b = chain[t - 1].exit, module.entry
            length = _bridge(problem, chain, t, picked[t - 1][1], pair[0])
            if length > 0:
                transfers.append(Transfer(src=problem.tasks[a], dst=problem.tasks[b], to=problem.devices[pair[0]],
                                          start=offset, end=offset + length,
                                          **{"from": problem.devices[picked[t - 1][1]]}))
            offset += length
        twin = None if not module.twin else problem.tasks[module.entry] + TWIN
        for r in schedule.tasks:
            if r.task != twin:
                tasks.append(TaskRun(task=r.task, device=r.device, start=r.start + offset, end=r.end + offset))
        for r in schedule.transfers:
            transfers.append(r.model_copy(update={"src": problem.tasks[module.entry] if r.src == twin else r.src,
                                                  "start": r.start + offset, "end": r.end + offset}))
        ends = [r.end for r in schedule.tasks] + [r.end for r in schedule.transfers]
        offset += max(ends, default=0.0)
    joined = Schedule(problem=problem.name, method="auto", status="heuristic", tasks=tasks, transfers=transfers)
    try:
        return retime(problem, joined, "auto", rules)
    except SchedkitError:
        return None


def learn(problem: Problem, module: Module, result: Result | None, ask, floor: float) -> None:
    """What a solve (``ask``: ``None`` both ends free, ``("entry", u)``, ``("exit", v)`` or
    ``("pair", (u, v))``) says of the module's pairs: a bound for every pair it covers (the
    solver's or the part's ``floor``, the larger), and its schedule's own pair's value."""
    module.asked.add(ask)
    bound = floor
    if result is not None:
        bound = math.inf if result.quality is Quality.INFEASIBLE else max(floor, solved_bound(result) or 0.0)
    if ask is None:
        module.free = bound
    for pair in pairs_of(problem, module):
        if covers(ask, pair):
            module.low[pair] = max(module.low.get(pair, module.free), bound)
    if result is not None and result.schedule is not None:
        pair = pair_of(problem, module, result.schedule)
        if result.objective < module.pairs.get(pair, (math.inf,))[0]:
            module.pairs[pair] = (result.objective, result.schedule)
        if result.quality is Quality.OPTIMAL:   # (the least over what it covers: exact for its own pair)
            module.low[pair] = max(module.low.get(pair, module.free), result.objective)


def raise_pairs(problem: Problem, module: Module, ask, bound: float) -> None:
    """``bound`` for every pair ``ask`` covers (the ask is not marked as solved)."""
    for pair in pairs_of(problem, module):
        if covers(ask, pair):
            module.low[pair] = max(module.low.get(pair, module.free), bound)


def covers(ask, pair) -> bool:
    """Whether a solve of ``ask`` bounds ``pair``."""
    if ask is None:
        return True
    side, device = ask
    return {"entry": pair[0] == device, "exit": pair[1] == device, "pair": pair == device}[side]


def least(module: Module, pair) -> tuple[float, int]:
    """A pair's bound, and 1 when it is open (ties go to closed pairs)."""
    return module.low.get(pair, module.free), 0 if is_closed(module, pair) else 1


def is_closed(module: Module, pair) -> bool:
    """Whether ``pair``'s best schedule meets its bound."""
    return pair in module.pairs and closed(module.pairs[pair][0], module.low.get(pair, module.free))


def next_ask(module: Module, pair):
    """The next solve for an open ``pair``: one end pinned where the other is where the free
    optimum put it (it may close many pairs at once), else both; ``None``: asked already."""
    best = min(module.pairs.items(), key=lambda item: item[1][0], default=None)
    u, v = pair
    for ask in ((("exit", v) if best is not None and best[0][0] == u and v is not None else None),
                (("entry", u) if best is not None and best[0][1] == v and u is not None else None),
                ("pair", pair)):
        if ask is not None and ask not in module.asked:
            return ask
    return None


def solved_bound(result: Result) -> float | None:
    """What a solve proved: its optimum, else its bound."""
    return result.objective if result.quality is Quality.OPTIMAL else result.bound
