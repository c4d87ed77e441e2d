"""Solver adapters: what a solver can do, declared as data, and what it hands back.

An adapter solves a built model and returns a :class:`RawSolution`: why it stopped,
whether it proved optimality, the column values, its objective and bound. The MILP
method reads the schedule back from the values (:mod:`schedkit.milp.readback`); an
adapter never builds a schedule itself. Features decide what the method may ask for:
a warm start only where :attr:`Feature.WARM_START` is declared, the subset-bound race
only where :attr:`Feature.STOP_CALLBACK` is.

Examples
--------
>>> from schedkit.milp.solvers import get_adapter
>>> adapter = get_adapter("highs")
>>> adapter.supports(Feature.STOP_CALLBACK), adapter.supports(Feature.FILE_IO)
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Callable, ClassVar

from schedkit.errors import SolverError
from schedkit.registry import Registry
from schedkit.schedule import Termination

SOLVERS = Registry("solver", group="schedkit.solvers", error=SolverError)


class Feature(Enum):
    """What a solver adapter can do."""

    MIP = auto()
    """Solves mixed-integer programs."""
    WARM_START = auto()
    """Starts from a given solution."""
    STOP_CALLBACK = auto()
    """Can be stopped, and read its incumbent, from another thread while it runs."""
    DUAL_BOUND = auto()
    """Reports a proven lower bound when it stops early."""
    FILE_IO = auto()
    """Goes through model and solution files."""


@dataclass(frozen=True)
class SolveOptions:
    """Limits of one solve."""

    time_limit: float | None = None
    gap: float | None = None
    threads: int | None = None
    verbose: bool = False


@dataclass
class RawSolution:
    """A solver's answer, before any schedule is read from it.

    Attributes
    ----------
    termination : Termination
    optimal : bool
        The solver proved optimality (within its own tolerance and gap).
    infeasible : bool
        The solver proved that the model has no solution.
    values : list of float or None
        Column values of its best solution.
    objective, bound : float or None
        Its best objective and its proven lower bound.
    note : str or None
        Why the solver stopped as it did, when its termination does not say it all.
    """

    termination: Termination
    optimal: bool = False
    infeasible: bool = False
    values: list | None = None
    objective: float | None = None
    bound: float | None = None
    note: str | None = None


#: Work run beside a solve: ``helper(shared)`` with the solve's shared incumbent and bound.
Helper = Callable[[object], None]


class Adapter:
    """Base class of solver adapters."""

    name: ClassVar[str] = ""
    features: ClassVar[frozenset[Feature]] = frozenset()

    def supports(self, feature: Feature) -> bool:
        """Whether the adapter declares ``feature``."""
        return feature in self.features

    def solve(self, built, options: SolveOptions, start: list | None = None,
              beside: Helper | None = None) -> RawSolution:
        """Solve ``built``; ``start``: column values to start from (``None`` where unknown);
        ``beside``: work to run in a second thread (needs :attr:`Feature.STOP_CALLBACK`)."""
        raise NotImplementedError(f"solver '{self.name}' does not implement solve()")


def register_solver(name: str, *, replace: bool = False):
    """Class decorator: register an :class:`Adapter` subclass under ``name``."""
    def add(cls):
        cls.name = name
        SOLVERS.register(name, cls, replace=replace)
        return cls
    return add
