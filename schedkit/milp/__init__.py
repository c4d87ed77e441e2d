"""Stages 3-4 of the exact method: formulations built into a sparse MILP, solved, read back.

Importing this package registers the ``milp`` method, the ``makespan`` objective, the
built-in variable families and the ``highs`` solver.
"""

from schedkit.milp.formulation import FORMULATIONS, Formulation, get_formulation, list_formulations
from schedkit.milp.context import ModelContext, BuiltModel
from schedkit.milp.families import FAMILIES, Family, register_family
from schedkit.semantics.objectives import OBJECTIVES, register_objective
from schedkit.milp.method import Milp, MilpOptions

__all__ = ["FORMULATIONS", "Formulation", "get_formulation", "list_formulations", "ModelContext",
           "BuiltModel", "FAMILIES", "Family", "register_family", "OBJECTIVES", "register_objective",
           "Milp", "MilpOptions"]
