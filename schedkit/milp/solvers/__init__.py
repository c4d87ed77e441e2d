"""Solver adapters: HiGHS through highspy (the default), any Pyomo solver by name."""

from schedkit.milp.solvers.base import (SOLVERS, Adapter, Feature, RawSolution, SolveOptions, get_adapter,
                                        register_solver)
from schedkit.milp.solvers.highs import Highs
from schedkit.milp.solvers.pyomo import PyomoSolver

__all__ = ["SOLVERS", "Adapter", "Feature", "RawSolution", "SolveOptions", "get_adapter",
           "register_solver", "Highs", "PyomoSolver"]
