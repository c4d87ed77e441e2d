"""A mapping and start times turned into a :class:`~schedkit.schedule.Schedule` with its transfers.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> s = to_schedule(p, [0, 0, 0, 0, 0, 1], [0.0, 0.4, 1.6, 3.1, 3.3, 4.216], "manual")
>>> [(t.src, t.dst, t.from_, t.to) for t in s.transfers]
[('logits', 'sample', 'gpu0', 'cpu')]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from schedkit.problem import Problem
from schedkit.schedule import Schedule, TaskRun
from schedkit.machine import paused_gc
from schedkit.schedule.schedule import TransferTable, latest_ends, unchecked_rows
from schedkit.timing.transfers import Transfers

#: Edges timed at once (the memory of a block's arrays).
BLOCK = 1 << 18


def to_schedule(problem: Problem, device_of: Sequence[int], start: Sequence[float],
                method: str, transfers: Transfers | None = None) -> Schedule:
    """Turn a mapping and start times into a :class:`Schedule` with its transfers.

    A transfer row takes its times from ``transfers.booked`` (a timing engine that booked
    it on channel and port timelines); any other leaves when its source ends. The
    schedule's status says ``heuristic``: a method wraps it in a
    :class:`~schedkit.schedule.Result`, which decides the status of the file it returns.
    """
    durations, devices = problem.durations, problem.devices
    starts = [float(t) for t in start]
    end = [t + durations[i][d] for i, (t, d) in enumerate(zip(starts, device_of))]
    # Built from the problem's own numbers: no field to check (pydantic's checks cost
    # seconds on graphs with 100 000 edges).
    with paused_gc():
        rows = unchecked_rows(TaskRun, ({"task": name, "device": devices[d], "start": t, "end": float(e),
                                         "inputs": None} for name, d, t, e in zip(problem.tasks, device_of, starts, end)))
    moved = _transfers(problem, device_of, end, transfers.booked if transfers is not None else {})
    makespan = max([r.end for r in rows] + latest_ends(moved))
    return Schedule(problem=problem.name, method=method, status="heuristic", makespan=makespan,
                    tasks=rows, transfers=moved)


def placement_indices(problem: Problem, schedule: Schedule) -> list[int]:
    """Each task's device index in ``schedule``: the mapping :func:`to_schedule` was given.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> placement_indices(p, to_schedule(p, [0, 0, 0, 0, 0, 1], [0.0, 0.4, 1.6, 3.1, 3.3, 4.216], "x"))
    [0, 0, 0, 0, 0, 1]
    """
    where = schedule.placement()
    return [problem.device_index[where[t]] for t in problem.tasks]


def with_transfers(problem: Problem, schedule: Schedule) -> Schedule:
    """``schedule`` with the transfer rows its task rows imply (each leaves when its source ends).

    For schedules written by hand or by another tool: every edge whose ends sit on
    different devices and that carries data gets its row; the makespan is recomputed.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.schedule import TaskRun
    >>> p = Problem.load("examples/tiny.yaml")
    >>> rows = [TaskRun(task=t, device="gpu0" if t != "sample" else "cpu", start=s, end=e)
    ...         for t, s, e in [("embed", 0, .4), ("attn", .4, 1.6), ("mlp", 1.6, 3.1),
    ...                         ("norm", 3.1, 3.3), ("logits", 3.3, 4.2), ("sample", 4.216, 4.516)]]
    >>> s = with_transfers(p, Schedule(problem="tiny", method="manual", status="heuristic", tasks=rows))
    >>> [(t.src, t.dst) for t in s.transfers], round(s.makespan, 3)
    ([('logits', 'sample')], 4.516)
    """
    where = {r.task: r for r in schedule.tasks}
    device_of = [problem.device_index[where[t].device] for t in problem.tasks]
    end = [where[t].end for t in problem.tasks]
    transfers = _transfers(problem, device_of, end)
    makespan = max([r.end for r in schedule.tasks] + latest_ends(transfers))
    return schedule.model_copy(update={"transfers": transfers, "makespan": makespan, "objective": makespan})


def _transfers(problem: Problem, device_of: Sequence[int], end: Sequence[float],
               booked: dict | None = None) -> TransferTable | list:
    """The transfer rows of a mapping, as a table: every edge that
    :meth:`~schedkit.problem.Problem.moves`, in file order, leaving when its source ends (or as
    ``booked``) and lasting its :meth:`~schedkit.problem.Problem.comm_time`, both evaluated on
    the problem's arrays, a block of edges at a time (a block's arrays, not a dozen arrays of
    every edge, at once)."""
    a = problem.arrays
    if not len(a.edge_src):
        return []
    where = np.asarray(device_of, dtype=np.int64)
    finish = np.asarray(end, dtype=np.float64)
    parts = [_moving(problem, where, finish, lo, lo + BLOCK) for lo in range(0, len(a.edge_src), BLOCK)]
    picked, src, dst, u, v, leave, arrive = (np.concatenate(column) for column in zip(*parts))
    if booked:  # (a congested engine's times: its own dict, row by row)
        times = [booked.get(pair) for pair in zip(src.tolist(), dst.tolist())]
        held = np.array([t is not None for t in times], dtype=bool)
        if held.any():
            leave[held] = [t[0] for t in times if t is not None]
            arrive[held] = [t[1] for t in times if t is not None]
    # One route list per device pair, shared by the rows it makes (rows are not changed in
    # place; a list per row was a sixth of a row's memory).
    table = TransferTable(src, dst, u, v, leave, arrive, problem.tasks, problem.devices, edge=picked, copy=False)
    table.routes = {pair: list(problem.route[pair[0]][pair[1]]) for pair in table.pairs()}
    return table


def _moving(problem: Problem, where: np.ndarray, finish: np.ndarray, lo: int, hi: int) -> tuple:
    """Of the edges ``lo`` to ``hi``, those that move: their positions, tasks and devices
    (32 bits), when they leave and arrive."""
    a = problem.arrays
    i, j, size = a.edge_src[lo:hi], a.edge_dst[lo:hi], a.edge_size[lo:hi]
    u, v = where[i], where[j]
    # comm_time's product and sum, in its order; only edges between linked devices are timed.
    comm = size * a.inv_bandwidth[u, v]
    comm += a.latency[u, v]
    moving = (u != v) & (size != 0) & a.linked[u, v]
    for k in np.flatnonzero(moving & a.edge_payload[lo:hi]).tolist():  # its own times win where listed
        comm[k] = problem.comm_time(problem.edges[lo + k][2], int(u[k]), int(v[k]))
    moving &= comm > 0
    picked = np.flatnonzero(moving)
    leave = finish[i[picked]]
    small = np.int32
    return ((picked + lo).astype(small), i[picked].astype(small), j[picked].astype(small), u[picked].astype(small),
            v[picked].astype(small), leave, leave + comm[picked])
