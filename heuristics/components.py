"""Building blocks of the list schedulers and of the search heuristics.

The list-scheduling methods (``met``, ``greedy``, ``heft``) are one engine,
:func:`schedkit.timing.list_schedule`, with a *priority rule* (which ready task
goes next) and a *device rule* (where it goes). The search methods (``annealing``,
``evolution``) explore *device strings* (one device per task) and time every
candidate with :class:`~schedkit.timing.OrderedTiming`, a precomputed copy of
``list_schedule`` with a fixed device string and a fixed task order.

Priority rules (a list of floats, higher first):

- :func:`upward_rank_priority`: HEFT's upward rank (mean costs),
- :func:`order_priority` of :func:`~schedkit.timing.bfs_order`: breadth-first topological order.

Device rules (``rule(task, [(device, start, end), ...]) -> device``):

- :func:`schedkit.timing.earliest_finish`,
- :func:`fastest_device_rule`: the shortest duration (MET).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import bfs_order, list_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> device_of, start = list_schedule(p, order_priority(bfs_order(p)),
...                                  rule=fastest_device_rule(p))
>>> [p.devices[d] for d in device_of]
['gpu0', 'gpu0', 'gpu0', 'gpu0', 'gpu0', 'cpu']
"""

from __future__ import annotations

from typing import Sequence

from schedkit.problem import Problem
from schedkit.problem.graph import upward_rank
from schedkit.timing import DeviceRule
from schedkit.timing.list_schedule import FinishRule

__all__ = ["order_priority", "upward_rank_priority", "fastest_device_rule", "fastest_devices",
           "unit_durations"]


# ---------------------------------------------------------------------- priority rules
def order_priority(order: Sequence[int]) -> list[float]:
    """A priority under which :func:`~schedkit.timing.list_schedule` takes tasks in ``order``.

    ``order`` must be a topological order of all tasks: then the first task of it not yet
    scheduled is always ready and has the highest priority among the ready ones.

    Examples
    --------
    >>> order_priority([2, 0, 1])
    [2.0, 1.0, 3.0]
    """
    priority = [0.0] * len(order)
    for position, i in enumerate(order):
        priority[i] = float(len(order) - position)
    return priority


def upward_rank_priority(problem: Problem) -> list[float]:
    """HEFT's priority: the upward rank with mean costs (Topcuoglu et al. 2002).

    A task's mean duration over its allowed devices plus the longest path after it,
    an edge costing its mean transfer time over the linked pairs of distinct allowed
    devices (see :func:`schedkit.problem.graph.upward_rank`). Equal ranks go to the lower
    task index.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> [round(r, 3) for r in upward_rank_priority(p)][:4]
    [108.0, 77.0, 80.0, 80.0]
    """
    return upward_rank(problem, "mean")


# ---------------------------------------------------------------------- device rules
def fastest_device_rule(problem: Problem) -> DeviceRule:
    """Device rule of MET: the candidate with the shortest duration.

    A task of a collocation group is judged by its group's total duration
    (:func:`unit_durations`): the group's first task chooses for all of it.
    Ties go to the earliest finish, then to the lowest device index. The candidates are
    the devices :func:`~schedkit.timing.list_schedule` leaves after its memory,
    collocation and link filtering, so a full device is skipped. A
    :class:`~schedkit.timing.list_schedule.FinishRule` preferring short durations, so
    that ``list_schedule`` times only the fastest candidates.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> rule = fastest_device_rule(p)
    >>> rule(0, [(0, 5.0, 5.4), (1, 0.0, 1.8)])   # embed: gpu0 is faster, though it finishes later
    0
    """
    return FinishRule(unit_durations(problem))


def unit_durations(problem: Problem) -> list[dict[int, float]]:
    """Each task's durations, a collocated task's replaced by its group's total.

    A group of several tasks shares one device, so what a device costs it is the sum of its
    members' durations there, on the devices all of them may use.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
    ...     "tasks": [{"name": "w", "durations": {"a": 0, "b": 0}, "colocate": "g"},
    ...               {"name": "op", "durations": {"a": 9, "b": 1}, "colocate": "g"}]})
    >>> unit_durations(p)[0]          # the weight costs nothing, its group 9 on a and 1 on b
    {0: 9.0, 1: 1.0}
    """
    tables = list(problem.durations)
    for members in problem.colocate_groups.values():
        if len(members) > 1:
            common = set(problem.allowed[members[0]]).intersection(*(problem.allowed[k] for k in members))
            total = {d: float(sum(problem.durations[k][d] for k in members)) for d in sorted(common)}
            for k in members:
                tables[k] = total
    return tables


def fastest_devices(problem: Problem) -> list[int]:
    """Each task's fastest allowed device (ties: the lowest index), ignoring memory.

    A collocated task goes with its group, to the device where the group's total duration is
    least (:func:`unit_durations`), so that the string keeps the group together.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/topcuoglu2002.json")
    >>> [p.devices[d] for d in fastest_devices(p)][:4]
    ['p3', 'p1', 'p1', 'p2']
    """
    return [min(table, key=lambda d: (table[d], d)) for table in unit_durations(problem)]
