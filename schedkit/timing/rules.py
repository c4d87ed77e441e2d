"""What a formulation asks of timing, derived once from its blocks: :class:`TimingRules`.

A block that changes how schedules are timed says so through one hook,
:meth:`Block.timing_rules <schedkit.blocks.Block.timing_rules>`: ``congestion`` makes
transfers hold a resource, ``memory_timeline`` makes tasks wait for memory, a block whose
:meth:`~schedkit.blocks.Block.edge_delays` is not ``None`` orders the edges, and a block of
one's own may make a set of tasks hold a shared :class:`~schedkit.timing.holds.Resource`. Every consumer
(the MILP's build, horizon and read-back, CP-SAT's read-back, the subset bounds, the
heuristics, the timing engines) asks a :class:`TimingRules` instead of looking for blocks
by kind, so a new block that changes timing touches its own module and the engines that
honour the rule, nothing else.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.blocks import Congestion, MemoryTimeline, Precedence
>>> p = Problem.load("examples/tiny.yaml")
>>> rules = TimingRules.of([Precedence(), Congestion(resource="port")], p)
>>> rules
TimingRules(congestion='port', memory=None, ordered_edges=True, communication=True, resources=())
>>> rules.transfers(p).congested, rules.levels(p) is None, rules.waits
(True, True, False)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from schedkit.timing.holds import Holds, Resource
from schedkit.timing.memory_levels import MemoryLevels
from schedkit.timing.transfers import Transfers

__all__ = ["TimingRules", "Resource", "CONGESTION", "MEMORY_MODES"]

#: What transfers may contend for (``None``: nothing, a transfer is a delay).
CONGESTION = (None, "channel", "port", "both")
#: How memory levels are counted (``None``: no timeline, tasks never wait for memory).
MEMORY_MODES = (None, "deltas", "lifetime")


@dataclass(frozen=True)
class TimingRules:
    """The timing facts of a formulation on one problem.

    Attributes
    ----------
    congestion : {None, "channel", "port", "both"}
        What transfers hold for their whole duration, so that two never overlap on it
        (:class:`~schedkit.timing.transfers.Transfers`); ``None``: a transfer is a delay.
    memory : {None, "deltas", "lifetime"}
        The memory-timeline mode whose levels tasks wait for
        (:class:`~schedkit.timing.memory_levels.MemoryLevels`); ``None``: no timeline.
    ordered_edges : bool
        Some block makes every destination start after its source ends: heads, tails and
        the bounds derived from them hold.
    communication : bool
        And after its data arrived (the transfer time counts).
    resources : tuple of Resource
        Resources that tasks hold for their whole run, at most ``capacity`` holders at once
        (:class:`~schedkit.timing.holds.Holds`); a block adds its own to the tuple.

    Examples
    --------
    >>> TimingRules().replace(memory="lifetime").waits
    True
    >>> TimingRules(congestion="bus")
    Traceback (most recent call last):
    ...
    ValueError: timing rules: congestion 'bus' is not one of None, 'channel', 'port', 'both'
    >>> engine = Resource("engine", frozenset({"attn"}))
    >>> TimingRules(resources=(engine, engine))
    Traceback (most recent call last):
    ...
    ValueError: timing rules: resource 'engine' is given twice
    """

    congestion: str | None = None
    memory: str | None = None
    ordered_edges: bool = False
    communication: bool = False
    resources: tuple[Resource, ...] = ()

    def __post_init__(self):
        # (a misspelt rule would time schedules the validator then rejects: say so at once)
        for name, known in (("congestion", CONGESTION), ("memory", MEMORY_MODES)):
            value = getattr(self, name)
            if value not in known:
                raise ValueError(f"timing rules: {name} {value!r} is not one of "
                                 f"{', '.join(repr(k) for k in known)}")
        if not isinstance(self.resources, tuple) or not all(isinstance(r, Resource) for r in self.resources):
            raise ValueError(f"timing rules: resources {self.resources!r} is not a tuple of Resource")
        seen = set()
        for resource in self.resources:
            if resource.name in seen:
                raise ValueError(f"timing rules: resource '{resource.name}' is given twice")
            seen.add(resource.name)

    @classmethod
    def of(cls, blocks: Iterable, problem) -> TimingRules:
        """The rules the ``blocks`` of a formulation contribute on ``problem``, in their order.

        Each block's :meth:`~schedkit.blocks.Block.timing_rules` receives the rules so far
        and returns them, changed or not.

        Examples
        --------
        >>> from schedkit import Problem
        >>> from schedkit.blocks import MemoryTimeline, NoOverlap
        >>> p = Problem.load("examples/tiny.yaml")
        >>> TimingRules.of([NoOverlap()], p) == TimingRules()
        True
        """
        rules = cls()
        for block in blocks:
            rules = block.timing_rules(rules, problem)
        return rules

    def replace(self, **changes) -> TimingRules:
        """A copy with ``changes`` (what a block's hook returns)."""
        return dataclasses.replace(self, **changes)

    def changed(self) -> frozenset[str]:
        """The names of the rules that differ from the defaults (what a block contributes
        when applied alone to ``TimingRules()``).

        Examples
        --------
        >>> sorted(TimingRules(congestion="port", ordered_edges=True).changed())
        ['congestion', 'ordered_edges']
        """
        default = TimingRules()
        return frozenset(f.name for f in dataclasses.fields(self)
                         if getattr(self, f.name) != getattr(default, f.name))

    @property
    def times_transfers(self) -> bool:
        """Whether an edge's data takes time under these rules: it delays its destination
        (``communication``), or its transfer holds a channel, a port or memory. Where not, a
        schedule is the same as on the problem whose edges carry no data
        (:mod:`schedkit.problem.without_transfers`).

        Examples
        --------
        >>> TimingRules(ordered_edges=True, communication=True).times_transfers, TimingRules().times_transfers
        (True, False)
        """
        return self.communication or self.congestion is not None or self.memory is not None

    @property
    def shared(self) -> bool:
        """Whether schedules under these rules book shared timelines (:meth:`transfers`):
        transfers that contend for channels or ports, or resources that tasks hold.

        Examples
        --------
        >>> TimingRules().shared, TimingRules(congestion="port").shared
        (False, True)
        """
        return self.congestion is not None or bool(self.resources)

    @property
    def waits(self) -> bool:
        """Whether a read-back keeps the solver's starts as least starts: under a memory
        timeline a solver may delay a task or a transfer until memory is released, and
        moving it earlier could break the level."""
        return self.memory is not None

    def transfers(self, problem) -> Transfers:
        """Fresh shared timelines of a schedule of ``problem`` under these rules: the transfers'
        channels and ports, and the units of the resources tasks hold (``holds``), which
        every engine given them books."""
        return Transfers(problem, self.congestion, Holds(problem, self.resources) if self.resources else None)

    def levels(self, problem, transfers: Transfers | None = None) -> MemoryLevels | None:
        """Fresh memory levels of a schedule of ``problem`` (``None`` without a memory timeline);
        ``transfers``: the timelines whose booked transfer times the schedule will carry."""
        return None if self.memory is None else MemoryLevels(problem, self.memory, transfers)
