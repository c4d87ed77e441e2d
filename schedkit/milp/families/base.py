"""The variable-family base class, its registry, and the draft a read-back fills.

A family is created once per build, by the context, the first time a block asks for
it (after the families it requires). It owns its columns and the rows that define
them (``end_def``, ``makespan_def``), turns a schedule into column values
(:meth:`Family.warm`) and column values back into a draft schedule
(:meth:`Family.read`).

Examples
--------
A family of one column per device, the device's busy time, defined by a user block:

>>> from schedkit.milp.families import Family, register_family
>>> @register_family("busy")
... class Busy(Family):
...     '''Busy time of each device.'''
...     requires = ("x",)
...     defined_by = "busy_time"
...     template = r"$b_d = \\sum_i p_{i,d}\\, x_{i,d}$"
...     def create(self):
...         p = self.ctx.problem
...         self.cols = self.ctx.lin.add_columns("busy", [(d,) for d in p.devices], 0, self.ctx.horizon)
...     def warm(self, schedule, values):
...         for d, col in zip(self.ctx.problem.devices, self.cols):
...             values[col] = sum(r.end - r.start for r in schedule.tasks if r.device == d)
>>> FAMILIES.get("busy").defined_by
'busy_time'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence

from schedkit.blocks.context import BuildContext
from schedkit.semantics.families import FAMILIES

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.milp.linear import LinearModel
    from schedkit.schedule import Schedule

# (the registry is the formulation's, below the MILP: see schedkit.semantics.families)
__all__ = ["FAMILIES", "Draft", "Family", "FamilyContext", "register_family"]


class FamilyContext(BuildContext, Protocol):
    """What a family sees of the build: a block's context, with the whole sparse model.

    Declared here rather than imported from :mod:`schedkit.milp.context`, which imports the
    families: the families depend on this protocol, the context implements it.
    """

    lin: LinearModel
    lower_bound: float


@dataclass
class Draft:
    """What the families read from column values: each task's device and start.

    ``None`` where no family gave a value; the read-back fills the rest (a fixed task's
    only device, a start of 0) and recomputes exact times from the device orders.
    """

    device_of: list[int | None]
    starts: list[float | None]
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def empty(cls, tasks: int) -> Draft:
        return cls(device_of=[None] * tasks, starts=[None] * tasks)


class Family:
    """Base class of variable families.

    Class attributes
    ----------------
    name : str
        The family's name (set by :func:`register_family`); blocks list it in ``requires``.
    requires : tuple of str
        Families it is defined over: created before it.
    defined_by : str or None
        The block kind that gives the family its meaning (``assignment`` for ``x``); a
        formulation that uses the family must contain that block. ``None``: the build
        context defines it (``timing``, ``makespan``).
    template : str
        The family's mathematics (Markdown with LaTeX), shown by ``describe``.
    """

    name: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    defined_by: ClassVar[str | None] = None
    template: ClassVar[str] = ""

    def __init__(self, ctx: FamilyContext):
        self.ctx = ctx

    def create(self) -> None:
        """Add the family's columns (and the rows that define them) to ``ctx.lin``."""
        raise NotImplementedError(f"family '{self.name}' does not implement create()")

    def warm(self, schedule: Schedule, values: list) -> None:
        """Write the column values of ``schedule`` into ``values`` (indexed by column)."""

    def read(self, values: Sequence[float], draft: Draft) -> None:
        """Read what the family knows of a schedule from column ``values`` into ``draft``."""


def register_family(name: str, *, replace: bool = False):
    """Class decorator: register a :class:`Family` subclass under ``name``."""
    def add(cls):
        if not (isinstance(cls, type) and issubclass(cls, Family)):
            raise TypeError(f"{cls!r} is not a Family")
        cls.name = name
        FAMILIES.register(name, cls, replace=replace)
        return cls
    return add
