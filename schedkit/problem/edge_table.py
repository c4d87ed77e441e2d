"""The edges of a large problem as columns: three arrays in place of an object per edge.

A problem file of 60,000 tasks has about 1.8 million edges. As one
:class:`~schedkit.problem.spec.EdgeSpec` each they cost about 500 bytes and a few
microseconds apiece (a pydantic model, its ``__dict__`` and its set of given fields):
a gigabyte and seconds before a method starts. An :class:`EdgeTable` holds the same
edges as task indices and sizes, 16 bytes an edge, and is what ``ProblemSpec.edges``
holds when :mod:`schedkit.problem.bulk` loaded the edges in bulk. It is a read-only
sequence of ``EdgeSpec``: indexing or iterating makes each one, equal to the one the
file's row validates to, so that code written for a list of ``EdgeSpec`` reads it
unchanged (and ``model_dump`` writes the same rows). :class:`~schedkit.problem.Problem`
builds its edge lists from the columns directly (:func:`edge_lists`), and only when one is
read (:class:`EdgeLists`): its arrays, checks, HEFT and the validator read the columns.

Examples
--------
>>> import numpy as np
>>> table = EdgeTable(["a", "b", "c"], np.array([0, 1]), np.array([1, 2]), np.array([4.0, np.nan]))
>>> len(table), table[0]
(2, EdgeSpec(src='a', dst='b', size=4.0, transfer_times=None))
>>> [e.size for e in table]                    # NaN: the row gives no size
[4.0, None]
>>> table == list(table)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from schedkit.problem.spec import EdgeSpec

__all__ = ["EdgeLists", "EdgeTable", "edge_columns", "edge_count", "edge_lists", "largest_only"]

_new = EdgeSpec.__new__
_set = object.__setattr__


def _edge(src: str, dst: str, size: float) -> EdgeSpec:
    # What ``EdgeSpec.model_construct`` makes (the fields given: ``size`` only when the row
    # gave one), at a fifth of its cost: a model_dump of 1.8 million edges makes each.
    edge = _new(EdgeSpec)
    given = size == size  # NaN: not given
    _set(edge, "__dict__", {"src": src, "dst": dst, "size": size if given else None, "transfer_times": None})
    _set(edge, "__pydantic_fields_set__", {"src", "dst", "size"} if given else {"src", "dst"})
    _set(edge, "__pydantic_extra__", None)
    _set(edge, "__pydantic_private__", None)
    return edge


class EdgeTable(Sequence):
    """Edges as columns, read as a sequence of :class:`~schedkit.problem.spec.EdgeSpec`.

    Parameters
    ----------
    names : list of str
        The task names, in file order.
    src, dst : numpy.ndarray
        Per edge, the indices of its two tasks in ``names``.
    size : numpy.ndarray
        Per edge, its size; NaN where the row gives none (its source's ``output_size``).

    Examples
    --------
    >>> import numpy as np
    >>> table = EdgeTable(["a", "b"], np.array([0]), np.array([1]), np.array([2.5]))
    >>> table[-1].src, table[:1] == [EdgeSpec(src="a", dst="b", size=2.5)]
    ('a', True)
    """

    __slots__ = ("names", "src", "dst", "size")

    def __init__(self, names, src: np.ndarray, dst: np.ndarray, size: np.ndarray):
        self.names = names
        self.src = src
        self.dst = dst
        self.size = size

    def __len__(self) -> int:
        return len(self.size)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        size = float(self.size[k])  # IndexError past the end, as a list
        return _edge(self.names[self.src[k]], self.names[self.dst[k]], size)

    def __iter__(self):
        names = self.names
        return map(_edge, map(names.__getitem__, self.src.tolist()),
                   map(names.__getitem__, self.dst.tolist()), self.size.tolist())

    def __eq__(self, other) -> bool:
        # As a list of the same EdgeSpec compares: pydantic compares specs field by field.
        if isinstance(other, (EdgeTable, list)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # a list is not hashable either

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self):
        return EdgeTable, (self.names, self.src, self.dst, self.size)


def edge_lists(spec, task_index: dict, payload) -> tuple[list, list, list]:
    """``Problem.edges``, ``preds`` and ``succs`` of ``spec``.

    From an :class:`EdgeTable`, by C-level maps and zips over its columns (the edge's own
    size, else its source's ``output_size``); from a list of ``EdgeSpec``, edge by edge
    with ``payload(edge)`` the size (a :class:`~schedkit.problem.network.Payload` where the
    edge gives ``transfer_times``). ``preds[j]`` and ``succs[i]`` list each task's edges in
    file order either way.

    Examples
    --------
    >>> import numpy as np
    >>> from schedkit.problem.loading import parse_spec
    >>> spec = parse_spec({"devices": [{"name": "d"}], "tasks": [
    ...     {"name": n, "work": 1, "output_size": 3} for n in "abc"]})
    >>> table = EdgeTable(["a", "b", "c"], np.array([0, 0, 1]), np.array([2, 1, 2]), np.array([1.0, np.nan, 2.0]))
    >>> edges, preds, succs = edge_lists(spec.model_copy(update={"edges": table}), {"a": 0, "b": 1, "c": 2}, None)
    >>> edges
    [(0, 2, 1.0), (0, 1, 3.0), (1, 2, 2.0)]
    >>> preds[2], succs[0]
    ([(0, 1.0), (1, 2.0)], [(2, 1.0), (1, 3.0)])
    """
    n = len(task_index)
    table = spec.edges
    # Its indices are the spec's task numbers unless the tasks were replaced since (model_copy).
    if isinstance(table, EdgeTable) and table.names == list(task_index):
        # One int object per task, shared by every edge (as the task index's own values
        # are): ints read from the arrays would be new objects, 28 bytes each.
        ints = list(range(n))
        src = list(map(ints.__getitem__, memoryview(table.src)))  # no list of the indices between
        dst = list(map(ints.__getitem__, memoryview(table.dst)))
        sizes = table.size.tolist()
        if np.isnan(table.size).any():
            outputs = [t.output_size for t in spec.tasks]
            sizes = [outputs[i] if s != s else s for i, s in zip(src, sizes)]
        edges = list(zip(src, dst, sizes))
        src_keys, dst_keys = table.src, table.dst
    else:
        edges = [(task_index[e.src], task_index[e.dst], payload(e)) for e in table]
        if not edges:
            return edges, [[] for _ in range(n)], [[] for _ in range(n)]
        src, dst, sizes = map(list, zip(*edges))
        src_keys, dst_keys = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    return edges, _grouped(dst_keys, src, sizes, n), _grouped(src_keys, dst, sizes, n)


class EdgeLists:
    """``Problem.edges``, ``preds`` or ``succs``: the three built together by
    :func:`edge_lists` on the first read of one, then plain attributes of the problem.

    A problem bulk-loaded from 1.8 million edges holds them as columns already (its
    :class:`EdgeTable`, and ``Problem.arrays`` in CSR form); as lists of tuples they would be
    420 MB that HEFT, the bounds and the validator never read.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> p.preds[1], "succs" in vars(p)
    ([(0, 4000000.0)], True)
    """

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, problem, owner=None):
        if problem is None:
            return self
        # Stored in the instance: later reads find them there, not here (no __set__).
        cache = problem.__dict__
        cache["edges"], cache["preds"], cache["succs"] = edge_lists(problem.spec, problem.task_index,
                                                                     problem._payload)
        return cache[self.name]


def _grouped(keys: np.ndarray, other: list, sizes: list, n: int) -> list[list]:
    """Per task ``t``, ``(other[e], sizes[e])`` over the edges ``e`` with ``keys[e] == t``,
    in edge order (a stable sort, unless the edges come sorted, then one slice per task)."""
    if (keys[1:] < keys[:-1]).any():
        # The pairs permuted as an array of references: no int object per position (60 MB
        # at 1.8M edges), one C-level gather.
        order = np.argsort(keys, kind="stable")
        pairs = np.fromiter(zip(other, sizes), dtype=object, count=len(keys))[order].tolist()
    else:
        pairs = list(zip(other, sizes))
    bounds = np.concatenate(([0], np.cumsum(np.bincount(keys, minlength=n)))).tolist()
    return [pairs[a:b] for a, b in zip(bounds, bounds[1:])]


def edge_columns(spec, tasks: list) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(src, dst, size)`` of the edges of ``spec`` as arrays, read from its
    :class:`EdgeTable` (the floats of :func:`edge_lists`: a size not given is the source's
    ``output_size``); ``None`` when its edges are a list, or when ``tasks`` (the problem's
    task names) are no longer the table's (the tasks were replaced since).

    Examples
    --------
    >>> from schedkit.problem.loading import parse_spec
    >>> spec = parse_spec({"devices": [{"name": "d"}], "tasks": [
    ...     {"name": n, "work": 1, "output_size": 3} for n in "ab"]})
    >>> table = EdgeTable(["a", "b"], np.array([0]), np.array([1]), np.array([np.nan]))
    >>> edge_columns(spec.model_copy(update={"edges": table}), ["a", "b"])
    (array([0]), array([1]), array([3.]))
    >>> edge_columns(spec, ["a", "b"]) is None
    True
    """
    table = spec.edges
    if not isinstance(table, EdgeTable) or table.names != tasks:
        return None
    src, dst = table.src.astype(np.int64), table.dst.astype(np.int64)
    size = np.array(table.size, dtype=np.float64)
    missing = np.isnan(size)
    if missing.any():
        outputs = np.array([t.output_size for t in spec.tasks], dtype=np.float64)
        size[missing] = outputs[src[missing]]
    return src, dst, size


def edge_count(problem) -> int:
    """How many edges ``problem`` has, without building :attr:`Problem.edges` (a bulk-loaded
    problem builds its edge lists only when they are read: counting them must not).

    Examples
    --------
    >>> from schedkit import Problem
    >>> edge_count(Problem.load("examples/tiny.yaml"))
    6
    """
    return len(problem.spec.edges)


def largest_only(problem):
    """``problem`` for :func:`~schedkit.problem.network.check_finite_transfers`, which looks
    at its largest edge only: a view holding that edge alone when the edges came from an
    :class:`EdgeTable` (numpy finds it in the columns, the first of the largest as ``max``
    does, and ``Problem.edges`` is not built), else ``problem`` itself.

    Examples
    --------
    >>> from schedkit import Problem
    >>> largest_only(Problem.load("examples/tiny.yaml")).edges[:1]
    [(0, 1, 4000000.0)]
    """
    columns = edge_columns(problem.spec, problem.tasks)
    if columns is None:
        return problem
    src, dst, size = columns
    # The one entry of Problem.edges it stands for: task numbers and the size as Python numbers.
    largest = [] if not len(size) else [(int(src[k]), int(dst[k]), float(size[k])) for k in [int(np.argmax(size))]]
    return SimpleNamespace(**{**vars(problem), "edges": largest})
