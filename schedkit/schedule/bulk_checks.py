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

The blocks' fast passes read the rows through the same helpers (:func:`task_table`,
:func:`edge_transfer_rows`, :func:`devices_apart`); within one verdict
(:func:`shared_reads`) a field of the transfer rows is read once for all of them. A
:class:`~schedkit.schedule.TransferTable` is read from its columns, without a row.

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

from contextlib import contextmanager
from contextvars import ContextVar
from itertools import repeat
from operator import attrgetter

import numpy as np

from schedkit.numerics import DURATION_TOL, ROUNDING_ULPS
from schedkit.schedule.transfer_table import TransferTable

#: Rows checked at once by the passes that go block by block (their arrays' memory).
BLOCK = 1 << 18


def transfers_pass(problem, schedule, rows: dict, tol: float, end: np.ndarray | None = None) -> bool:
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
    end : ndarray, optional
        The transfer rows' ends, when the caller has read them (:func:`row_ends`).
    """
    moved = schedule.transfers
    if not moved:
        return True
    count = len(moved)
    src, dst = transfer_tasks(problem, moved)
    if min(src.min(), dst.min()) < 0:
        return False  # a name the problem lacks: the scalar checks word it
    table = task_table(problem, rows)
    if table is None:
        return False
    on, _, source_end = table
    # Each row goes between its tasks' devices: its names equal theirs (as the scalar
    # check compares them; cheaper than looking every name up).
    if isinstance(moved, TransferTable):
        sent = (moved.from_, moved.to) if moved.devices is problem.devices else \
            moved.device_indices(problem.device_index)  # (a name the problem lacks: -1, no index)
    else:
        names = np.array(problem.devices, dtype=object)
        for field, tasks in (("from_", src), ("to", dst)):
            if not (np.fromiter(map(attrgetter(field), moved), dtype=object, count=count) == names[on[tasks]]).all():
                return False
        sent = None
    edge = table_edges(problem, moved)
    if edge is None:
        edge = _named_edges(problem, src, dst)
        if edge is None:
            return False
    start = row_ends(moved, "start")
    end = row_ends(moved) if end is None else end
    if not (np.isfinite(start).all() and np.isfinite(end).all()):
        return False
    # Row by row, a block at a time: a block's arrays, not 15 arrays of every row, at once.
    for lo in range(0, count, BLOCK):
        cut = slice(lo, lo + BLOCK)
        i, j, k = src[cut], dst[cut], edge[cut]
        u, v = on[i], on[j]
        if sent is not None and not ((sent[0][cut] == u).all() and (sent[1][cut] == v).all()):
            return False
        if not _timed_right(problem, k, u, v, start[cut], end[cut], source_end[i], tol):
            return False
    return True


def _timed_right(problem, edge, u, v, start, end, ready, tol: float) -> bool:
    """Whether no row of a block (its edges, devices, times and its sources' ends ``ready``)
    starts before its source ends or lasts less than its transfer time, where its pair is allowed."""
    a = problem.arrays
    size = a.edge_size[edge]
    still = (u == v) | (size == 0)
    allowed = still | a.linked[u, v]
    # comm_time: 0 on one device or without data; else its product and sum, in its order.
    need = size * a.inv_bandwidth[u, v]
    need += a.latency[u, v]
    need[still] = 0.0
    for k in np.flatnonzero(a.edge_payload[edge] & allowed & (u != v)).tolist():
        need[k] = problem.comm_time(problem.edges[int(edge[k])][2], int(u[k]), int(v[k]))
    early = start < ready - tol
    run = end - start
    short = (run < need) & ~lasting(run, need, end)
    return not (allowed & (early | short)).any()


def _named_edges(problem, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Each row's edge, when every row names an edge, once (else ``None``)."""
    a = problem.arrays
    n = a.n
    # The problem's edges are distinct pairs. Both sides sorted, so that the search walks
    # forward (several times faster than random keys).
    keys = src.astype(np.int64) * n + dst
    order = np.argsort(keys)
    ordered = keys[order]
    edge_keys = a.edge_src * n + a.edge_dst
    by_key = np.argsort(edge_keys)
    sorted_keys = edge_keys[by_key]
    if _repeats(ordered) or _repeats(sorted_keys) or not len(sorted_keys):
        return None
    at = np.minimum(np.searchsorted(sorted_keys, ordered), len(sorted_keys) - 1)
    if not np.array_equal(sorted_keys[at], ordered):
        return None
    edge = np.empty(len(keys), dtype=np.int64)
    edge[order] = by_key[at]
    return edge


def table_edges(problem, moved) -> np.ndarray | None:
    """Each row's position in ``problem.edges``, from the hint of a
    :class:`~schedkit.schedule.TransferTable` that an engine made of ``problem`` (its
    ``edge`` column), once checked: every row's tasks are those of its edge, and the
    positions rise (no edge listed twice). ``None`` when there is no such hint or it fails
    (the checks then find the edges by name, as for any rows).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> [p.edges[k][:2] for k in table_edges(p, s.transfers)] == [
    ...     (p.task_index[t.src], p.task_index[t.dst]) for t in s.transfers]
    True
    """
    if not isinstance(moved, TransferTable) or moved.edge is None or moved.tasks is not problem.tasks:
        return None

    def read():
        a, edge = problem.arrays, moved.edge
        count = len(edge)
        if count and (edge.min() < 0 or edge.max() >= len(a.edge_src)):
            return None
        if count > 1 and not (edge[1:] > edge[:-1]).all():
            return None
        if not (np.array_equal(a.edge_src[edge], moved.src) and np.array_equal(a.edge_dst[edge], moved.dst)):
            return None
        return edge
    found = _shared(("edges", id(problem), id(moved)), (problem, moved), lambda: (read(),))
    return found[0]


def lasting(run: np.ndarray, need: np.ndarray, at: np.ndarray) -> np.ndarray:
    """:func:`~schedkit.numerics.lasts` elementwise, with its very float operations:
    ``|run - need| <= DURATION_TOL |need| + ROUNDING_ULPS ulp(|at|)`` (``False`` where ``at``
    is infinite: the scalar check then judges).

    Examples
    --------
    >>> lasting(np.array([1.0, 1.0 - 1e-6]), np.array([1.0, 1.0]), np.array([1999.0, 1999.0])).tolist()
    [True, False]
    """
    return np.abs(run - need) <= DURATION_TOL * np.abs(need) + ROUNDING_ULPS * np.spacing(np.abs(at))


def devices_apart(problem, tasks, tol: float) -> bool:
    """Whether no two rows of ``tasks`` on one device overlap by more than ``tol``: the
    ``no_overlap`` block's check has nothing to say (``False``: it may, and judges).

    Its rows, by device in ``(start, end)`` order (a stable sort, as the check's), each start
    no earlier than every earlier row's end less ``tol``; the check also lets rows of zero
    length (within ``tol``) be, so this may say ``False`` where it says nothing, never the
    reverse.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> devices_apart(p, s.tasks, 0.0), devices_apart(p, s.tasks + s.tasks[:1], 0.0)
    (True, False)
    """
    count = len(tasks)
    device = np.fromiter(map(problem.device_index.get, map(attrgetter("device"), tasks), repeat(-1)),
                         dtype=np.int64, count=count)
    start = np.fromiter(map(attrgetter("start"), tasks), dtype=np.float64, count=count)
    end = np.fromiter(map(attrgetter("end"), tasks), dtype=np.float64, count=count)
    if count and device.min() < 0 or not (np.isfinite(start).all() and np.isfinite(end).all()):
        return False  # (an unknown device, or times a sort orders otherwise than numpy)
    order = np.lexsort((end, start, device))
    device, start, end = device[order], start[order], end[order]
    cuts = np.flatnonzero(np.diff(device)) + 1
    for lo, hi in zip(np.concatenate(([0], cuts)).tolist(), np.concatenate((cuts, [count])).tolist()):
        latest = np.maximum.accumulate(end[lo:hi - 1])  # (the largest end before each row)
        if (start[lo + 1:hi] < latest - tol).any():
            return False
    return True


#: The arrays read from a schedule's rows within :func:`shared_reads` (``None`` outside).
_READS: ContextVar[dict | None] = ContextVar("schedkit_row_reads", default=None)


@contextmanager
def shared_reads():
    """Within this context, the arrays read from a schedule's transfer rows (:func:`row_ends`,
    :func:`transfer_tasks`) are read once and shared by every check that asks (read-only).

    Reading a field of 1.8 million rows costs a tenth of a second, and the structural checks
    and the ``precedence`` block read the same ones; the validator opens this context for one
    verdict, during which no row changes. Outside it, every call reads the rows afresh (a row
    may have changed in place since).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> rows = list(solve(Problem.load("examples/tiny.yaml"), "heft").transfers)
    >>> with shared_reads():
    ...     row_ends(rows) is row_ends(rows)
    True
    >>> row_ends(rows) is row_ends(rows)
    False
    """
    token = _READS.set({})
    try:
        yield
    finally:
        _READS.reset(token)


def _shared(key: tuple, owners: tuple, read):
    """``read()``, or what it gave for ``key`` within :func:`shared_reads`; ``owners`` (the
    objects ``key`` names by ``id``) are held with it, so that no other object takes their ids."""
    memo = _READS.get()
    if memo is None:
        return read()
    hit = memo.get(key)
    if hit is not None and all(x is y for x, y in zip(hit[0], owners)):
        return hit[1]
    value = read()
    for array in value if isinstance(value, tuple) else (value,):
        if array is not None:
            array.flags.writeable = False  # (shared: no reader may change it for the others)
    memo[key] = (owners, value)
    return value


def row_ends(moved, field: str = "end") -> np.ndarray:
    """The ``end`` (or ``field``) of every row of ``moved``, as floats (of a
    :class:`~schedkit.schedule.TransferTable`, its read-only column).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> s = solve(Problem.load("examples/tiny.yaml"), "heft")
    >>> row_ends(s.transfers).tolist() == [t.end for t in s.transfers]
    True
    """
    if isinstance(moved, TransferTable):
        return getattr(moved, field)  # (a read-only column)
    return _shared((field, id(moved)), (moved,), lambda: np.fromiter(
        map(attrgetter(field), moved), dtype=np.float64, count=len(moved)))


def transfer_tasks(problem, moved) -> tuple[np.ndarray, np.ndarray]:
    """The task indices of every row's ``src`` and ``dst`` (``-1``: a name ``problem`` lacks),
    read-only (of an engine's :class:`~schedkit.schedule.TransferTable`, its own 32-bit columns).

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")
    >>> src, dst = transfer_tasks(p, s.transfers)
    >>> [(p.tasks[i], p.tasks[j]) for i, j in zip(src, dst)] == [(t.src, t.dst) for t in s.transfers]
    True
    """
    def read():
        index, count = problem.task_index, len(moved)
        if isinstance(moved, TransferTable):
            if moved.tasks is problem.tasks:  # (an engine's table: its indices are the problem's)
                return moved.src, moved.dst
            return moved.task_indices(index)
        return tuple(np.fromiter(map(index.get, map(attrgetter(field), moved), repeat(-1)), dtype=np.int64,
                                 count=count) for field in ("src", "dst"))
    return _shared(("tasks", id(problem), id(moved)), (problem, moved), read)


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
    hinted = table_edges(problem, moved)
    if hinted is not None:  # (each edge listed at most once)
        out = np.full(len(a.edge_src), -1, dtype=np.int64)
        out[hinted] = np.arange(count)
        return out
    src, dst = transfer_tasks(problem, moved)
    keys = src.astype(np.int64) * n + dst
    keys[(src < 0) | (dst < 0)] = -1  # (edge keys are never negative)
    order = np.argsort(keys)
    ordered = keys[order]
    if _repeats(ordered):
        # A stable sort keeps rows of one key in list order: the last of a run is the last row.
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
    edge_keys = a.edge_src * n + a.edge_dst
    by_key = np.argsort(edge_keys)  # (sorted needles: the search walks forward)
    at = np.searchsorted(ordered, edge_keys[by_key], side="right") - 1
    safe = np.maximum(at, 0)
    out = np.empty(len(edge_keys), dtype=np.int64)
    out[by_key] = np.where((at >= 0) & (ordered[safe] == edge_keys[by_key]), order[safe], -1)
    return out


def _repeats(ordered: np.ndarray) -> bool:
    """Whether a sorted array holds a value twice (cheaper than ``np.unique``'s hash table)."""
    return bool(len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any())
