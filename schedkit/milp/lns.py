"""MILP local search: improve a schedule by re-solving its model with most devices fixed.

Each round frees the device choice of a few tasks (a random few, the tasks running
around one moment, or tasks of two devices), fixes every other task to its current
device, and lets HiGHS re-solve the formulation for a moment from the current
schedule. The answer is read back exactly (device orders, left-shifted times) and
kept when it is shorter and satisfies every block of the formulation.

A good starting schedule matters to the exact solve twice over: HiGHS starts from it,
and the big-M constants and variable bounds shrink with its makespan. On random
40-task, 4-device instances (``benchmarks/exact.py``), a few seconds of this search
find optimal schedules that a fifty times longer annealing misses; where the root
bound is already tight, the exact solve then only has to confirm it.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.milp import Milp
>>> problem = Problem.load("examples/hetero20.yaml")
>>> built = Milp().build(problem)
>>> better = improve(built, built.warm, seconds=2)
>>> better.makespan <= built.warm.makespan
True
"""

from __future__ import annotations

import random
import time

from schedkit.milp.context import BuiltModel
from schedkit.milp.readback import read_schedule, warm_values
from schedkit.milp.solvers.highs import highs_for, set_start
from schedkit.numerics import shorter
from schedkit.schedule import Schedule
from schedkit.validate import violations

#: Tasks whose device is freed in one round, at most.
MAX_FREE = 12


def improve(built: BuiltModel, schedule: Schedule, seconds: float, *, free: int | None = None,
            round_seconds: float = 1.0, patience: int = 8, seed: int = 0) -> Schedule:
    """The best schedule found by MILP local search from ``schedule`` within ``seconds``.

    Parameters
    ----------
    built : BuiltModel
        The model of the formulation (its blocks judge every candidate).
    schedule : Schedule
        A schedule that satisfies every block of the formulation.
    seconds : float
        Time budget of the search.
    free : int, optional
        Tasks freed per round; by default a third of the tasks with a choice, 4 to 12.
    round_seconds : float
        Time limit of one round's solve.
    patience : int
        Rounds without improvement after which the search stops.
    seed : int
        Seed of the choice of tasks to free.

    Returns
    -------
    Schedule
        ``schedule`` itself when nothing shorter was found.
    """
    began = time.perf_counter()
    p = built.problem
    x = built.context.family("x")
    flexible = [i for i in range(len(p.tasks)) if len(p.allowed[i]) > 1]
    if not flexible or seconds <= 0:
        return schedule
    k = free or max(4, min(MAX_FREE, len(flexible) // 3))
    k = min(k, len(flexible))
    rng = random.Random(seed)
    h = highs_for(built.linear)
    h.setOptionValue("mip_rel_gap", 0.0)
    best, stale = schedule, 0
    while stale < patience and shorter(built.lower_bound, best.makespan):
        left = seconds - (time.perf_counter() - began)
        if left <= 0.05:
            break
        released = _neighbourhood(rng, best, p, flexible, k)
        where = best.placement()
        for i in flexible:
            mine = p.device_index[where[p.tasks[i]]]
            for d in p.allowed[i]:
                value = 1.0 if d == mine else 0.0
                for col in x.x(i, d).cols:   # (i has a choice: x is its column)
                    h.changeColBounds(col, 0.0 if i in released else value, 1.0 if i in released else value)
        set_start(h, warm_values(built, best))
        h.setOptionValue("time_limit", min(round_seconds, left))
        h.run()
        solution = h.getSolution()
        found = None
        if solution.value_valid:
            found = read_schedule(built, list(solution.col_value), best.method)
        if found is not None and shorter(found.makespan, best.makespan) \
                and not violations(p, found, built.blocks):
            best, stale = found, 0
        else:
            stale += 1
        h.clearSolver()
    return best


def _neighbourhood(rng: random.Random, schedule: Schedule, p, flexible: list[int], k: int) -> set[int]:
    """Tasks to free: a random few, those running around one moment, or those of two devices."""
    kind = rng.random()
    if kind < 0.4:
        return set(rng.sample(flexible, k))
    rows = {r.task: r for r in schedule.tasks}
    if kind < 0.7 or len(p.devices) < 2:
        moment = rng.uniform(0, schedule.makespan)
        around = sorted(flexible, key=lambda i: abs(rows[p.tasks[i]].start - moment))
        return set(around[:k])
    pair = set(rng.sample(p.devices, 2))
    on_pair = [i for i in flexible if rows[p.tasks[i]].device in pair]
    return set(rng.sample(on_pair, min(len(on_pair), k + 4))) if on_pair else set(rng.sample(flexible, k))
