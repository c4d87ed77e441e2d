"""What a method returns: how it stopped, how good its answer is proven to be, and the schedule.

Two questions are kept apart (as Pyomo keeps the termination condition apart from the
solution status): *why did the method stop* (:class:`Termination`) and *what is known
about its answer* (:class:`Quality`). The schedule file's one-word ``status`` is derived
from both by :func:`status_word`, the only place where it is decided.

Examples
--------
>>> from schedkit.schedule import Schedule, TaskRun
>>> rows = Schedule(problem="p", method="demo", status="heuristic",
...                 tasks=[TaskRun(task="a", device="d", start=0, end=2)])
>>> r = Result(termination="time_limit", quality="feasible", schedule=rows, bound=1.5,
...            method="milp")
>>> r.status, r.to_schedule().status, r.to_schedule().bound
('feasible', 'feasible', 1.5)
>>> Result(termination="finished", quality="infeasible", method="milp", problem="p").status
'infeasible'
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from schedkit.numerics import finite_or_none
from schedkit.schedule.schedule import Schedule, Status


class Termination(StrEnum):
    """Why a method stopped."""

    FINISHED = "finished"
    """It ran to its end: a proof, a proof of infeasibility, or a heuristic's last step."""
    TIME_LIMIT = "time_limit"
    """Its time limit ran out."""
    GAP = "gap"
    """An exact solve reached the relative gap it was allowed to stop at."""
    INTERRUPTED = "interrupted"
    """The user or a caller stopped it."""
    ERROR = "error"
    """The solver reported an error."""


class Quality(StrEnum):
    """What is known about the answer."""

    OPTIMAL = "optimal"
    """A schedule whose objective meets a proven lower bound."""
    FEASIBLE = "feasible"
    """A valid schedule; optimality is not proven."""
    INFEASIBLE = "infeasible"
    """Proven: no schedule satisfies the formulation."""
    NONE = "none"
    """No schedule, and nothing proven."""


Provenance = Literal["exact", "heuristic", "decomposition"]


class Result(BaseModel):
    """The outcome of one method on one problem.

    Attributes
    ----------
    termination : Termination
    quality : Quality
    schedule : Schedule or None
        The schedule found (``None`` when there is none); :meth:`to_schedule` gives the
        schedule file with the derived status, bound and time.
    objective : float or None
        The objective of the schedule (its makespan unless given).
    bound : float or None
        The best proven lower bound on the objective.
    seconds : float or None
        Wall-clock time of the method (``None``: not measured, e.g. a solution read from a file).
    provenance : {"exact", "heuristic", "decomposition"}
        What kind of method produced it (heuristic answers are labelled as such).
    method, problem : str
        Names, as written in the schedule file.
    message : str or None
        A line for the user: why the method stopped without a schedule, for instance.
    formulation : dict or None
        The formulation (data) the schedule was judged by; the schedule file records it.
    phases : list of dict or None
        The phases of a method that runs others (``auto``), as the schedule file records them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    termination: Termination
    quality: Quality
    schedule: Schedule | None = None
    objective: float | None = None
    bound: float | None = None
    seconds: float | None = None
    provenance: Provenance = "exact"
    method: str = ""
    problem: str = ""
    message: str | None = None
    formulation: dict | None = None
    phases: list[dict] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Result:
        has_rows = self.schedule is not None
        if has_rows != (self.quality in (Quality.OPTIMAL, Quality.FEASIBLE)):
            raise ValueError(f"a result of quality '{self.quality}' "
                             f"{'cannot carry' if has_rows else 'needs'} a schedule")
        fields = {"bound": finite_or_none(self.bound)}
        if has_rows:
            if self.objective is None:
                fields["objective"] = self.schedule.makespan
            if not self.problem:
                fields["problem"] = self.schedule.problem
            if not self.method:
                fields["method"] = self.schedule.method
        for key, value in fields.items():
            object.__setattr__(self, key, value)
        return self

    @property
    def status(self) -> Status:
        """The schedule file's status word (see :func:`status_word`)."""
        return status_word(self)

    @property
    def gap(self) -> float | None:
        """Relative gap between objective and bound, when both are known."""
        if self.objective is None or self.bound is None:
            return None
        if self.objective <= 0:
            return 0.0
        return max(0.0, (self.objective - self.bound) / self.objective)

    def to_schedule(self) -> Schedule:
        """The schedule file: the rows, with the derived status, bound, objective and time."""
        update = {"status": self.status, "bound": self.bound, "solve_seconds": self.seconds,
                  "method": self.method, "problem": self.problem, "formulation": self.formulation,
                  "message": self.message, "phases": self.phases}
        if self.schedule is None:
            return Schedule(**update)
        return self.schedule.model_copy(update=update | {"objective": self.objective})

    def with_seconds(self, seconds: float) -> Result:
        """The same result, timed at ``seconds``."""
        return self.model_copy(update={"seconds": seconds})

    @classmethod
    def heuristic(cls, schedule: Schedule, bound: float | None = None) -> Result:
        """The result of a heuristic that found ``schedule`` (``bound``: a valid lower bound)."""
        return cls(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                   bound=bound, provenance="heuristic")

    @classmethod
    def nothing(cls, method: str, problem: str, termination: Termination, message: str | None = None,
                bound: float | None = None, provenance: Provenance = "exact") -> Result:
        """A result without a schedule, nothing proven (``no_solution``)."""
        return cls(termination=termination, quality=Quality.NONE, method=method, problem=problem,
                   message=message, bound=bound, provenance=provenance)


def status_word(result: Result) -> Status:
    """The one place where a schedule file's ``status`` is decided.

    ``infeasible`` (proven), ``no_solution`` (stopped without a schedule), ``optimal``
    (proven), ``heuristic`` (a heuristic's schedule), else ``feasible`` (a schedule of an
    exact method or a decomposition whose optimality is not proven).
    """
    if result.quality is Quality.INFEASIBLE:
        return "infeasible"
    if result.quality is Quality.NONE:
        return "no_solution"
    if result.quality is Quality.OPTIMAL:
        return "optimal"
    if result.provenance == "heuristic":
        return "heuristic"
    return "feasible"
