"""Counting what a model of a problem will hold, before it is built.

Pairs of tasks that may share a device and that the task graph leaves unordered get an
order binary and disjunctive rows; a task's descendants on a device get chain rows. On
large graphs these counts decide whether a model can be built at all within a time
limit, so they are computed with bit sets (the transitive closure of
:attr:`~schedkit.problem.Problem.descendants`), not pair by pair; above :data:`EXACT_TASKS`
tasks the closure itself would not fit in memory, and the counts are upper bounds.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> open_pairs(p)                 # attn and mlp: both after embed, neither before the other
1
>>> [bin(m).count("1") for m in device_masks(p)]   # tasks that may run on gpu0, on the cpu
[5, 6]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.problem.problem import Problem

#: Above this many tasks, counts are upper bounds (the closure would need n^2 / 8 bytes).
EXACT_TASKS = 20_000


def device_masks(problem: Problem) -> list[int]:
    """Per device, the bit set of the tasks that may run on it."""
    masks = [0] * len(problem.devices)
    for i, allowed in enumerate(problem.allowed):
        for d in allowed:
            masks[d] |= 1 << i
    return masks


def ancestors(problem: Problem) -> list[int]:
    """Per task, the bit set of the tasks it follows (the closure's transpose)."""
    anc = [0] * len(problem.tasks)
    for j in problem.topological_order:
        bits = 0
        for i, _ in problem.preds[j]:
            bits |= anc[i] | (1 << i)
        anc[j] = bits
    return anc


def open_pairs(problem: Problem) -> int:
    """Pairs ``i < j`` that share an allowed device and that the task graph does not order.

    Exact up to :data:`EXACT_TASKS` tasks; above, the upper bound ``n (n - 1) / 2 - edges``.
    """
    n = len(problem.tasks)
    if n > EXACT_TASKS:
        return max(0, n * (n - 1) // 2 - len(problem.edges))
    masks = device_masks(problem)
    desc, anc = problem.descendants, ancestors(problem)
    total = 0
    for i, allowed in enumerate(problem.allowed):
        share = 0
        for d in allowed:
            share |= masks[d]
        later = share >> (i + 1) << (i + 1)        # only j > i
        total += (later & ~desc[i] & ~anc[i]).bit_count()
    return total


def reach_on_devices(problem: Problem, side: str = "descendants") -> int:
    """``sum over tasks j and devices d`` of the descendants (or ancestors) of ``j`` that may run on ``d``.

    Exact up to :data:`EXACT_TASKS` tasks; above, the upper bound ``n`` per task and device.
    """
    n, m = len(problem.tasks), len(problem.devices)
    if n > EXACT_TASKS:
        return n * n * m
    masks = device_masks(problem)
    sets = problem.descendants if side == "descendants" else ancestors(problem)
    return sum((bits & mask).bit_count() for bits in sets for mask in masks)
