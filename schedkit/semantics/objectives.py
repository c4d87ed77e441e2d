"""Objectives a formulation may minimise, registered like blocks (plain data: ``apply`` is
given the MILP's build context, and never imports it).

An objective names the variable family that holds its value and sets it as the
model's objective: ``makespan``, and ``throughput`` (DiviML: the makespan of the workload's
L inputs, reported as ``L / makespan``; with one input, the makespan).

Examples
--------
>>> OBJECTIVES.get("makespan").family
'makespan'
"""

from __future__ import annotations

from typing import ClassVar

from schedkit.errors import FormulationError
from schedkit.registry import Registry

OBJECTIVES = Registry("objective", group="schedkit.objectives", error=FormulationError)


class Objective:
    """Base class of objectives: the family whose column is minimised, and its mathematics."""

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    template: ClassVar[str] = ""

    @classmethod
    def apply(cls, ctx) -> None:
        """Minimise the family's column in ``ctx.lin``."""
        ctx.lin.set_objective(ctx.family(cls.family).col)

    @classmethod
    def describe(cls) -> str:
        return cls.template


def register_objective(name: str, *, replace: bool = False):
    """Class decorator: register an :class:`Objective` under ``name``."""
    def add(cls):
        cls.name = name
        OBJECTIVES.register(name, cls, replace=replace)
        return cls
    return add


@register_objective("makespan")
class Makespan(Objective):
    """Minimise the makespan: the latest end of any task."""

    family = "makespan"
    template = r"Minimise the makespan $C$, the latest end of any task."

    @classmethod
    def apply(cls, ctx) -> None:
        # Under ``batching`` the makespan is that of the batches (family ``batch``).
        if ctx.has("batch"):
            ctx.lin.set_objective(ctx.family("batch").col)
        else:
            super().apply(ctx)


@register_objective("throughput")
class Throughput(Makespan):
    """Maximise the throughput L / C: minimise the makespan C of the workload's L inputs."""

    template = (r"Maximise the throughput $L / C$: minimise the makespan $C$ of the $L$ inputs, the latest "
                r"end of any batch.")
