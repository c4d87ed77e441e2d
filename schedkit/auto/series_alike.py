"""Modules alike in ``auto``'s series search: proven once per class, schedules carried over,
relaxations shared.

The modules of a chain (:mod:`schedkit.auto.series`) often repeat one shape (an Inception
network's modules, :mod:`schedkit.auto.alike`). The least part of a class bounds each member,
so one solve or one relaxation stands for all of them (:func:`class_pass`,
:func:`relax_alike`), and a schedule found for one member with its entry on some device is
one for another with its entry there too (:func:`carry`).
"""

from __future__ import annotations

import time

from schedkit.auto.alike import carried, least_part
from schedkit.auto.part_bound import part_floor
from schedkit.auto.series_chain import Module, raise_pairs, solved_bound
from schedkit.errors import SchedkitError
from schedkit.problem import Problem
from schedkit.problem.series_cuts import TWIN
from schedkit.reductions.subproblem import module_part
from schedkit.schedule import Quality, Schedule
from schedkit.timing import TimingRules

__all__ = ["class_pass", "carry", "relax_alike", "kinds", "CLASS_SHARE"]

#: The share of the time left for the solves of modules alike (:func:`class_pass`): the
#: rest goes to the chain pass, which solves every module once for a schedule.
CLASS_SHARE = 0.4


def kinds(classes: list) -> dict[int, tuple[int, dict[int, int]]]:
    """Each module's class (its index in ``classes``) and the map of the class's first
    member's tasks to its own."""
    return {t: (k, to) for k, members in enumerate(classes) for t, to in members}


def class_pass(problem: Problem, chain: list[Module], classes: list, solve, deadline: float,
               blocks: list | None, least_seconds: float) -> int:
    """Modules alike (:mod:`schedkit.auto.alike`) solved once, both ends free, on their class's
    least part, whose bound bounds every member and all its pairs: classes of two modules or
    more, the most tasks first, in :data:`CLASS_SHARE` of the time left, each a share by its
    tasks (Inception-v4's classes of 4, 7 and 3 modules of 23, 32 and 34 tasks: proven in
    0.8, 2.5-5 and 7.7-11 s). Returns the number of solves."""
    entries = [m.entry if m.twin else None for m in chain]
    classes = sorted((c for c in classes if len(c) > 1 and len(chain[c[0][0]].tasks) > 1),
                     key=lambda c: -len(c) * len(chain[c[0][0]].tasks))
    weights = [len(c) * len(chain[c[0][0]].tasks) for c in classes]
    end = time.perf_counter() + CLASS_SHARE * (deadline - time.perf_counter())
    solves = 0
    for k, members in enumerate(classes):
        left = end - time.perf_counter()
        if left < least_seconds:
            break
        part = least_part(problem, [m.tasks for m in chain], entries, members)
        try:
            result = solve(part, max(least_seconds, left * weights[k] / sum(weights[k:])))
        except SchedkitError:
            continue
        solves += 1
        if result.quality is not Quality.INFEASIBLE:
            bound = max(part_floor(part, blocks), solved_bound(result) or 0.0)
            for t, _ in members:
                chain[t].free = max(chain[t].free, bound)
                raise_pairs(problem, chain[t], None, bound)
    return solves


def carry(problem: Problem, chain: list[Module], kind: dict, t: int, ask, source: int, schedule: Schedule,
           rules: TimingRules) -> Schedule | None:
    """The schedule of module ``source``'s part with the ends of ``ask`` pinned, carried onto
    module ``t``'s (a module alike it)."""
    first_to_t, first_to_source = kind[t][1], kind[source][1]
    to_source = {first_to_t[f]: s for f, s in first_to_source.items()}
    module, other = chain[t], chain[source]
    u = ask[1] if ask is not None else None
    try:
        part = module_part(problem, module.tasks, f"{problem.name}/series{t + 1}", module.entry, module.exit,
                           module.twin, u, None)
    except SchedkitError:
        return None
    twins = (problem.tasks[other.entry] + TWIN, problem.tasks[module.entry] + TWIN) if module.twin else None
    return carried(problem, part, schedule, to_source, twins, rules)


def relax_alike(problem: Problem, chain: list[Module], classes: list, t: int, ask, blocks: list | None,
                relax, seconds: float, own) -> list[tuple[int, float]]:
    """The placement relaxation of module ``t``'s part with the ends of ``ask`` pinned, as
    ``[(module, bound)]``. Where ``t`` has modules alike, one relaxation of the class's least
    part, pinned alike, bounds every member whose pinned ends are the tasks that ``t``'s are
    (an automorphism may map an entry elsewhere); else ``own()``, ``t``'s own relaxation."""
    kind = kinds(classes)
    members = classes[kind[t][0]] if t in kind else []
    if len(members) < 2:
        return [(t, own())]
    inverse = {mine: f for f, mine in kind[t][1].items()}
    module, first = chain[t], chain[members[0][0]]
    side, device = ask
    ends = {"entry": (device, None), "exit": (None, device), "pair": device}[side]
    pins, roles = {}, []
    if ends[0] is not None:
        key = first.entry if module.twin else inverse[module.entry]
        pins[key] = [ends[0]]
        if not module.twin:
            roles.append(("entry", key))
    if ends[1] is not None:
        key = inverse[module.exit]
        pins[key] = [d for d in pins.get(key, [ends[1]]) if d == ends[1]]
        roles.append(("exit", key))
    entries = [m.entry if m.twin else None for m in chain]
    try:
        part = least_part(problem, [m.tasks for m in chain], entries, members, pins)
    except SchedkitError:   # (the pins leave an edge without a linked pair)
        return [(t, own())]
    bound = relax(part, part_floor(part, blocks), seconds)
    return [(m, bound) for m, to in members if all(to[key] == getattr(chain[m], role) for role, key in roles)]
