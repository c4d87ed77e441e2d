"""The registry of variable families, by name: what a formulation may ask its blocks to use.

A block names the families it uses as strings (``requires = {"x", "timing"}``); a
formulation checks, before anything is built, that each name is registered and that the
block that gives the family its meaning (``defined_by``) is part of it, and ``describe``
shows each family's ``template``. The families themselves (columns, warm start, read-back)
are the MILP's, in :mod:`schedkit.milp.families`, which registers the built-in ones here;
a plug-in registers its own with :func:`~schedkit.milp.families.register_family`. The
registry lives below the MILP so that formulations are plain data that the heuristics,
the validator and the decompositions read without the MILP layer.

Examples
--------
>>> FAMILIES.get("x").defined_by, FAMILIES.get("timing").requires
('assignment', ('x',))
"""

from __future__ import annotations

from schedkit.errors import FormulationError
from schedkit.registry import Registry

__all__ = ["FAMILIES"]

FAMILIES = Registry("variable family", group="schedkit.families", error=FormulationError)
