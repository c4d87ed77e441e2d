"""The transfer rows' checks on arrays: a fast pass that finds when there is nothing to say.

:func:`~schedkit.schedule.checks.consistency_violations` judges every transfer row one
by one: the edge exists and is listed once, the row goes between its tasks' devices, its
times are finite, it starts after its source ends and lasts its transfer time. A schedule
of 10,000 tasks has 300,000 transfer rows: seconds in Python. :func:`transfers_pass`
asks the same questions of all rows at once, with the very float operations of the
scalar checks (:meth:`~schedkit.problem.Problem.comm_time`,
:func:`~schedkit.numerics.lasts`); when every row passes, the scalar loop would say
nothing, and is skipped. When any row might fail, the scalar loop runs and words the
violations: this pass never words one, so the messages have one source.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "heft")
>>> transfers_pass(p, s, {r.task: r for r in s.tasks}, 0.0)
True
>>> late = s.model_copy(update={"transfers": [t.model_copy(update={"end": t.end - 1.0})
...                                             for t in s.transfers]})
>>> bool(s.transfers) and transfers_pass(p, late, {r.task: r for r in late.tasks}, 0.0)
False
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

import numpy as np

from schedkit.numerics import DURATION_TOL, ROUNDING_ULPS


def transfers_pass(problem, schedule, rows: dict, tol: float) -> bool:
    """Whether every transfer row of ``schedule`` passes the checks of
    :func:`~schedkit.schedule.checks.consistency_violations` (``False``: one may fail).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    rows : dict
        Task name to its row in ``schedule``.
    tol : float
        The time tolerance the scalar checks use.
    """
    moved = schedule.transfers
    if not moved:
        return True
    a = problem.arrays
    n = a.n
    index, devices = problem.task_index, problem.device_index
    count = len(moved)

    def numbers(table: dict, field: str) -> np.ndarray:  # (-1: a name the problem lacks)
        return np.fromiter(map(table.get, map(attrgetter(field), moved), repeat(-1)), dtype=np.int64, count=count)

    src, dst = numbers(index, "src"), numbers(index, "dst")
    u, v = numbers(devices, "from_"), numbers(devices, "to")
    if min(src.min(), dst.min(), u.min(), v.min()) < 0:
        return False  # a name the problem lacks: the scalar checks word it
    placed = [rows.get(name) for name in problem.tasks]
    if any(r is None for r in placed):
        return False
    on = np.array([devices.get(r.device, -1) for r in placed], dtype=np.int64)
    if not (np.array_equal(on[src], u) and np.array_equal(on[dst], v)):
        return False
    # Each row names an edge, once; the problem's edges are distinct pairs.
    keys = src * n + dst
    edge_keys = a.edge_src * n + a.edge_dst
    order = np.argsort(edge_keys, kind="stable")
    sorted_keys = edge_keys[order]
    if _repeats(np.sort(keys)) or _repeats(sorted_keys):
        return False
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    if len(sorted_keys) == 0 or not np.array_equal(sorted_keys[at], keys):
        return False
    edge = order[at]
    start = np.fromiter(map(attrgetter("start"), moved), dtype=np.float64, count=count)
    end = np.fromiter(map(attrgetter("end"), moved), dtype=np.float64, count=count)
    if not (np.isfinite(start).all() and np.isfinite(end).all()):
        return False
    size = a.edge_size[edge]
    allowed = (u == v) | (size == 0) | a.linked[u, v]
    # comm_time: 0 on one device or without data; else its product and sum, in its order.
    need = size * a.inv_bandwidth[u, v]
    need += a.latency[u, v]
    need[(u == v) | (size == 0)] = 0.0
    for k in np.flatnonzero(a.edge_payload[edge] & allowed & (u != v)).tolist():
        need[k] = problem.comm_time(problem.edges[int(edge[k])][2], int(u[k]), int(v[k]))
    source_end = np.array([r.end for r in placed], dtype=np.float64)[src]
    early = start < source_end - tol
    run = end - start
    # lasts(run, need, end), elementwise: |run - need| <= DURATION_TOL |need| + ulps of |end|.
    short = (run < need) & ~(np.abs(run - need) <= DURATION_TOL * np.abs(need)
                             + ROUNDING_ULPS * np.spacing(np.abs(end)))
    return not (allowed & (early | short)).any()


def task_table(problem, rows: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each task's device index, start and end, in the problem's task order, read from
    ``rows`` (task name to its row); ``None`` when a task has no row or a row names a device
    the problem lacks (the scalar checks then judge, as they would).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> on, start, end = task_table(p, {r.task: r for r in s.tasks})
    >>> p.devices[int(on[0])] == s.tasks[0].device, bool((end >= start).all())
    (True, True)
    """
    placed = [rows.get(name) for name in problem.tasks]
    if any(r is None for r in placed):
        return None
    n = len(placed)
    on = np.fromiter(map(problem.device_index.get, map(attrgetter("device"), placed), repeat(-1)),
                     dtype=np.int64, count=n)
    if n and on.min() < 0:
        return None
    start = np.fromiter(map(attrgetter("start"), placed), dtype=np.float64, count=n)
    end = np.fromiter(map(attrgetter("end"), placed), dtype=np.float64, count=n)
    return on, start, end


def edge_transfer_rows(problem, moved) -> np.ndarray:
    """For each edge of ``problem`` (in the order of ``Problem.edges``), the position in
    ``moved`` of its transfer row, ``-1`` when it has none.

    An edge listed by several rows gets the last of them: the row a dict keyed by
    ``(src, dst)`` keeps, as the scalar checks read it. A row that names a task the problem
    lacks, or a pair that is no edge, belongs to no edge.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> at = edge_transfer_rows(p, s.transfers)
    >>> len(at) == len(p.edges), int((at >= 0).sum()) == len(s.transfers)
    (True, True)
    """
    a = problem.arrays
    n, count = a.n, len(moved)
    if not count:
        return np.full(len(a.edge_src), -1, dtype=np.int64)
    index = problem.task_index
    src = np.fromiter(map(index.get, map(attrgetter("src"), moved), repeat(-1)), dtype=np.int64, count=count)
    dst = np.fromiter(map(index.get, map(attrgetter("dst"), moved), repeat(-1)), dtype=np.int64, count=count)
    keys = src * n + dst
    keys[(src < 0) | (dst < 0)] = -1  # (edge keys are never negative)
    # A stable sort keeps rows of one key in list order: the last of a run is the last row.
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    edge_keys = a.edge_src * n + a.edge_dst
    at = np.searchsorted(ordered, edge_keys, side="right") - 1
    safe = np.maximum(at, 0)
    return np.where((at >= 0) & (ordered[safe] == edge_keys), order[safe], -1)


def _repeats(ordered: np.ndarray) -> bool:
    """Whether a sorted array holds a value twice (cheaper than ``np.unique``'s hash table)."""
    return bool(len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any())
