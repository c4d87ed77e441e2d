"""Proven optima of small problems, for tests of lower bounds."""

from hypothesis import assume

from schedkit import Problem, ProblemError
from schedkit.methods import METHODS

#: Transfers as delays (latency), queued on ports (moirai), queued on channels (fdjssp).
FORMULATIONS = ("latency", "moirai", "fdjssp")


def built(data: dict) -> Problem:
    """The problem of a drawn file; the example is skipped where the file is not a valid problem."""
    try:
        return Problem.from_dict(data)
    except ProblemError:
        assume(False)


def proven_optimum(problem: Problem, formulation: str) -> float | None:
    """The MILP's proven optimum, ``None`` when it proves none (infeasible, or out of time)."""
    result = METHODS.get("milp")(formulation=formulation, solver="highs", threads=1,
                                 time_limit=30).result(problem)
    return result.objective if result.status == "optimal" else None
