"""The schedule that starts an exact solve when the user names none: the best of the methods
that offer one (:meth:`~schedkit.methods.Method.auto_start`).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> search_start(p).violations(p)
[]
"""

from __future__ import annotations

import time

from schedkit.errors import FormulationError, ProblemError
from schedkit.methods import METHODS
from schedkit.problem import Problem
from schedkit.progress import silenced

__all__ = ["search_start", "following", "START_SHARE"]

#: Share of the time limit left that the automatic warm-start search may take.
START_SHARE = 0.1


def following(cls, formulation) -> dict:
    """The option that makes a start method follow the formulation, where it has one
    (a heuristic's schedule then satisfies every block the solver is given)."""
    return {"formulation": formulation} if "formulation" in cls.Options.model_fields else {}


def search_start(problem: Problem, deadline: float | None = None, formulation="latency"):
    """The best schedule of the registered methods that offer to start an exact solve.

    A method offers through :meth:`~schedkit.methods.Method.auto_start` (the heuristics
    package's ``annealing`` does: a short seeded annealing from HEFT); under a time limit it
    gets :data:`START_SHARE` of the time left, when it takes a ``time_limit`` option. The
    kernel's own list schedules still compete in :func:`~schedkit.semantics.horizon.choose_horizon`,
    which keeps the best schedule that satisfies every block of the formulation.
    """
    best = None
    for name, cls in METHODS.items():
        options = cls.auto_start(problem)
        if options is None or name == "milp":
            continue
        options = {**options, **following(cls, formulation)}
        left = None if deadline is None else max(0.0, deadline - time.perf_counter())
        if left is not None and "time_limit" in cls.Options.model_fields:
            if left <= 0:
                break
            options = {**options, "time_limit": min(options.get("time_limit", left), START_SHARE * left)}
        try:
            with silenced():  # the solve's own ticker is the line on the terminal
                found = cls(**options).solve(problem)
        except (ProblemError, FormulationError):  # no heuristic placement (memory), or a block
            continue                                 # it cannot honour: other starts remain
        if found.tasks and (best is None or found.makespan < best.makespan):
            best = found
    return best
