"""The instances of benchmarks/timeline.py (see its docstring): data, capacity rule, invalid log.

benchmarks/exact.py's timeline set uses them too.
"""

from __future__ import annotations

import copy
import math
import random

import schedkit
from schedkit import InvalidScheduleError, Problem, Schedule, SchedkitError
from schedkit.blocks.memory_timeline import MemoryTimeline
from schedkit.generators import erdos_renyi

MODES = ("deltas", "lifetime")
#: Every invalid schedule seen (its instance and first violation); the script exits 1 if any.
INVALID: list[str] = []


def timeline(mode: str) -> dict:
    """``latency`` with the memory timeline of ``mode`` in place of static memory."""
    return {"name": f"timeline-{mode}", "objective": "makespan",
            "blocks": ["assignment", "placement", {"precedence": {"communication": True}},
                       {"no_overlap": {"encoding": "device"}}, {"memory_timeline": {"mode": mode}}]}


def deltas_data(n: int, seed: int) -> dict:
    """N/2 forward tasks (an ER DAG) and their collocated backwards (see the module docstring)."""
    data = erdos_renyi(n // 2, 0.25, 3, seed=seed, spread=(0.8, 1.25), name=f"fb{n}-s{seed}")
    rng = random.Random(f"deltas-{n}-{seed}")
    forward, backward = data["tasks"], []
    for task in forward:
        k = task["name"][1:]
        amount = rng.randint(2, 6)
        task.update(name=f"F{k}", weight_memory=rng.randint(0, 2), activation_memory=amount,
                    colocate=f"layer{k}")
        backward.append({"name": f"B{k}", "durations": {d: 2 * v for d, v in task["durations"].items()},
                         "activation_memory": -amount, "colocate": f"layer{k}"})
    edges = []
    for e in data["edges"]:
        i, j = e["src"][1:], e["dst"][1:]
        edges += [{"src": f"F{i}", "dst": f"F{j}", "size": e["size"]},
                  {"src": f"B{j}", "dst": f"B{i}", "size": e["size"]}]
    edges += [{"src": f"F{t['name'][1:]}", "dst": f"B{t['name'][1:]}", "size": 0} for t in forward]
    data.update(tasks=forward + backward, edges=edges)
    return data


def lifetime_data(n: int, seed: int) -> dict:
    """An ER DAG of N tasks whose outputs (size rounded up) live in memory; weights 0-2."""
    data = erdos_renyi(n, 0.25, 3, seed=seed, spread=(0.8, 1.25), name=f"er{n}-s{seed}")
    rng = random.Random(f"lifetime-{n}-{seed}")
    for task in data["tasks"]:
        task.update(weight_memory=rng.randint(0, 2), activation_memory=math.ceil(task["output_size"]))
    return data


def peak(problem: Problem, schedule: Schedule, mode: str) -> float:
    """The highest memory level of ``schedule`` on any device (the block's own event rules)."""
    base, items = MemoryTimeline(mode=mode).occupancy(problem, schedule)
    tol, best = 1e-9 * max(1.0, schedule.makespan or 1.0), 0.0
    for d in range(len(problem.devices)):
        live = [(s, e, a) for s, e, a in items[d] if e > s + tol]
        for t in {0.0} | {s for s, _, a in live if a > 0}:  # releases at t come before additions
            best = max(best, base[d] + sum(a for s, e, a in live if s <= t + tol and not e <= t + tol))
    return best


def with_capacity(data: dict, capacity: float) -> dict:
    data = copy.deepcopy(data)
    for device in data["devices"]:
        device["memory"] = capacity
    return data


def capacity_rule(data: dict, mode: str) -> dict:
    """The module docstring's rule: P0, L and the capacity, from HEFT alone."""
    problem = Problem.from_dict(data)
    p0 = peak(problem, schedkit.solve(problem, "heft", formulation="latency"), mode)
    low, cap = None, p0 - 1
    while cap > 0:
        try:
            schedkit.solve(Problem.from_dict(with_capacity(data, cap)), "heft", formulation=timeline(mode))
        except InvalidScheduleError as exc:
            loud(f"{data['name']} heft -f timeline-{mode} at capacity {cap:g}", exc.violations)
            break
        except SchedkitError:  # no memory-feasible schedule found (not a proof)
            break
        low, cap = cap, cap - 1
    return {"heft_peak": p0, "heft_lowest": low,
            "capacity": p0 - 1 if low is None else (low + p0 - 1) // 2}


def loud(what: str, wrong: list[str]) -> None:
    """Report an invalid schedule (ours, or one ``schedkit.solve`` refused to return)."""
    INVALID.append(f"{what}: {wrong[0]}")
    print(f"!!! INVALID schedule of {what} ({len(wrong)} violation(s)): " + "; ".join(wrong[:3]), flush=True)
