"""Objectives a formulation may minimise: moved to :mod:`schedkit.semantics.objectives`
(formulations are plain data below the MILP); the names stay importable from here.

Examples
--------
>>> OBJECTIVES.get("makespan").family
'makespan'
"""

from schedkit.semantics.objectives import OBJECTIVES, Makespan, Objective, Throughput, register_objective

__all__ = ["OBJECTIVES", "Makespan", "Objective", "Throughput", "register_objective"]
