"""Stages 3-4 of the exact method: formulations built into a sparse MILP, solved, read back.

Importing this package registers the ``milp`` method.
"""

from schedkit.milp.formulation import FORMULATIONS, Formulation, get_formulation
from schedkit.milp.method import Milp, MilpOptions

__all__ = ["FORMULATIONS", "Formulation", "get_formulation", "Milp", "MilpOptions"]
