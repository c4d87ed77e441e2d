"""Solver adapters: HiGHS through highspy (the default), any Pyomo solver by name."""

from schedkit.milp.solvers.base import (SOLVERS, Adapter, Feature, RawSolution, SolveOptions,
                                        register_solver)
from schedkit.milp.solvers.highs import Highs
from schedkit.milp.solvers.pyomo import PyomoSolver


def get_adapter(name: str) -> Adapter:
    """The adapter of solver ``name``: a registered one, else any Pyomo solver by that name.

    Raises :class:`~schedkit.errors.SolverError` when the solver is not available.

    Examples
    --------
    >>> type(get_adapter("highs")).__name__
    'Highs'
    >>> get_adapter("no_such_solver")
    Traceback (most recent call last):
    ...
    schedkit.errors.SolverError: solver 'no_such_solver' is not installed or not available to Pyomo (the default 'highs' is always available)
    """
    if name in SOLVERS:
        return SOLVERS.get(name)()
    return PyomoSolver(name)


__all__ = ["SOLVERS", "Adapter", "Feature", "RawSolution", "SolveOptions", "get_adapter",
           "register_solver", "Highs", "PyomoSolver"]
