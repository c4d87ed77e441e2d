"""Proven optima of small problems, for tests of lower bounds."""

from schedkit import Problem
from schedkit.methods import METHODS


def proven_optimum(problem: Problem, formulation: str) -> float | None:
    """The MILP's proven optimum, ``None`` when it proves none (infeasible, or out of time)."""
    result = METHODS.get("milp")(formulation=formulation, solver="highs", threads=1,
                                 time_limit=30).result(problem)
    return result.objective if result.status == "optimal" else None
