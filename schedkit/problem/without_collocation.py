"""The problem without collocation groups: what a formulation without ``placement`` asks.

The heuristics and the decompositions place a collocation group as one unit wherever the
problem gives one. A formulation without the ``placement`` block ignores the groups
(``schedkit solve`` says so), so :meth:`~schedkit.methods.Method.result` gives every method
:func:`without_collocation` of the problem instead: its schedules are then the formulation's
schedules. (Pins stay: they are part of a task's devices, which ``assignment`` holds.) Four
tasks of one group after a common source, on two devices: HEFT kept the group together in
8.1 where the formulation allows 4.11.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
...     "tasks": [{"name": "x", "work": 1, "colocate": "g", "pin": ["b"]}, {"name": "y", "work": 1, "colocate": "g"}]})
>>> q = without_collocation(p)
>>> q.colocate_groups, [[q.devices[d] for d in a] for a in q.allowed]
({}, [['b'], ['a', 'b']])
>>> without_collocation(q) is q      # nothing to remove
True
"""

from __future__ import annotations

__all__ = ["without_collocation"]


def without_collocation(problem):
    """``problem`` with no task in a collocation group; ``problem`` itself when it has none."""
    from schedkit.problem.problem import Problem

    if not problem.colocate_groups:
        return problem
    spec = problem.spec
    tasks = [task.model_copy(update={"colocate": None}) for task in spec.tasks]
    return Problem(spec.model_copy(update={"tasks": tasks}))
