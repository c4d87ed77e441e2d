"""A resource that tasks hold, as a block states it: its check on a schedule and its MILP rows.

A block that makes a set of tasks hold a shared resource
(:class:`~schedkit.timing.holds.Resource`) contributes it to the formulation's timing rules,
and every timing engine then honours it; these helpers give the block its other forms in one
line each: :func:`resource_violations` (its validator check), :func:`resource_rows` (its
MILP rows) and :func:`resource_cp` (its CP-SAT form), so that the block itself stays a few
lines long (see the custom-block tutorial).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import Resource, to_schedule
>>> p = Problem.load("examples/tiny.yaml")
>>> s = to_schedule(p, [0, 0, 0, 0, 0, 1], [0.0, 0.4, 1.6, 3.1, 3.3, 4.216], "example")
>>> resource_violations(s, Resource("engine", frozenset({"logits", "sample"})))   # on two devices, in turn
[]
"""

from __future__ import annotations

from schedkit.errors import FormulationError
from schedkit.numerics import time_tolerance

__all__ = ["resource_violations", "resource_rows", "resource_cp"]


def resource_violations(schedule, resource) -> list[str]:
    """Where more than ``resource.capacity`` of its holders run at once in ``schedule``: one
    message per holder that starts while the resource is full, naming the tasks and times.

    Times are compared within :func:`~schedkit.numerics.time_tolerance` of the makespan; a
    row that lasts no longer than that holds nothing.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import Resource, to_schedule
    >>> p = Problem.from_dict({"devices": [{"name": "d0"}, {"name": "d1"}],
    ...     "tasks": [{"name": "a", "work": 2}, {"name": "b", "work": 1}]})
    >>> both = to_schedule(p, [0, 1], [0.0, 1.0], "both")
    >>> resource_violations(both, Resource("engine", frozenset({"a", "b"})))
    ["resource 'engine': 'a' [0, 2) and 'b' [1, 2) hold it at once, more than its capacity 1"]
    >>> resource_violations(both, Resource("engine", frozenset({"a", "b"}), capacity=2))
    []
    """
    tol = time_tolerance(schedule.makespan)
    rows = sorted((r for r in schedule.tasks if r.task in resource.tasks and r.end - r.start > tol),
                  key=lambda r: (r.start, r.end, r.task))
    out = []
    active: list = []
    for row in rows:
        active = [a for a in active if a.end > row.start + tol]
        active.append(row)
        if len(active) > resource.capacity:
            held = " and ".join(f"'{a.task}' [{a.start:g}, {a.end:g})" for a in active)
            out.append(f"resource '{resource.name}': {held} hold it at once, more than its capacity "
                       f"{resource.capacity}")
    return out


def resource_rows(ctx, rows, resource) -> None:
    """The MILP rows of a resource of capacity 1: its holders never overlap.

    For every pair ``i < j`` of holders that the task graph leaves unordered (every pair when
    no block orders the edges), one order binary ``w`` of the family ``holding`` and two
    big-M rows, written as ``KIND.holds(resource, i, j, before|after)``::

        start_j >= end_i - M_ij (1 - w)        start_i >= end_j - M_ji w

    with ``M_ij = ctx.big_m(i, j)``, an upper bound of ``end_i - start_j``. A holder of zero
    duration is kept apart like any other (the rows are then stricter than the check).

    Raises
    ------
    FormulationError
        For a capacity above 1, naming the resource (a linear form of a cumulative
        resource is not written; the heuristics and the validator handle it).
    """
    if resource.capacity != 1:
        raise FormulationError(f"resource '{resource.name}': the MILP rows hold capacity 1 only, not "
                               f"{resource.capacity} (a heuristic honours it)")
    p = ctx.problem
    holders = resource.holders(p)
    pairs = [(i, j) for k, i in enumerate(holders) for j in holders[k + 1:]
             if not (ctx.orders_edges and p.ordered(i, j))]
    timing = ctx.family("timing")
    for (i, j), w in zip(pairs, ctx.family("holding").orders(resource.name, pairs)):
        ti, tj = p.tasks[i], p.tasks[j]
        rows.add("holds", (resource.name, ti, tj, "before"),
                 timing.start(j) - timing.end(i) + ctx.big_m(i, j) * (1 - w) >= 0)
        rows.add("holds", (resource.name, ti, tj, "after"),
                 timing.start(i) - timing.end(j) + ctx.big_m(j, i) * w >= 0)


def resource_cp(cp, resource) -> None:
    """The CP-SAT form of a resource: the holders' intervals (one per device a holder may use,
    present on the one it runs on) in one ``add_cumulative`` of the resource's capacity, an
    ``add_no_overlap`` for capacity 1. A holder's interval of zero duration is left out (it
    holds nothing, as on its device)."""
    durations = cp.problem.durations
    intervals = [interval for i in resource.holders(cp.problem) for d, interval in cp.interval[i].items()
                 if durations[i][d]]
    if len(intervals) <= 1:
        return
    if resource.capacity == 1:
        cp.model.add_no_overlap(intervals)
    else:
        cp.model.add_cumulative(intervals, [1] * len(intervals), resource.capacity)
