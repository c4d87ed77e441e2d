"""A chain of modules solved exactly one module at a time: ``auto``'s bound (and schedule) where ``bridge_dp`` cannot go.

Where the task graph narrows to one task or one edge that every path crosses
(:func:`~schedkit.problem.series_cuts.chain_cuts`), the modules between the cuts run one
after the other in every schedule: a module's tasks follow its entry and precede its exit, and
so do its transfers (a transfer ends before its destination starts and starts after its source
ends). Transfers that wait for channels or ports (``channels``, ``congestion``) therefore never
meet the transfers of another module, and the makespan is the sum of the modules' windows
(plus the transfer of each bridge). ``bridge_dp`` solves every (entry device, exit device)
pair of every module; with transfers as tasks it refuses the formulation (its stitching times
transfers as delays), and on MOIRAI's GoogLeNet (9 modules of 14 tasks, 4 devices) its 144
pairs take minutes. :func:`series_search` solves far fewer:

1. every module once with both ends **free** (the entry, or its twin for an articulation
   task, may sit on any device it allows). Its optimum is the least window over every
   pair: the sum of these bounds is a lower bound of the whole problem, and its schedule
   is the exact answer for its own pair;
2. a dynamic program over the cut devices (:func:`~schedkit.auto.series_chain.program`),
   each pair valued by the best bound known, picks the chain of pairs of least total, ties
   to the pairs already solved; each open pair of that chain is solved again with one end
   pinned where the other end is the free optimum's (one solve bounds every pair with that
   end), else both, and the program runs again. It stops when the chain's pairs are closed
   (bound = value: the total is the optimum, proven), when they were all asked already, or
   at the deadline. Its least total is a lower bound at every round. A part that gets no
   time still has :func:`~schedkit.problem.bounds.split_bound`, and every solved part is
   bounded by it too.

Modules of more than :data:`MAX_MODULE_TASKS` tasks (up to :data:`MAX_CHAIN_TASKS`) take
too long to prove free: each is bounded by its placement relaxation
(:mod:`schedkit.auto.relaxation`); modules alike (an Inception network's repeated modules,
:mod:`schedkit.auto.alike`) are proven free once per class, on the least part, which bounds
every member (:func:`~schedkit.auto.series_alike.class_pass`); then each is solved once in
chain order with its entry pinned where the module before it ended (:func:`_chain_pass`), which gives a chain of agreeing
pairs; the program's rounds follow. In every round, a pair the program asks is first bounded
by its part's relaxation (a tenth of a solve), and solved only when the program still asks
for it.

The schedules (:func:`~schedkit.auto.series_chain.schedules`): the best chain of solved
pairs, each module shifted to where the one before it ends and re-timed exactly on the whole
problem under the formulation's timing rules; and a chain that lets the devices at a cut
disagree (the data then travel), the incumbent's own modules among the choices. The caller
checks them like every phase's.

Measured on MOIRAI's GoogLeNet under ``-f moirai`` (2 cores shared by eight sessions, 60 s
for ``auto``): the series bound 1.2278 where the whole model's was 0.913 (best schedule about
1.27-1.36); with the relaxations first, 1.257-1.268 (four sessions). On Inception-v4 (modules
of up to 35 tasks): bound 6.85 -> 8.53-8.55, schedule 11.9 -> 10.2-11.0.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.methods import METHODS
>>> from schedkit.semantics import get_formulation
>>> p = Problem.load("examples/tiny.yaml")
>>> rules = get_formulation("moirai").timing_rules(p)
>>> milp = lambda part, seconds: METHODS.get("milp")(formulation="moirai", time_limit=seconds).result(part)
>>> found = series_search(p, milp, 20, rules)
>>> found.proven, round(found.bound, 4), round(min(s.makespan for s in found.schedules), 4)
(True, 4.5163, 4.5163)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from schedkit.errors import SchedkitError
from schedkit.numerics import closed
from schedkit.problem import Problem
from schedkit.problem.series_cuts import chain_cuts, modules
from schedkit.auto.alike import alike
from schedkit.auto.part_bound import part_floor
from schedkit.auto.series_alike import carry, class_pass, kinds, relax_alike
from schedkit.auto.relaxation import relaxation_bound
from schedkit.auto.series_chain import (Module, is_closed, learn, least, next_ask, pair_of, program,
                                        raise_pairs, schedules)
from schedkit.reductions.subproblem import module_part
from schedkit.schedule import Result, Schedule
from schedkit.timing import TimingRules

__all__ = ["SeriesFound", "series_search", "refusal"]

#: A module's solve is given at least this many seconds (the exact race's start-up).
LEAST_SECONDS = 0.5
#: No solve when a module has more tasks, only the parts' combinatorial bounds: the exact
#: solves of the modules would take the whole budget (MOIRAI's Inception-v4 under ``-f moirai``:
#: modules of 32 tasks, 11 s each for CP-SAT to prove on two shared cores, 28 modules;
#: GoogLeNet's of 15 tasks: 3 s each).
MAX_MODULE_TASKS = 24
#: Up to this many tasks per module (more than :data:`MAX_MODULE_TASKS`), each module is
#: solved once, in chain order, for a schedule (:func:`_chain_pass`), its bound the modules'
#: relaxations: CP-SAT finds an Inception-v4 module's best window (0.645 s) in 2 s and
#: proves it in 10 s.
MAX_CHAIN_TASKS = 64
#: A module's placement relaxation stops after this many seconds with the bound it proved
#: (Inception-v4's modules of 33 tasks: 0.1-0.5 s each, free or pinned, on 2 shared cores).
RELAX_SECONDS = 2.0


def refusal(blocks: list, rules: TimingRules) -> str | None:
    """Why the series search cannot bound a formulation of ``blocks`` (timed by ``rules``) by
    its parts, in one line, or ``None``: where the formulation does not order the edges the
    modules need not run one after the other; and a block that may ask more of a part than of
    the whole problem (:attr:`Block.holds_on_parts <schedkit.blocks.Block>` false) would make a
    part's optimum exceed its share of the whole one. Either way the sum would be no bound.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.semantics import get_formulation
    >>> f = get_formulation("moirai")
    >>> refusal(f.blocks, f.timing_rules(Problem.load("examples/tiny.yaml"))) is None
    True
    """
    if not rules.ordered_edges:
        return ("the formulation does not order the edges (it has no 'precedence'): "
                "the modules need not run one after the other")
    for block in blocks:
        if not block.holds_on_parts:
            return (f"block '{block.kind}' may ask more of a part of the tasks than of the whole "
                    "problem (it does not set holds_on_parts): its parts' bounds would not add up")
    return None


@dataclass
class SeriesFound:
    """What :func:`series_search` found.

    Attributes
    ----------
    bound : float or None
        A lower bound on the makespan of every schedule of the problem (``None``: some
        module got no bound).
    schedules : list of Schedule
        Stitched schedules, not yet validated: the best chain of solved pairs, and every
        module's best schedule whatever its pair, re-timed together.
    proven : bool
        The bound equals a schedule's makespan: that schedule, when valid, is optimal.
    modules : int
        Modules of the chain.
    solves : int
        Module parts solved.
    """

    bound: float | None
    proven: bool
    modules: int
    solves: int = 0
    schedules: list = field(default_factory=list)


def series_search(problem: Problem, solve: Callable[[Problem, float], Result], seconds: float | None,
                  rules: TimingRules, start: Schedule | None = None, blocks: list | None = None) -> SeriesFound | None:
    """The chain's bound and schedule (see the module), or ``None`` when the graph has no cut.
    With a module of more than :data:`MAX_CHAIN_TASKS` tasks, nothing is solved: the bound
    is the sum of the parts' combinatorial bounds (:func:`part_floor`) and, given ``blocks``,
    relaxations, and there is no schedule.

    Parameters
    ----------
    problem : Problem
    solve : callable
        ``solve(part, seconds)``: the exact method's result on a module's part.
    seconds : float or None
        At most this long (``None``: a minute).
    rules : TimingRules
        The formulation's timing rules, for the stitched schedule.
    start : Schedule, optional
        A valid schedule (the incumbent): the modules no solve reached keep its devices and
        orders in the joined schedule.
    blocks : list of Block, optional
        The formulation's blocks, for the parts' combinatorial bounds (default: the problem's
        own semantics, transfers as delays at least); given, the parts' placement
        relaxations count too.
    """
    cuts = chain_cuts(problem)
    if not cuts:
        return None
    groups, cuts = modules(problem, cuts)
    if len(groups) < 2:
        return None
    largest = max(len(g) for g in groups)
    if largest > MAX_CHAIN_TASKS:
        solve = None
    chain = []
    for t, tasks in enumerate(groups):
        before = cuts[t - 1] if t > 0 else None
        chain.append(Module(tasks, None if before is None else before.head, bool(before and before.twin),
                             None if t == len(cuts) else cuts[t].tail))
    deadline = time.perf_counter() + (60.0 if seconds is None else seconds)
    relax = _relaxer(problem, blocks, rules, deadline)
    found = SeriesFound(None, False, len(chain))
    weights = [len(m.tasks) ** 2 for m in chain]
    took: dict[int, float] = {}     # (module -> its quickest solve: what one more costs at least)
    for t, module in enumerate(chain):
        left = deadline - time.perf_counter()
        limit = max(LEAST_SECONDS, left * weights[t] / sum(weights[t:]))
        began = time.perf_counter()
        # (no time for a solve: the part's combinatorial bound alone, which needs none; modules
        # too large to prove are bounded free by their relaxation, solved in the chain pass)
        free = solve if left > LEAST_SECONDS and largest <= MAX_MODULE_TASKS else None
        result, floor = _solve(problem, module, t, None, None, free, limit, blocks, relax)
        took[t] = time.perf_counter() - began
        found.solves += result is not None
        module.free = floor
        learn(problem, module, result, None, floor)
    # (modules alike share solves and relaxations only where they are too large to prove one by
    # one: a class's least part bounds each member less tightly than its own, MOIRAI's GoogLeNet,
    # whose modules of 14-15 tasks differ in durations, was no longer proven in 60 s)
    classes = alike(problem, [m.tasks for m in chain], [m.entry if m.twin else None for m in chain]) \
        if largest > MAX_MODULE_TASKS else []
    if solve is not None and largest > MAX_MODULE_TASKS:
        found.solves += class_pass(problem, chain, classes, solve, deadline, blocks, LEAST_SECONDS)
        found.solves += _chain_pass(problem, chain, solve, deadline, blocks, took, classes, rules)
    out_of_time = False
    while True:
        (total, _), picked = program(problem, chain, least)
        found.bound = max(found.bound or 0.0, total)
        asks = [(t, next_ask(chain[t], pair)) for t, pair in enumerate(picked) if not is_closed(chain[t], pair)]
        asks = [(t, ask) for t, ask in asks if ask is not None]
        fresh = [(t, ask) for t, ask in asks if ask not in chain[t].relaxed]
        if relax is not None and fresh and not out_of_time and solve is not None:
            # (an ask's relaxation first, a tenth of its solve: the chain then moves off pairs
            # whose relaxation already says they are dear, and fewer are solved)
            for t, ask in fresh:
                if ask in chain[t].relaxed:     # (a module alike was relaxed for it)
                    continue
                for m, bound in relax_alike(problem, chain, classes, t, ask, blocks, relax, RELAX_SECONDS,
                                            lambda: _relaxed(problem, chain[t], t, ask, blocks, relax)):
                    chain[m].relaxed.add(ask)
                    raise_pairs(problem, chain[m], ask, bound)
            continue
        if not asks or out_of_time or solve is None:
            # (the chain's pairs closed, or solved as far as their time allowed; the pinned
            # parts' relaxations alone, without solves, raised Inception-v4's 8.534 to 8.555 in 40 s)
            break
        for k, (t, (side, device)) in enumerate(asks):
            left = deadline - time.perf_counter()
            if left < max(LEAST_SECONDS, took[t]):
                out_of_time = True
                break
            began = time.perf_counter()
            result, floor = _solve(problem, chain[t], t, side, device, solve,
                                   max(LEAST_SECONDS, left / (len(asks) - k)), blocks, relax)
            took[t] = min(took[t], time.perf_counter() - began)
            found.solves += result is not None
            learn(problem, chain[t], result, (side, device), floor)
    found.schedules = schedules(problem, chain, rules, start)
    found.proven = any(closed(s.makespan, found.bound) for s in found.schedules)
    return found




def _chain_pass(problem: Problem, chain: list[Module], solve, deadline: float, blocks: list | None,
                took: dict[int, float], classes: list, rules: TimingRules) -> int:
    """Each module solved once, in chain order, its entry pinned where the module before it
    ended (its exit's device in that solve; free for the first, or after a solve that found
    nothing): a chain of pairs whose devices agree at every cut, which :func:`schedules`
    stitches. Each solve gets the module's share of the time left (weights: tasks squared);
    its bound counts for every pair with that entry. A module alike one solved already with
    its entry on the same device takes that schedule, carried over
    (:func:`~schedkit.auto.alike.carried`), instead of a solve. Returns the number of solves."""
    weights = [len(m.tasks) ** 2 for m in chain]
    kind = kinds(classes)
    solved: dict = {}   # (class, ask) -> the module solved for it and its schedule
    solves, before = 0, None
    for t, module in enumerate(chain):
        left = deadline - time.perf_counter()
        if left < LEAST_SECONDS:
            break
        ask = ("entry", before) if before is not None and module.entry is not None else None
        if (kind[t][0], ask) in solved:
            schedule = carry(problem, chain, kind, t, ask, *solved[kind[t][0], ask], rules)
            if schedule is not None:
                pair = pair_of(problem, module, schedule)
                if schedule.makespan < module.pairs.get(pair, (math.inf,))[0]:
                    module.pairs[pair] = (schedule.makespan, schedule)
                before = pair[1]
                continue
        began = time.perf_counter()
        result, floor = _solve(problem, module, t, *(ask or (None, None)), solve,
                               max(LEAST_SECONDS, left * weights[t] / sum(weights[t:])), blocks)
        took[t] = time.perf_counter() - began
        solves += 1
        learn(problem, module, result, ask, floor)
        done = result is not None and result.schedule is not None and result.schedule.tasks
        before = pair_of(problem, module, result.schedule)[1] if done else None
        if done:
            solved[kind[t][0], ask] = (t, result.schedule)
    return solves




def _relaxed(problem: Problem, module: Module, t: int, ask, blocks: list | None, relax) -> float:
    """The placement relaxation of the module's part with the ends of ``ask`` pinned."""
    side, device = ask
    return _solve(problem, module, t, side, device, None, RELAX_SECONDS, blocks, relax)[1]














def _relaxer(problem: Problem, blocks: list | None, rules: TimingRules, deadline: float):
    """``relax(part, floor, seconds)``: a part's placement relaxation
    (:func:`~schedkit.auto.relaxation.relaxation_bound`) under ``rules``, at most
    :data:`RELAX_SECONDS` and never past ``deadline``; ``None`` where it cannot bound the
    parts (no formulation given, a workload, edges not ordered)."""
    if blocks is None or problem.inputs > 1 or not rules.ordered_edges:
        return None

    def relax(part: Problem, floor: float, seconds: float) -> float:
        left = min(seconds, RELAX_SECONDS, deadline - time.perf_counter())
        return relaxation_bound(part, rules, left, floor)

    return relax




def _solve(problem: Problem, module: Module, t: int, side, device, solve, limit: float,
           blocks: list | None = None, relax=None) -> tuple[Result | None, float]:
    """The module's part solved (``solve`` None: not solved), and its :func:`part_floor`: both
    ends free (``side`` None), or its ``entry``, its ``exit`` or both (``pair``, ``device`` a
    pair) pinned. Not solved, the floor is raised by ``relax(part, floor, seconds)`` (the
    placement relaxation) where given."""
    u = device if side == "entry" else device[0] if side == "pair" else None
    v = device if side == "exit" else device[1] if side == "pair" else None
    try:
        part = module_part(problem, module.tasks, f"{problem.name}/series{t + 1}", module.entry, module.exit,
                           module.twin, u, v)
    except SchedkitError:   # (the pins leave an edge without a linked pair: no such pair)
        return None, math.inf
    floor = part_floor(part, blocks)
    if solve is None:
        return None, floor if relax is None else relax(part, floor, limit)
    try:
        return solve(part, limit), floor
    except SchedkitError:
        return None, floor


