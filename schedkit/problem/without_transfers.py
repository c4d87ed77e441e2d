"""The problem whose edges carry no data: what a formulation without transfer times asks.

A formulation whose ``precedence`` does not delay edges by their data
(``precedence: {communication: false}``, the ``jssp`` preset), and that has no ``channels``,
``congestion`` or memory timeline to give transfers a meaning of their own, judges a
schedule as if no edge carried data: a task may start as soon as its predecessors end, on
any device. Every method times its schedules with the problem's transfers, so
:meth:`~schedkit.methods.Method.result` gives it :func:`without_transfers` of the problem
instead: the same tasks, devices and edges, each edge of size 0. Its schedules are the
formulation's schedules of the problem, and its bounds the formulation's bounds (with the
transfers, a fork of two tasks on two devices ended 13 where it ends 3).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> q = without_transfers(p)
>>> q.tasks == p.tasks, [size for _, _, size in q.edges][:3], q.comm_time(0.0, 0, 1)
(True, [0.0, 0.0, 0.0], 0.0)
>>> without_transfers(q) is q      # nothing to remove
True
"""

from __future__ import annotations

import numpy as np

from schedkit.problem.edge_table import EdgeTable, edge_columns

__all__ = ["without_transfers", "carries_data"]


def carries_data(problem) -> bool:
    """Whether some edge of ``problem`` has data to move (a size, or a transfer time of its own)."""
    columns = edge_columns(problem.spec, problem.tasks)
    if columns is not None:
        return bool((columns[2] > 0).any())
    return any(float(size) > 0 or getattr(size, "times", None) for _, _, size in problem.edges)


def without_transfers(problem):
    """``problem`` with every edge of size 0 and no transfer times of its own; ``problem``
    itself when no edge carries data (:func:`carries_data`).

    Where some devices have no link path between them, data still cannot cross from one to
    the other (the formulation's ``precedence`` says so): each edge that carries data keeps its
    size and takes 0 time between every two linked devices (``transfer_times``), so the pairs
    it may use stay those of ``problem``. Edges loaded in bulk (an
    :class:`~schedkit.problem.edge_table.EdgeTable`) give no transfer times: such a problem is
    returned as it is, its schedules timed with the transfers.
    """
    from schedkit.problem.problem import Problem

    if not carries_data(problem):
        return problem
    spec = problem.spec
    n = len(problem.devices)
    linked = [(u, v) for u in range(n) for v in range(n) if u != v and problem.linked[u][v]]
    if len(linked) == n * (n - 1):
        if isinstance(spec.edges, EdgeTable):
            table = spec.edges
            edges = EdgeTable(table.names, table.src, table.dst, np.zeros(len(table)))
        else:
            edges = [edge.model_copy(update={"size": 0.0, "transfer_times": None}) for edge in spec.edges]
    elif isinstance(spec.edges, EdgeTable):
        return problem
    else:
        instant = {f"{problem.devices[u]}->{problem.devices[v]}": 0.0 for u, v in linked}
        edges = [edge.model_copy(update={"transfer_times": instant}) if spec.edge_size(edge) > 0 else
                 edge.model_copy(update={"transfer_times": None}) for edge in spec.edges]
    return Problem(spec.model_copy(update={"edges": edges}))
