"""A schedule's transfer rows held as columns: what a timing engine's schedule carries.

A schedule of 60,000 tasks has 1.8 million transfers; as :class:`~schedkit.schedule.Transfer`
rows they took 0.75 GB. :class:`TransferTable` keeps them as arrays (task and device
indices, start and end times) beside the names they index and one route per device pair,
about 30 bytes a transfer, and behaves as the immutable sequence of rows it stands for:
``len``, iteration and indexing make the rows on demand, and it equals the list of those
rows. The validator's fast passes (:mod:`schedkit.schedule.bulk_checks`) and the JSON
writer (:func:`~schedkit.schedule.rows_json.text_chunks`) read the columns themselves.

Examples
--------
>>> table = TransferTable(src=[0], dst=[1], from_=[0], to=[1], start=[1.5], end=[2.0],
...                       tasks=["a", "b"], devices=["gpu", "cpu"], routes={(0, 1): ["gpu->cpu"]})
>>> len(table), table[0].from_, table[0].route
(1, 'gpu', ['gpu->cpu'])
>>> from schedkit.schedule import Transfer
>>> table == [Transfer(src="a", dst="b", **{"from": "gpu"}, to="cpu", start=1.5, end=2.0, route=["gpu->cpu"])]
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from schedkit.schedule.rows import Transfer, unchecked_rows

#: Rows made at once when iterating (a chunk's dicts are short-lived).
CHUNK = 4096


def _column(values, dtype, copy: bool = True) -> np.ndarray:
    # A copy, so that nobody else may change it, unless the caller gives its arrays up.
    array = np.array(values, dtype=dtype, copy=True if copy else None)
    array.flags.writeable = False
    return array


class TransferTable(Sequence):
    """Transfer rows as columns: row ``k`` is the edge ``tasks[src[k]] -> tasks[dst[k]]``
    moving from ``devices[from_[k]]`` to ``devices[to[k]]`` over ``[start[k], end[k])``,
    along ``routes[from_[k], to[k]]`` (``routes=None``: rows without a route).

    Parameters
    ----------
    src, dst, from_, to : array_like of int
        Task indices into ``tasks`` and device indices into ``devices``.
    start, end : array_like of float
    tasks, devices : sequence of str
        The names the indices stand for (a problem's own lists: they are not copied).
    routes : dict, optional
        ``(from, to) -> list of channel names``, for every device pair the rows use; the
        rows of one pair share its list, as the rows of a timing engine always did.
    edge : array_like of int, optional
        Each row's position in its problem's edges, as the engine that made it knows it: a
        hint, which the validator checks before it uses it (:func:`~schedkit.schedule.bulk_checks.table_edges`),
        and which is no part of the rows (nor of equality).
    copy : bool, default True
        ``False``: the table takes arrays of the right types as they are (made read-only),
        without a copy; the caller gives them up.

    Examples
    --------
    >>> t = TransferTable(src=[0, 1], dst=[1, 2], from_=[0, 1], to=[1, 0], start=[1.0, 3.0],
    ...                   end=[2.0, 4.5], tasks=["a", "b", "c"], devices=["gpu", "cpu"])
    >>> [(r.src, r.dst, r.to, r.end) for r in t]
    [('a', 'b', 'cpu', 2.0), ('b', 'c', 'gpu', 4.5)]
    >>> t[-1].start, [r.dst for r in t[:1]], t + [] == list(t)
    (3.0, ['b'], True)
    """

    __slots__ = ("src", "dst", "from_", "to", "start", "end", "tasks", "devices", "routes", "edge")
    __hash__ = None  # (equal to a list, which has none)

    def __init__(self, src, dst, from_, to, start, end, tasks: Sequence[str], devices: Sequence[str],
                 routes: dict | None = None, edge=None, copy: bool = True):
        # Indices in 32 bits: a problem of 2**31 tasks is far beyond any other limit.
        self.src, self.dst = _column(src, np.int32, copy), _column(dst, np.int32, copy)
        self.from_, self.to = _column(from_, np.int32, copy), _column(to, np.int32, copy)
        self.start, self.end = _column(start, np.float64, copy), _column(end, np.float64, copy)
        if len({len(self.src), len(self.dst), len(self.from_), len(self.to), len(self.start), len(self.end)}) > 1:
            raise ValueError("the columns of a transfer table differ in length")
        self.tasks, self.devices, self.routes = tasks, devices, routes
        self.edge = None if edge is None else _column(edge, np.int32, copy)
        if self.edge is not None and len(self.edge) != len(self.src):
            raise ValueError("the columns of a transfer table differ in length")

    def __len__(self) -> int:
        return len(self.src)

    def rows(self, lo: int = 0, hi: int | None = None) -> list[Transfer]:
        """The rows ``lo`` to ``hi`` (exclusive) as :class:`~schedkit.schedule.Transfer` rows."""
        tasks, devices, routes = self.tasks, self.devices, self.routes
        cut = slice(lo, hi)
        us, vs = self.from_[cut].tolist(), self.to[cut].tolist()
        paths = [None] * len(us) if routes is None else [routes[u, v] for u, v in zip(us, vs)]
        return unchecked_rows(Transfer, (
            {"src": tasks[i], "dst": tasks[j], "from_": devices[u], "to": devices[v], "start": s, "end": e,
             "route": path}
            for i, j, u, v, s, e, path in zip(self.src[cut].tolist(), self.dst[cut].tolist(), us, vs,
                                              self.start[cut].tolist(), self.end[cut].tolist(), paths)))

    def __getitem__(self, k):
        if isinstance(k, slice):
            lo, hi, step = k.indices(len(self))
            return self.rows(lo, max(lo, hi)) if step == 1 else [self[n] for n in range(lo, hi, step)]
        n = len(self)
        at = k + n if k < 0 else k
        if not 0 <= at < n:
            raise IndexError("transfer table index out of range")
        return self.rows(at, at + 1)[0]

    def __iter__(self):
        for lo in range(0, len(self), CHUNK):
            yield from self.rows(lo, lo + CHUNK)

    def __eq__(self, other):
        if isinstance(other, TransferTable) and self._same_names(other):
            return all(np.array_equal(getattr(self, c), getattr(other, c))
                       for c in ("src", "dst", "from_", "to", "start", "end")) and self._same_routes(other)
        if isinstance(other, (TransferTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def _same_names(self, other: TransferTable) -> bool:
        return ((self.tasks is other.tasks or list(self.tasks) == list(other.tasks))
                and list(self.devices) == list(other.devices) and (self.routes is None) == (other.routes is None))

    def _same_routes(self, other: TransferTable) -> bool:
        return self.routes is None or all(self.routes[pair] == other.routes[pair] for pair in self.pairs())

    def pairs(self) -> list[tuple[int, int]]:
        """The ``(from, to)`` device pairs the rows use, in order."""
        m = max(len(self.devices), 1)
        codes = np.flatnonzero(np.bincount(self.from_.astype(np.int64) * m + self.to, minlength=m * m))
        return list(zip((codes // m).tolist(), (codes % m).tolist()))

    def __add__(self, other):
        return list(self) + list(other)

    def __radd__(self, other):
        return list(other) + list(self)

    def __repr__(self) -> str:
        return repr(list(self))

    def __copy__(self):
        return self  # (immutable: its columns are read-only)

    def __deepcopy__(self, memo):
        return self

    def task_indices(self, task_index: dict) -> tuple[np.ndarray, np.ndarray]:
        """Each row's ``src`` and ``dst`` as indices of ``task_index`` (name to index; ``-1``: a
        name it lacks)."""
        index = np.fromiter((task_index.get(name, -1) for name in self.tasks), dtype=np.int64,
                            count=len(self.tasks))
        return index[self.src], index[self.dst]

    def device_indices(self, device_index: dict) -> tuple[np.ndarray, np.ndarray]:
        """Each row's ``from`` and ``to`` as indices of ``device_index`` (``-1``: a name it lacks)."""
        index = np.array([device_index.get(name, -1) for name in self.devices], dtype=np.int64)
        return index[self.from_], index[self.to]
