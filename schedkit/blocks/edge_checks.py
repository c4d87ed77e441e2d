"""The ``precedence`` block's check on arrays: a fast pass that finds the edges worth a word.

:meth:`Precedence.violations <schedkit.blocks.Precedence.violations>` judges every edge
one by one (:func:`~schedkit.blocks.base.placed_edges`): its two ends may sit where they
do, the consumer starts after the source ends plus the transfer time, and a transfer row
arrives in time. A graph of 60,000 tasks has 1.8 million edges: seconds in Python.
:func:`suspect_edges` asks the same questions of all edges at once, with the very float
operations of the scalar check (:meth:`~schedkit.problem.Problem.comm_time`, then
``end + delay - tol``), and keeps the edges where the scalar check might say something;
the scalar check then runs on those alone (:func:`placed_edges_at`), so the messages
have one source and come in the same order. Where the arrays cannot judge (a batched
schedule, a task without a row) it says so, and every edge goes the scalar way.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "heft")
>>> len(suspect_edges(p, s, True, 0.0).edges)
0
>>> late = s.model_copy(update={"transfers": []})
>>> found = suspect_edges(p, late, True, 0.0)
>>> len(found.edges) == len(s.transfers)
True
>>> [(a.task, b.task) for _, a, b, *_ in placed_edges_at(p, late, found)] == [(t.src, t.dst) for t in s.transfers]
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from schedkit.schedule.batched import is_batched
from schedkit.schedule.bulk_checks import BLOCK, edge_transfer_rows, row_ends, task_table


class Suspects(NamedTuple):
    """What :func:`suspect_edges` found: the edges to judge one by one, and what reads them."""

    edges: np.ndarray
    """Positions in ``Problem.edges`` of the edges where the scalar check may say something, in order."""
    rows: dict
    """Task name to its row of the schedule."""
    moved: np.ndarray | None
    """Per edge, the position of its transfer row in ``schedule.transfers`` (``-1``: none);
    ``None`` when no edge needs one (the scalar check then reads none)."""


def suspect_edges(problem, schedule, communication: bool, tol: float) -> Suspects | None:
    """The edges of ``problem`` on which the ``precedence`` check may fail in ``schedule``.

    An edge not returned passes that check, float for float; ``None`` when the arrays
    cannot judge (a batched schedule, a task without a row, a row on an unknown device).

    Parameters
    ----------
    problem : Problem
    schedule : Schedule
    communication : bool
        The block's parameter: whether data takes its transfer time (and a transfer row).
    tol : float
        The time tolerance the scalar check uses.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> early = s.model_copy(update={"tasks": [r.model_copy(update={"start": 0.0}) for r in s.tasks]})
    >>> [p.edges[k][:2] for k in suspect_edges(p, early, False, 0.0).edges.tolist()][:2]
    [(0, 1), (0, 2)]
    """
    if is_batched(schedule):
        return None  # (edges per input, from the batches that hold them: the scalar way)
    rows = {r.task: r for r in schedule.tasks}
    table = task_table(problem, rows)
    if table is None:
        return None
    on, start, end = table
    found, moved = [], None
    # A block of edges at a time: a block's arrays, not a dozen arrays of every edge, at once.
    for lo in range(0, len(problem.arrays.edge_src), BLOCK):
        suspect, needs, consumer_start = _suspects(problem, on, start, end, communication, tol, lo, lo + BLOCK)
        if len(needs):
            # The others with a transfer time need a row that arrives before the consumer starts.
            if moved is None:
                moved, arrival = edge_transfer_rows(problem, schedule.transfers), row_ends(schedule.transfers)
            at = moved[lo + needs]
            late = at < 0
            late[~late] = arrival[at[~late]] > consumer_start[needs[~late]] + tol
            suspect[needs[late]] = True
        found.append(np.flatnonzero(suspect) + lo)
    return Suspects(np.concatenate(found) if found else np.zeros(0, dtype=np.int64), rows, moved)


def _suspects(problem, on, start, end, communication: bool, tol: float, lo: int, hi: int):
    """Of the edges ``lo`` to ``hi``: which may fail (by position in the block), which of the
    others need a transfer row, and their consumers' starts."""
    a = problem.arrays
    i, j, size = a.edge_src[lo:hi], a.edge_dst[lo:hi], a.edge_size[lo:hi]
    u, v = on[i], on[j]
    still = (u == v) | (size == 0)
    allowed = still | a.linked[u, v]  # pair_allowed
    if communication:
        # comm_time: size * inv_bandwidth + latency, in its order; 0 where nothing moves; an
        # edge with its own transfer times is timed by comm_time itself (few).
        delay = size * a.inv_bandwidth[u, v]
        delay += a.latency[u, v]
        delay[still] = 0.0
        for k in np.flatnonzero(a.edge_payload[lo:hi] & allowed & ~still).tolist():
            delay[k] = problem.comm_time(problem.edges[lo + k][2], int(u[k]), int(v[k]))
    else:
        delay = np.zeros(len(i))
    consumer_start = start[j]
    early = consumer_start < end[i] + delay - tol
    return ~allowed | early, np.flatnonzero(allowed & ~early & (delay > 0)), consumer_start


def placed_edges_at(problem, schedule, found: Suspects):
    """The edges of ``found`` as :func:`~schedkit.blocks.base.placed_edges` yields them.

    Yields ``(size, a, b, u, v, moved)`` for each edge of ``found.edges``, in order: the
    edge's size, its source and consumer rows, their device indices and its transfer row
    (``None`` when there is none).
    """
    tasks, index = problem.tasks, problem.device_index
    rows, transfers, moved = found.rows, schedule.transfers, found.moved
    for k in found.edges.tolist():
        i, j, size = problem.edges[k]  # (read only where an edge is suspect: none, when valid)
        a, b = rows[tasks[i]], rows[tasks[j]]
        at = -1 if moved is None else int(moved[k])
        yield size, a, b, index[a.device], index[b.device], transfers[at] if at >= 0 else None
