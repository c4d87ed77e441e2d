"""A list scheduler's device choices, kept completable by a safe placer.

:class:`Reservation` lends :func:`~schedkit.timing.list_schedule` the feasibility search of
:class:`~schedkit.heuristics.placement.Placer`: a memory-bound list schedule never runs into
a dead end the placement search could have avoided.
"""

from __future__ import annotations

from schedkit.heuristics.placement import Placer
from schedkit.problem import Problem

__all__ = ["Reservation"]


class Reservation:
    """A list scheduler's device choices, kept completable by a safe :class:`Placer`.

    Greedy list scheduling takes memory as it goes and may leave a later task no device
    (a nearly full instance). Given to :func:`~schedkit.timing.list_schedule` as
    ``reserve``, a reservation offers a task only the devices that keep a complete
    feasible placement of the tasks not yet scheduled (the placer's completion), and
    records each choice.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import list_schedule
    >>> p = Problem.from_dict({"devices": [{"name": "a", "memory": 4}, {"name": "b", "memory": 4}],
    ...                        "tasks": [{"name": "x", "work": 1, "memory": 2},
    ...                                  {"name": "y", "work": 1, "memory": 2},
    ...                                  {"name": "z", "work": 1, "memory": 4}]})
    >>> list_schedule(p, [3.0, 2.0, 1.0])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: task 'z': no memory left on its devices (heuristic placement)
    >>> list_schedule(p, [3.0, 2.0, 1.0], reserve=Reservation(p, "example"))[0]
    [1, 1, 0]
    """

    def __init__(self, problem: Problem, who: str):
        self.placer = Placer(problem, who, safe=True)

    def candidates(self, i: int, devices):
        """The devices of ``devices`` on which task ``i`` keeps the others placeable."""
        placer = self.placer
        u = placer.unit_of[i]
        if placer.placed(u):
            return [d for d in devices if d == placer.device_of[i]]
        planned = placer.completion.get(u)
        # a device of the task's own may be one its collocation group cannot share
        devices = [d for d in devices if d in placer.allowed_set[u]]
        kept = [d for d in devices if d == planned or placer._keeps_completion(u, d)]
        return kept or [d for d in devices if d == planned]

    def commit(self, i: int, d: int) -> None:
        """Task ``i`` goes to device ``d`` (one of :meth:`candidates`)."""
        placer = self.placer
        u = placer.unit_of[i]
        if not placer.placed(u):
            placer._accept(u, d)
