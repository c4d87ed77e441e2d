"""Memory levels of the devices while a list scheduler places tasks (``memory_timeline``).

The semantics are those of the ``memory_timeline`` block (``DESIGN.md``): a device holds
the resident memory of its tasks (weights and static memory) at all times, plus

- ``deltas``: a positive activation from the task's start on, a negative one released at
  its end. A device runs one task at a time, so the level at a task's start depends only
  on the order of the device's tasks: placed in that order (no insertion into earlier
  gaps), a task fits when ``resident + max(peak so far, running sum + max(A, 0))`` fits.
- ``lifetime``: a task's output (``A >= 0``) from the task's start until its last local
  consumer and its last outgoing transfer end; a copy on each other consuming device from
  the earliest transfer of it there until the last consumer there ends. Those ends are
  unknown until every consumer is placed: until then an item is *open* and counted for
  ever. Counting more than the final schedule holds is safe, and every item is checked
  over its whole span when it is added, so the final levels fit.

A task that fits nowhere now is not a proof of anything: the list scheduler postpones
it until a placement frees memory (a release, or a consumer that closes an item), and
says so when nothing is left to try.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"name": "two", "devices": [{"name": "d", "memory": 3}],
...     "tasks": [{"name": "f", "work": 1, "activation_memory": 2},
...               {"name": "w", "work": 1, "activation_memory": -2},
...               {"name": "g", "work": 1, "activation_memory": 2}]})
>>> levels = MemoryLevels(p, "deltas")
>>> levels.place(0, 0, 0.0, 1.0, [0, -1, -1], [1.0, 0, 0]); levels.earliest(2, 0, 1.0) is None
True
>>> levels.place(1, 0, 1.0, 2.0, [0, 0, -1], [1.0, 2.0, 0]); levels.earliest(2, 0, 2.0)
2.0
"""

from __future__ import annotations

import math
from typing import Sequence

from schedkit.numerics import fits
from schedkit.problem import Problem


class MemoryLevels:
    """The level of every device as tasks are placed, in the block's ``mode``.

    Parameters
    ----------
    problem : Problem
    mode : {"deltas", "lifetime"}
        A formulation's :attr:`TimingRules.memory <schedkit.timing.rules.TimingRules.memory>`
        (see :meth:`TimingRules.levels <schedkit.timing.rules.TimingRules.levels>`).
    transfers : Transfers, optional
        The congestion timelines whose booked transfer times the schedule will carry
        (otherwise a transfer leaves when its producer ends).
    """

    def __init__(self, problem: Problem, mode: str, transfers=None):
        self.problem, self.mode, self.transfers = problem, mode, transfers
        m = len(problem.devices)
        self.resident = [0.0] * m
        # deltas: running sum of activations and the highest level of the activations so far
        self.running, self.peak = [0.0] * m, [0.0] * m
        # lifetime: per device, item key -> [start, end or inf, amount]
        self.items: list[dict[tuple, list]] = [{} for _ in range(m)]
        self.waiting = [len(s) for s in problem.succs]  # consumers not yet placed

    @property
    def keeps_order(self) -> bool:
        """Whether a device's tasks must be placed in time order (no insertion into gaps)."""
        return self.mode == "deltas"

    # ------------------------------------------------------------------ queries
    def earliest(self, i: int, d: int, ready: float, device: Sequence[int] | None = None,
                 end: Sequence[float] | None = None) -> float | None:
        """The earliest start ``>= ready`` at which task ``i`` fits on ``d`` as things stand
        (``None``: not before something else is placed). ``device`` and ``end``: the
        placements so far (``-1`` where none), for the inputs' copies."""
        p = self.problem
        cap = p.device_memory[d] - self.resident[d] - p.resident_memory[i]
        if self.mode == "deltas":
            level = max(self.peak[d], self.running[d] + max(p.activation_memory[i], 0.0))
            return ready if fits(level, cap) else None
        added = self._copies(i, d, device, end)
        own = p.activation_memory[i]
        if own > 0:
            added.append((ready, own))
        events = self._events(d)
        # The level must fit at every instant: the past holds the resident memory only,
        # from each new item's start on it holds the item too; the task may wait for a
        # known release before its own output starts.
        if not self._fit(events, added, cap):
            if own <= 0 or not self._fit(events, added[:-1], cap):
                return None
            for at in sorted({t for t, _ in events if t > ready}):
                if self._fit(events, added[:-1] + [(at, own)], cap):
                    return at
            return None
        return ready

    # ------------------------------------------------------------------ updates
    def place(self, i: int, d: int, start: float, finish: float, device: Sequence[int],
              end: Sequence[float]) -> None:
        """Record task ``i`` on ``d`` over ``[start, finish)``; ``device`` and ``end`` hold it."""
        p = self.problem
        self.resident[d] += p.resident_memory[i]
        if self.mode == "deltas":
            a = p.activation_memory[i]
            self.peak[d] = max(self.peak[d], self.running[d] + max(a, 0.0))
            self.running[d] += a
            return
        own = p.activation_memory[i]
        if own > 0:
            self.items[d][("out", i)] = [start, finish if not p.succs[i] else math.inf, own]
        for (q, size), (at, _) in zip(p.preds[i], self._inputs(i, d, device, end)):
            a = p.activation_memory[q]
            if at is not None and a > 0:
                item = self.items[d].setdefault(("copy", q), [at, math.inf, a])
                item[0] = min(item[0], at)
            self.waiting[q] -= 1
            if self.waiting[q] == 0:
                self._close(q, device, end)

    # ------------------------------------------------------------------ lifetime helpers
    def _inputs(self, i: int, d: int, device, end) -> list[tuple[float | None, float]]:
        """Per input of ``i`` on ``d``: the start and end of its transfer (``None``: local)."""
        p, out = self.problem, []
        for q, size in p.preds[i]:
            u = device[q]
            if u == d or not p.moves(size, u, d):
                out.append((None, end[q]))
                continue
            booked = None if self.transfers is None else self.transfers.booked.get((q, i))
            # (a congestion booking is known only once the task is placed: before, the
            # producer's end is the earliest a transfer leaves, which counts the copy longer)
            out.append(booked if booked is not None else (end[q], end[q] + p.comm_time(size, u, d)))
        return out

    def _copies(self, i: int, d: int, device, end) -> list[tuple[float, float]]:
        """The new memory on ``d`` of ``i``'s inputs: ``(from, amount)`` per copy or longer copy."""
        p, added = self.problem, []
        if device is None:
            return added
        for (q, _), (at, _) in zip(p.preds[i], self._inputs(i, d, device, end)):
            a = p.activation_memory[q]
            if at is None or a <= 0:
                continue
            item = self.items[d].get(("copy", q))
            if item is None:
                added.append((at, a))
            elif at < item[0]:
                added.append((at, a))       # held earlier than it was: the extra span counts
                added.append((item[0], -a))
        return added

    def _close(self, q: int, device, end) -> None:
        """Every consumer of ``q`` is placed: its output and copies end where they are last used."""
        p = self.problem
        u = device[q]
        last: dict[int, float] = {}
        out_end = end[q]
        for j, size in p.succs[q]:
            v = device[j]
            last[v] = max(last.get(v, -math.inf), end[j])
            if v != u and p.moves(size, u, v):
                booked = None if self.transfers is None else self.transfers.booked.get((q, j))
                out_end = max(out_end, booked[1] if booked else end[q] + p.comm_time(size, u, v))
            elif v == u:
                out_end = max(out_end, end[j])
        if ("out", q) in self.items[u]:
            self.items[u][("out", q)][1] = out_end
        for v, finish in last.items():
            if ("copy", q) in self.items[v]:
                self.items[v][("copy", q)][1] = finish

    def _events(self, d: int) -> list[tuple[float, float]]:
        """``(time, change)`` of the level of ``d`` (releases sort before additions)."""
        events = []
        for start, finish, amount in self.items[d].values():
            events.append((start, amount))
            if finish != math.inf:
                events.append((finish, -amount))
        return events

    @staticmethod
    def _fit(events, added, cap: float) -> bool:
        level = 0.0
        for _, change in sorted(events + list(added)):
            level += change
            if not fits(level, cap):
                return False
        return fits(0.0, cap)
