"""Transfers that wait for their channels and ports: the timelines of a ``congestion`` formulation.

Without congestion a transfer is a delay: it leaves when its source ends and arrives
:func:`~schedkit.timing.resources.arrival` later. With a ``congestion`` block, a transfer
holds every resource :meth:`Problem.occupies <schedkit.problem.Problem.occupies>` names
(the channels of its route, its two ports, or both) for its whole duration, and two
transfers never hold one resource at once. :class:`Transfers` keeps one
:class:`~schedkit.timing.resources.Timeline` per resource and books each transfer into
the earliest gap that every resource it holds has free (insertion), no earlier than its
source ends. Every timing engine books through it, and :func:`~schedkit.timing.to_schedule`
writes the booked times into the transfer rows.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> gpu, cpu = p.device_index["gpu0"], p.device_index["cpu"]
>>> moves = Transfers(p, "port")
>>> moves.book(0, 1, 4e6, gpu, cpu, 1.0)      # embed -> attn, the gpu0:send port is free
(1.0, 1.26)
>>> moves.book(0, 2, 4e6, gpu, cpu, 1.1)      # waits for the port until 1.26
(1.26, 1.52)
>>> Transfers(p, None).book(0, 2, 4e6, gpu, cpu, 1.1)   # no congestion: a delay
(1.1, 1.36)
"""

from __future__ import annotations

from typing import Sequence

from schedkit.problem import Problem
from schedkit.timing.resources import Timeline

__all__ = ["Transfers"]


class Transfers:
    """The transfers of one schedule being built, on channel and port timelines.

    Parameters
    ----------
    problem : Problem
    resource : {"channel", "port", "both"} or None
        What transfers contend for (a formulation's
        :attr:`TimingRules.congestion <schedkit.timing.rules.TimingRules.congestion>`, see
        :meth:`TimingRules.transfers <schedkit.timing.rules.TimingRules.transfers>`); ``None``:
        nothing, each transfer leaves when its source ends.
    holds : Holds, optional
        The units of the resources tasks hold (a formulation's
        :attr:`TimingRules.resources <schedkit.timing.rules.TimingRules.resources>`): they
        travel with the transfer timelines, so that every engine given a schedule's shared
        timelines books its holders too.

    Attributes
    ----------
    booked : dict
        ``(src task, dst task) -> (start, end)`` of every transfer booked so far.
    """

    __slots__ = ("problem", "resource", "holds", "booked", "_lines", "_held")

    def __init__(self, problem: Problem, resource: str | None, holds=None):
        self.problem = problem
        self.resource = resource
        self.holds = holds
        self.booked: dict[tuple[int, int], tuple[float, float]] = {}
        self._lines: dict[str, Timeline] = {}
        m = len(problem.devices)
        self._held = [[problem.occupies(u, v, resource) if resource else () for v in range(m)]
                      for u in range(m)]

    @property
    def congested(self) -> bool:
        """Whether transfers wait for resources (a ``congestion`` formulation)."""
        return self.resource is not None

    def slot(self, ready: float, length: float, u: int, v: int,
             tentative: Sequence[tuple[tuple[str, ...], float, float]] = ()) -> float:
        """Earliest start, at or after ``ready``, of a transfer of ``length`` from ``u`` to ``v``.

        ``tentative``: ``(resources, start, end)`` of transfers planned but not booked
        (see :meth:`arrivals`), which hold their resources as booked ones do.
        """
        held = self._held[u][v]
        if not held:
            return ready
        t = ready
        while True:
            moved = False
            for name in held:
                line = self._lines.get(name)
                if line is not None:
                    at = line.earliest(t, length, insertion=True)
                    if at > t:
                        t, moved = at, True
                for resources, start, end in tentative:
                    if name in resources and start < t + length and t < end:
                        t, moved = end, True
            if not moved:
                return t

    def book(self, i: int, j: int, size: float, u: int, v: int, ready: float) -> tuple[float, float]:
        """Book the transfer of edge ``(i, j)`` from ``u`` to ``v``, its source done at ``ready``.

        Returns its ``(start, end)``; ``end`` is when the data is on ``v``. An edge that
        makes no transfer (one device, no data, zero time) is not booked: ``(ready, ready)``.
        """
        p = self.problem
        if not p.moves(size, u, v):
            return ready, ready
        length = p.comm_time(size, u, v)
        start = self.slot(ready, length, u, v)
        self.hold(i, j, u, v, start, start + length)
        return start, start + length

    def hold(self, i: int, j: int, u: int, v: int, start: float, end: float) -> None:
        """Book the transfer of edge ``(i, j)`` from ``u`` to ``v`` over ``[start, end)``, as
        given (a read-back that ordered the transfers itself)."""
        for name in self._held[u][v]:
            line = self._lines.get(name)
            if line is None:
                line = self._lines[name] = Timeline()
            line.add(start, end)
        self.booked[i, j] = (start, end)

    def arrivals(self, j: int, v: int, device: Sequence[int], end: Sequence[float],
                 commit: bool = False) -> float:
        """When every input of task ``j`` is on device ``v``: the latest arrival.

        Inputs are sent in the order their sources end (ties: lower task index), each into
        the earliest slot its resources leave free, the inputs sent before it included.
        Without ``commit`` nothing is booked (a device rule weighing candidates); with it,
        the same slots are booked.
        """
        p = self.problem
        ready = 0.0
        planned: list[tuple[tuple[str, ...], float, float]] = []
        chosen = []
        for i, size in sorted(p.preds[j], key=lambda edge: (end[edge[0]], edge[0])):
            u = device[i]
            at = end[i]
            if p.moves(size, u, v):
                length = p.comm_time(size, u, v)
                start = self.slot(at, length, u, v, planned)
                at = start + length
                planned.append((self._held[u][v], start, at))
                chosen.append((i, u, start, at))
            if at > ready:
                ready = at
        if commit:
            for i, u, start, at in chosen:
                self.hold(i, j, u, v, start, at)
        return ready
