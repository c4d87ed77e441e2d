"""Methods: every way to get a schedule (MILP, heuristic, decomposition) is a :class:`Method`.

A method declares its options as a pydantic model, returns a :class:`Schedule` from
:meth:`Method.run`, and :func:`solve` validates it before a user sees it.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "milp", time_limit=30)
>>> s.status, s.makespan == s.bound
('optimal', True)
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from schedkit.errors import SchedkitError
from schedkit.problem import Problem, as_problem
from schedkit.registry import Registry, doc_line
from schedkit.schedule import Schedule

METHODS = Registry("method", group="schedkit.methods")


class MethodOptions(BaseModel):
    """Options every method accepts; methods subclass this with their own fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Method:
    """Base class of schedule-producing methods.

    Subclasses set ``name``, an ``Options`` model and implement :meth:`run`.
    Register them with :func:`register_method`.
    """

    name: ClassVar[str] = ""
    Options: ClassVar[type[MethodOptions]] = MethodOptions

    def __init__(self, **options: Any):
        try:
            self.options = self.Options(**options)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                raise SchedkitError(f"method '{self.name}' takes no option '{key}'") from None
            raise SchedkitError(f"method '{self.name}': option '{key}': {err['msg']}") from None

    def run(self, problem: Problem) -> Schedule:
        """Compute a schedule; called by :meth:`solve`, which validates it."""
        raise NotImplementedError(f"method '{self.name}' does not implement run()")

    def solve(self, problem: Problem) -> Schedule:
        """Run the method, time it, and validate the result (raises when invalid)."""
        began = time.perf_counter()
        schedule = self.run(problem)
        if schedule.solve_seconds is None:
            schedule.solve_seconds = time.perf_counter() - began
        if schedule.tasks:
            schedule.validate(problem, getattr(self, "blocks", None))
        return schedule


def register_method(name: str):
    """Class decorator: register a :class:`Method` subclass under ``name``."""
    def add(cls):
        cls.name = name
        METHODS.register(name, cls)
        return cls
    return add


def method_options(name: str) -> list[str]:
    """Names of the options a registered method accepts."""
    return list(METHODS.get(name).Options.model_fields)


def solve(problem, method: str = "milp", **options: Any) -> Schedule:
    """Solve ``problem`` with the registered ``method``; the schedule is validated.

    Parameters
    ----------
    problem : Problem, ProblemSpec, dict or path
    method : str
        A name from :func:`list_methods` (``milp`` by default).
    **options
        The method's options (``time_limit``, ``seed``...).
    """
    cls = METHODS.get(method)
    return cls(**options).solve(as_problem(problem))


def list_methods() -> list[tuple[str, str]]:
    """``(name, summary)`` of every registered method."""
    return [(name, doc_line(cls)) for name, cls in METHODS.items()]
