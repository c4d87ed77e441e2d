"""The array core of a :class:`~schedkit.problem.Problem`: its graph and costs as numpy arrays.

The list-scheduling engines, the schedule assembly and the validator's bulk checks loop
over every edge for every device: on a graph of 300,000 edges and 50 devices that is
15 million transfer times, seconds in Python and milliseconds in numpy. This module
holds what those loops read, built once per problem (``Problem.arrays``):

- the adjacency in CSR form, both ways (``pred_ptr``/``pred_src``/``pred_size`` lists
  the inputs of each task in the order of ``Problem.preds``; ``succ_*`` likewise), and
  the edge list (``edge_src``, ``edge_dst``, ``edge_size``) in the order of ``Problem.edges``;
- the network as ``m x m`` matrices (``inv_bandwidth``, ``latency``, ``linked``), and where
  devices fall into *link classes* (servers: their ``group``), as ``classes x classes``
  tables: a task of many inputs on 1,024 devices in 128 servers has its inputs timed to
  128 classes (``arrivals``);
- the durations as one matrix per *device type*: ``type_durations[i, device_type[d]]``
  is the duration of task ``i`` on device ``d`` (``inf`` where it cannot run). Devices
  whose durations agree for every task share a type, so 1,024 devices of 3 kinds
  cost ``3 n`` floats, not ``1024 n``; a task given by ``work`` has ``work / speed``,
  an outer product.

Every value is the very float of the problem's own tables (the same products and sums
in the same order), so that an engine reading the arrays gives the schedule the
list-based code gives, float for float.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> a = p.arrays
>>> a.n, a.m, a.types
(6, 2, 2)
>>> a.preds_of(5)                                   # 'sample' reads 'logits'
(array([4]), array([100000.]))
>>> float(a.durations_of(5)[1]) == p.durations[5][1]
True
"""

from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from schedkit.problem.edge_table import edge_columns
from schedkit.problem.network import Payload

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.problem.problem import Problem


#: Inputs x devices from which arrivals are timed per link class: below, numpy's calls cost
#: more than the elements they save (3 inputs on 1,024 devices: 8.5 us a task per device, 12.5
#: per class; 25 inputs: 32 against 16).
CLASSES_FROM = 8192

#: Fewer devices than this: the tasks x devices table is cheap, and tells the kinds itself.
_KINDS_FROM = 64


class ProblemArrays:
    """The graph, network and durations of a problem as numpy arrays (see the module).

    Parameters
    ----------
    problem : Problem

    Attributes
    ----------
    n, m, types : int
        Tasks, devices and device types.
    pred_ptr, pred_src, pred_size : ndarray
        Inputs of task ``i``: ``pred_src[pred_ptr[i]:pred_ptr[i + 1]]`` with their sizes.
    succ_ptr, succ_dst, succ_size : ndarray
        Outputs of each task, likewise.
    edge_src, edge_dst, edge_size : ndarray
        The edges, in file order.
    payloads : dict
        Position in ``pred_src`` of each input that gives its own ``transfer_times``, to
        its ``{(u, v): time}`` table (these few are timed one by one).
    pred_payload, edge_payload : ndarray of bool
        Per task, whether one of its inputs is in ``payloads``; per edge, whether it is.
    inv_bandwidth, latency : ndarray
        ``m x m`` route tables (0 where the pair is not linked).
    linked : ndarray of bool
        ``linked[u, v]``: a path from ``u`` to ``v`` exists (or ``u == v``).
    device_type : ndarray of int
        Each device's type (its column of ``type_durations``).
    type_durations : ndarray
        ``n x types``: durations, ``inf`` where the task cannot run.
    link_class, class_inv, class_latency : ndarray or None
        Each device's link class and the route tables between classes (two distinct
        devices' entries are their classes'); ``None`` without such classes.

    Examples
    --------
    >>> from schedkit import Problem
    >>> a = ProblemArrays(Problem.load("examples/topcuoglu2002.json"))
    >>> a.n, a.m, int(a.pred_ptr[-1]) == len(a.edge_src)
    (10, 3, True)
    """

    def __init__(self, problem: Problem):
        n, m = len(problem.tasks), len(problem.devices)
        self.n, self.m = n, m
        # Bulk-loaded edges are read from their columns: Problem.edges is not built for them.
        columns = columns_read = edge_columns(problem.spec, problem.tasks)
        if columns is None:
            edges = problem.edges
            table = np.fromiter(chain.from_iterable(edges), dtype=np.float64, count=3 * len(edges)).reshape(-1, 3)
            columns = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), np.ascontiguousarray(table[:, 2])
        self.edge_src, self.edge_dst, self.edge_size = columns
        # Problem.preds and succs list the edges in file order: a stable sort by the other end.
        by_dst = np.argsort(self.edge_dst, kind="stable")
        self.pred_ptr = _offsets(self.edge_dst, n)
        self.pred_src, self.pred_size = self.edge_src[by_dst], self.edge_size[by_dst]
        by_src = np.argsort(self.edge_src, kind="stable")
        self.succ_ptr = _offsets(self.edge_src, n)
        self.succ_dst, self.succ_size = self.edge_dst[by_src], self.edge_size[by_src]
        # Inputs with their own transfer times (a Payload): few, timed one by one.
        self.payloads: dict[int, dict] = {}
        self.pred_payload = np.zeros(n, dtype=bool)
        count = len(self.edge_src)
        self.edge_payload = np.zeros(count, dtype=bool)
        where = np.empty(count, dtype=np.int64)
        where[by_dst] = np.arange(count)
        # An EdgeTable holds no transfer times: none of its edges is a Payload.
        kinds = np.fromiter(map(type, map(itemgetter(2), edges)), dtype=object, count=len(edges)) \
            if columns_read is None else np.zeros(0, dtype=object)
        for k in np.flatnonzero(kinds == Payload).tolist():
            _, j, size = edges[k]
            self.payloads[int(where[k])] = size.times
            self.pred_payload[j] = True
            self.edge_payload[k] = True
        self.inv_bandwidth = np.array(problem.inv_bandwidth, dtype=np.float64).reshape(m, m)
        self.latency = np.array(problem.latency, dtype=np.float64).reshape(m, m)
        self.linked = np.array(problem.linked, dtype=bool).reshape(m, m)
        kinds = _spec_kinds(problem)
        if kinds is not None:
            self.device_type, self.type_durations = kinds
        else:
            self.device_type, self.type_durations = _typed_durations(problem.durations, n, m)
        self.types = self.type_durations.shape[1]
        self.link_class, self.class_inv, self.class_latency = _link_classes(problem, self)
        # What arrivals() asks per task, once: whether an input carries no data, row numbers.
        self._zero_input = np.bincount(self.edge_dst[self.edge_size == 0], minlength=n) > 0
        self._rows = np.arange(int(np.diff(self.pred_ptr).max(initial=0)))
        self._own_type = self.types == m and bool((self.device_type == np.arange(m)).all())

    def preds_of(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The inputs of task ``i`` and their sizes (views, in the order of ``Problem.preds``)."""
        lo, hi = self.pred_ptr[i], self.pred_ptr[i + 1]
        return self.pred_src[lo:hi], self.pred_size[lo:hi]

    def durations_of(self, i: int) -> np.ndarray:
        """Duration of task ``i`` on every device (``inf`` where it cannot run)."""
        if self._own_type:  # every device a type of its own, in device order: the row itself
            return self.type_durations[i]
        return self.type_durations[i, self.device_type]

    def arrivals(self, i: int, device: np.ndarray, end: np.ndarray) -> np.ndarray:
        """When the last input of task ``i`` is on each device, its producers placed.

        ``device`` and ``end``: the device and end of every task (read for the inputs
        only). Per device ``d``: the largest ``end[p] + comm_time(size, device[p], d)`` over
        the inputs ``p`` (0 without inputs), the sum and product of
        :meth:`~schedkit.problem.Problem.comm_time` in its order. A device not linked to an
        input's device gets a number that means nothing: its caller rules such devices out.

        Examples
        --------
        >>> from schedkit import Problem
        >>> p = Problem.load("examples/tiny.yaml")
        >>> end = np.array([0.4, 1.6, 3.1, 3.3, 4.2, 0.0])
        >>> [round(float(t), 4) for t in p.arrays.arrivals(5, np.zeros(6, dtype=int), end)]
        [4.2, 4.2163]
        """
        lo, hi = self.pred_ptr[i], self.pred_ptr[i + 1]
        if lo == hi:
            return np.zeros(self.m)
        src = self.pred_src[lo:hi]
        size = self.pred_size[lo:hi]
        u = device[src]
        e = end[src]
        if self.link_class is not None and (hi - lo) * self.m >= CLASSES_FROM and not self.pred_payload[i]:
            return self._class_arrivals(i, size, u, e)
        # end + (size * inv_bandwidth + latency): comm_time's operations, in its order.
        times = size[:, None] * self.inv_bandwidth[u]
        times += self.latency[u]
        times += e[:, None]
        times[self._rows[:hi - lo], u] = e  # on the producer's own device nothing moves
        if self._zero_input[i]:  # an edge without data arrives when its producer ends
            zero = size == 0
            times[zero] = e[zero, None]
        if self.pred_payload[i]:
            for k in range(lo, hi):
                table = self.payloads.get(k)
                if table:
                    r = k - lo
                    for (a, b), own in table.items():
                        if a == u[r] and b != a:
                            times[r, b] = e[r] + own
        return times.max(axis=0)


    def _class_arrivals(self, i: int, size: np.ndarray, u: np.ndarray, e: np.ndarray) -> np.ndarray:
        """:meth:`arrivals` per link class: the inputs' times to each class (the same sum
        and product of the same floats), spread to its devices; the inputs' own devices,
        where nothing moves from there, apart."""
        cls = self.link_class
        cu = cls[u]
        times = size[:, None] * self.class_inv[cu]
        times += self.class_latency[cu]
        times += e[:, None]
        if self._zero_input[i]:  # an edge without data arrives when its producer ends
            zero = size == 0
            times[zero] = e[zero, None]
        ready = times.max(axis=0)[cls]
        # On the device of input p: input q as if it moved, or its end where it is there too.
        ready[u] = np.where(u[:, None] == u[None, :], e[:, None], times[:, cls[u]]).max(axis=0)
        return ready


def _link_classes(problem: Problem, arrays: ProblemArrays):
    """Devices in classes (their ``group``; a device without one alone) such that a route's
    bandwidth, latency and reach between two distinct devices depend on their classes only,
    with the ``classes x classes`` tables; ``(None, None, None)`` where that does not hold or
    every class would be one device. A cluster of 128 servers of 8 devices has 128 classes:
    a task's inputs are timed to 128 classes, not to 1,024 devices."""
    groups: dict = {}
    cls = np.array([groups.setdefault(d.group if d.group is not None else ("", k), len(groups))
                    for k, d in enumerate(problem.spec.devices)], dtype=np.int64)
    c, m = len(groups), arrays.m
    if c * 2 > m:
        return None, None, None
    first = np.full(c, -1, dtype=np.int64)
    second = np.full(c, -1, dtype=np.int64)
    for d in range(m - 1, -1, -1):  # the first two devices of each class
        second[cls[d]] = first[cls[d]]
        first[cls[d]] = d
    other = np.where(second >= 0, second, first)  # within a class: its first two devices
    rows = np.repeat(first, c)
    cols = np.tile(first, c)
    diagonal = rows == cols
    cols[diagonal] = other[cls[rows[diagonal]]]
    tables = []
    off = ~np.eye(m, dtype=bool)
    for full in (arrays.inv_bandwidth, arrays.latency, arrays.linked):
        table = full[rows, cols].reshape(c, c)
        if not (table[cls][:, cls][off] == full[off]).all():
            return None, None, None
        tables.append(table)
    return cls, tables[0], tables[1]


def _offsets(ends: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets of the edges grouped by ``ends`` (a task's edges sit at ``ptr[i]:ptr[i + 1]``)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ends, minlength=n), out=ptr[1:])
    return ptr


def _spec_kinds(problem: Problem) -> tuple[np.ndarray, np.ndarray] | None:
    """Durations per device kind read from one device of each kind, without a tasks x
    devices table, where the file says which devices agree (``None`` elsewhere).

    A task's duration on a device depends on the device's own ``durations`` entry, its
    type, its speed (``work``), its memory (what fits) and pins; where no task pins or
    names a device and there is no workload, devices of one (type, speed, memory) agree
    on every task: a cluster of 1,024 devices of 3 kinds needs 3 lookups per task. The
    first tasks are checked device by device all the same (``None`` on a difference).
    """
    spec, index = problem.spec, problem.device_index
    if spec.workload is not None or len(spec.devices) < _KINDS_FROM:
        return None
    for task in spec.tasks:
        if task.pin is not None or (task.durations is not None and any(key in index for key in task.durations)):
            return None
    kinds: dict[tuple, int] = {}
    device_type = np.array([kinds.setdefault((d.type, d.speed, d.memory), len(kinds)) for d in spec.devices],
                           dtype=np.int64)
    first = [int(np.flatnonzero(device_type == k)[0]) for k in range(len(kinds))]
    tables = problem.durations
    for table in tables[:64]:
        for d, kind in enumerate(device_type.tolist()):
            if table.get(d) != table.get(first[kind]):
                return None
    inf = math.inf
    columns = np.array([[table.get(d, inf) for d in first] for table in tables], dtype=np.float64)
    return device_type, columns.reshape(len(tables), len(first))


def _typed_durations(tables, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Durations per device type: devices with equal columns share one."""
    full = np.full((n, m), np.inf)
    counts = np.fromiter(map(len, tables), dtype=np.int64, count=n)
    total = int(counts.sum())
    devices = np.fromiter(chain.from_iterable(tables), dtype=np.int64, count=total)
    values = np.fromiter(chain.from_iterable(t.values() for t in tables), dtype=np.float64, count=total)
    full[np.repeat(np.arange(n), counts), devices] = values
    # Devices with byte-equal columns share a type, numbered by their first device.
    kinds: dict[bytes, int] = {}
    device_type = np.array([kinds.setdefault(full[:, d].tobytes(), len(kinds)) for d in range(m)],
                           dtype=np.int64)
    first = [list(device_type).index(k) for k in range(len(kinds))]
    return device_type, np.ascontiguousarray(full[:, first])
