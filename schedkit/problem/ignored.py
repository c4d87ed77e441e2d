"""The problem without the collocation groups or memory capacities a formulation ignores.

The heuristics and the decompositions place a collocation group as one unit, and keep every
device within its memory, wherever the problem gives them. A formulation without the
``placement`` block ignores the groups, one without ``memory`` (or ``memory_timeline``, which
holds it) the capacities, and ``schedkit solve`` says so: :meth:`~schedkit.methods.Method.result`
then gives every method :func:`without_ignored` of the problem, whose schedules are the
formulation's schedules. Measured before: four tasks of one group after a common source, on
two devices, HEFT kept the group together in 8.1 where the formulation allows 4.11; three
chained tasks of memory 3 on a fast device of memory 5, HEFT took 11.1 where it allows 3.
Pins stay: they are part of a task's devices, which ``assignment`` holds in every formulation.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b"}],
...     "tasks": [{"name": "x", "work": 1, "memory": 3, "colocate": "g", "pin": ["a"]},
...               {"name": "y", "work": 1, "colocate": "g"}]})
>>> q = without_ignored(p, groups=True, capacities=True)
>>> q.colocate_groups, [[q.devices[d] for d in a] for a in q.allowed], q.spec.devices[0].memory
({}, [['a'], ['a', 'b']], None)
>>> without_ignored(q, groups=True, capacities=True) is q      # nothing left to remove
True
"""

from __future__ import annotations

__all__ = ["without_ignored"]


def without_ignored(problem, *, groups: bool, capacities: bool):
    """``problem`` without its collocation groups (``groups``) and its devices' memory
    capacities (``capacities``); ``problem`` itself when it has none of those asked."""
    from schedkit.problem.problem import Problem

    spec = problem.spec
    groups = groups and bool(problem.colocate_groups)
    capacities = capacities and any(device.memory is not None for device in spec.devices)
    if not (groups or capacities):
        return problem
    update = {}
    if groups:
        update["tasks"] = [task.model_copy(update={"colocate": None}) for task in spec.tasks]
    if capacities:
        update["devices"] = [device.model_copy(update={"memory": None}) for device in spec.devices]
    return Problem(spec.model_copy(update=update))
