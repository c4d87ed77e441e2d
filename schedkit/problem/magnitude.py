"""How large a problem's times may add up to: far below the largest float.

Every method sums a problem's times: HEFT's ranks and a list schedule's finish times, the
MILP's big-M horizon, CP-SAT's time domain, the solvers' rescaling to units near 1,000. Two
durations of 1e308 are each a valid number, but their sum is infinite, and a schedule that
ends at infinity cannot be written. So a problem is refused on load when even its plainest
schedule is out of reach: every task on a device where it runs fastest, one after another,
every edge's data over the slowest link, for every input (:func:`serial_time`), beyond
:data:`LARGEST_HORIZON`, 1e300 time units: the times the solvers are tested with, eight
orders of magnitude below the largest float, far beyond any physical unit. A duration of
1e300 on a device the task need not use is no obstacle: the solvers never offer that choice
(:mod:`schedkit.milp.model_size`).

Examples
--------
>>> from schedkit import Problem
>>> round(serial_time(Problem.load("examples/tiny.yaml")), 4)
5.8163
>>> Problem.from_dict({"devices": [{"name": "d"}], "tasks": [
...     {"name": "a", "work": 1e308}, {"name": "b", "work": 1e308}]})
Traceback (most recent call last):
    ...
schedkit.errors.ProblemError: task 'a' lasts at least 1e+308: the problem's durations and transfer times add up to inf, more than schedkit can time (at most 1e+300)
"""

from __future__ import annotations

import numpy as np

from schedkit.errors import ProblemError
from schedkit.problem.edge_table import edge_columns, largest_only
from schedkit.problem.network import check_finite_transfers

__all__ = ["LARGEST_HORIZON", "serial_time", "check_magnitudes", "check_horizon"]

#: The largest serial time (:func:`serial_time`) of a problem schedkit accepts.
LARGEST_HORIZON = 1e300


def serial_time(problem) -> float:
    """An upper estimate of the makespan of ``problem``'s plainest schedule: each task at its
    shortest duration, one after another, each edge at its size over the slowest link plus
    the largest latency (or its largest own transfer time), times the number of inputs;
    ``inf`` when the sum overflows."""
    return _parts(problem)[0]


def check_magnitudes(problem) -> None:
    """The checks of a problem's times as :class:`~schedkit.problem.Problem` makes them:
    each transfer finite (:func:`~schedkit.problem.network.check_finite_transfers`), then
    their sum with the durations (:func:`check_horizon`)."""
    check_finite_transfers(largest_only(problem))
    check_horizon(problem)


def check_horizon(problem) -> None:
    """Raise a :class:`~schedkit.errors.ProblemError` naming the longest task (or edge) when
    ``problem``'s :func:`serial_time` exceeds :data:`LARGEST_HORIZON`."""
    total, longest, task, edge = _parts(problem)
    if total <= LARGEST_HORIZON:
        return
    what = (f"task {problem.tasks[task]!r} lasts at least {longest[0]:g}" if longest[0] >= longest[1] else
            f"edge {problem.tasks[edge[0]]}->{problem.tasks[edge[1]]} takes up to {longest[1]:g}")
    raise ProblemError(f"{what}: the problem's durations and transfer times add up to {total:g}, "
                       f"more than schedkit can time (at most {LARGEST_HORIZON:g})")


def _parts(problem):
    """``(total, (longest task, longest edge), task, (src, dst))``: the serial time, the largest
    single terms and whose they are."""
    spec = problem.spec
    tasks = problem.min_duration
    task = max(range(len(tasks)), key=tasks.__getitem__)
    per_size = max(map(max, problem.inv_bandwidth))
    latency = max(map(max, problem.latency))
    with np.errstate(over="ignore", invalid="ignore"):
        columns = edge_columns(spec, problem.tasks)
        if columns is not None:
            src, dst, size = columns
            moves = size * per_size + latency
            k = int(np.argmax(moves)) if len(moves) else None
            edges, edge = float(moves.sum()), (None if k is None else (int(src[k]), int(dst[k])))
            largest_move = 0.0 if k is None else float(moves[k])
        else:
            moves = [(float(size) * per_size + latency if not getattr(size, "times", None) else
                      max(float(size) * per_size + latency, *size.times.values()), (i, j))
                     for i, j, size in problem.edges]
            largest_move, edge = max(moves, default=(0.0, None))
            edges = sum(m for m, _ in moves)
    inputs = spec.workload.inputs if spec.workload is not None else 1
    total = (sum(tasks) + edges) * inputs
    return (total if total == total else float("inf")), (tasks[task], largest_move), task, edge

