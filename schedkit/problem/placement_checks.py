"""Checks a problem passes on load: a placement must exist that every method could use.

:class:`~schedkit.problem.Problem` makes them once its durations and network are known
(:func:`check_placements`): every edge that carries data joins two devices with a link path
for some placement of its two tasks, the tasks that can run on one device only fit its
memory, and each collocation group shares a device. A problem that fails one has no
schedule, and the one-line error names the edge, device or group.

Examples
--------
>>> from schedkit import Problem
>>> check_placements(Problem.load("examples/tiny.yaml"))
>>> Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}], "tasks": [
...     {"name": "x", "durations": {"a": 1}, "output_size": 1}, {"name": "y", "durations": {"b": 1}}],
...     "edges": [{"src": "x", "dst": "y"}]})
Traceback (most recent call last):
    ...
schedkit.errors.ProblemError: edge x->y: no devices of the two tasks are connected
"""

from __future__ import annotations

from schedkit.errors import ProblemError
from schedkit.numerics import fits

__all__ = ["check_placements"]


def check_placements(problem) -> None:
    """Raise a :class:`~schedkit.errors.ProblemError` when no placement of ``problem`` can
    exist: an edge's data with no path between its tasks' devices, more memory fixed on a
    device than it holds, a collocation group without a device in common."""
    _check_reachable_placements(problem)
    _check_fixed_memory(problem)
    _check_collocation(problem)


def _check_reachable_placements(p) -> None:
    # A task whose every placement cuts it off from a neighbour makes the problem infeasible.
    if all(all(row) for row in p.linked):
        return  # every pair of devices is linked
    for i, j, size in p.edges:
        if size == 0:
            continue
        if not any(p.pair_allowed(size, u, v) for u in p.allowed[i] for v in p.allowed[j]):
            raise ProblemError(f"edge {p.tasks[i]}->{p.tasks[j]}: no devices of the two tasks are connected")


def _check_collocation(p) -> None:
    # Every method and the MILP put a collocation group on one device: there must be one.
    for group, members in p.colocate_groups.items():
        if not set.intersection(*(set(p.allowed[i]) for i in members)):
            raise ProblemError(f"collocation group '{group}': its tasks share no device they may all run on")


def _check_fixed_memory(p) -> None:
    # Summed in file order per device, one pass over the tasks.
    needs = [0.0] * len(p.devices)
    for memory, allowed in zip(p.task_memory, p.allowed):
        if len(allowed) == 1:
            needs[allowed[0]] += memory
    for d, (need, cap) in enumerate(zip(needs, p.device_memory)):
        if not fits(need, cap):
            raise ProblemError(f"device {p.devices[d]}: the tasks that can run only there need "
                               f"{need:g} of memory, capacity {cap:g}")
