"""The state ``auto`` carries from phase to phase: the best schedule, the best bound, the log.

Every phase offers its :class:`~schedkit.schedule.Result`; :meth:`Incumbent.offer` keeps
its schedule when it is valid under ``auto``'s own blocks and shorter than the incumbent,
and its bound when larger (a phase's bound is a lower bound of the whole problem: the
methods' results only carry such bounds, :func:`~schedkit.reductions.chain.combine`
drops a coarsening's). Each change is an :class:`AutoEvent` for the progress callback.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.methods import METHODS
>>> p = Problem.load("examples/tiny.yaml")
>>> events = []
>>> state = Incumbent(p, blocks=[], on_event=events.append)
>>> state.begin("incumbent", "heft")
>>> state.offer(METHODS.get("heft")().result(p))
True
>>> round(state.makespan, 3), events[-1].phase, events[-1].makespan == state.makespan
(4.516, 'incumbent', True)
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from schedkit.numerics import OPTIMAL_GAP, closed
from schedkit.problem import Problem
from schedkit.schedule import Quality, Result, Schedule
from schedkit.blocks import block_from_data
from schedkit.validate import semantic_blocks, violations

__all__ = ["AutoEvent", "Incumbent", "PhaseRecord"]


def _key(data) -> str:
    return json.dumps(data, sort_keys=True)


@dataclass(frozen=True)
class AutoEvent:
    """What the progress callback receives: a phase began or ended, or the incumbent or
    the bound changed.

    Attributes
    ----------
    phase : str
        The phase running (``incumbent``, ``bridge_dp``, ``exact``, ``kedge``, ``merge``,
        ``refine``), or ``done`` at the end.
    elapsed : float
        Seconds since ``auto`` began.
    makespan, bound : float or None
        The incumbent's makespan and the best lower bound so far.
    note : str
        What happened, in a few words.
    """

    phase: str
    elapsed: float
    makespan: float | None
    bound: float | None
    note: str = ""

    @property
    def gap(self) -> float | None:
        """Relative gap between incumbent and bound."""
        if self.makespan is None or self.bound is None or self.makespan <= 0:
            return None
        return max(0.0, (self.makespan - self.bound) / self.makespan)


@dataclass
class PhaseRecord:
    """One phase as the schedule file's ``phases`` records it."""

    phase: str
    method: str
    seconds: float = 0.0
    makespan: float | None = None
    bound: float | None = None
    status: str | None = None
    note: str | None = None
    began: float = field(default=0.0, repr=False)

    @property
    def label(self) -> str:
        """``exact (milp)``; a phase named as its method is named once (``kedge``)."""
        return self.phase if self.phase == self.method else f"{self.phase} ({self.method})"

    def to_data(self) -> dict:
        data = {"phase": self.phase, "method": self.method, "seconds": round(self.seconds, 3),
                "makespan": self.makespan, "bound": self.bound, "status": self.status, "note": self.note}
        return {k: v for k, v in data.items() if v is not None}


class Incumbent:
    """The best valid schedule and the best lower bound ``auto`` knows, and its phase log.

    Parameters
    ----------
    problem : Problem
    blocks : list of Block
        ``auto``'s blocks: a phase's schedule counts only when it satisfies all of them.
    on_event : callable, optional
        Receives an :class:`AutoEvent` at each change.
    """

    def __init__(self, problem: Problem, blocks: list, on_event: Callable[[AutoEvent], None] | None = None):
        self.problem = problem
        self.blocks = blocks
        self.on_event = on_event
        self.began = time.perf_counter()
        self.schedule: Schedule | None = None
        self.provenance = "heuristic"
        self.bound: float | None = None
        self.schedule_from: str | None = None
        self.bound_from: str | None = None
        self.proven = False  # a phase proved its schedule optimal for the whole problem
        self.infeasible_from: str | None = None  # a phase proved that no schedule exists
        self.phases: list[PhaseRecord] = []
        self._own: set[str] | None = None
        self._found: list[tuple[Schedule, str]] = []  # every valid schedule a phase gave, and whose

    @property
    def makespan(self) -> float | None:
        return None if self.schedule is None else self.schedule.makespan

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.began

    @property
    def finished(self) -> bool:
        """Nothing left to do: optimality or infeasibility is proven."""
        return self.optimal or self.infeasible_from is not None

    @property
    def optimal(self) -> bool:
        """Proven optimal for the whole problem: by a phase, or by the bound meeting the incumbent."""
        if self.schedule is None:
            return False
        return self.proven or (self.bound is not None and closed(self.makespan, self.bound, OPTIMAL_GAP))

    def emit(self, note: str = "") -> None:
        if self.on_event is not None:
            phase = self.phases[-1].phase if self.phases else "incumbent"
            self.on_event(AutoEvent(phase, self.elapsed, self.makespan, self.bound, note))

    def begin(self, phase: str, method: str) -> None:
        """A phase starts."""
        self.phases.append(PhaseRecord(phase, method, began=time.perf_counter()))
        self.emit(f"{phase}: {method}")

    def end(self, note: str | None = None, status: str | None = None) -> None:
        """The running phase ends (with ``note`` when it gave no result)."""
        record = self.phases[-1]
        record.seconds = time.perf_counter() - record.began
        if note is not None:    # (after what the phase's results said of themselves)
            record.note = note if record.note is None else f"{record.note}; {note}"
        if status is not None:
            record.status = status
        self.emit(note or "")

    def skip(self, phase: str, method: str, why: str) -> None:
        """A phase that does not run, recorded with why."""
        self.phases.append(PhaseRecord(phase, method, note=f"skipped: {why}"))

    def bound_at_least(self, bound: float | None, source: str) -> bool:
        """Keep ``bound`` when it is larger than the best so far (never above the incumbent)."""
        if bound is None or not math.isfinite(bound):
            return False
        if self.bound is not None and bound <= self.bound:
            return False
        if self.makespan is not None:
            bound = min(bound, self.makespan)  # (a solver's bound may exceed it by its tolerance)
        self.bound, self.bound_from = bound, source
        return True

    def offer(self, result: Result) -> bool:
        """Take what ``result`` (of the running phase) improves; ``True`` when anything did."""
        record = self.phases[-1]
        record.status = result.status
        record.bound = result.bound
        if result.quality is Quality.INFEASIBLE and result.provenance == "exact":
            self.infeasible_from = record.label  # (only an exact method proves it)
        schedule = result.schedule
        better = False
        found = None
        if schedule is not None and schedule.tasks:
            # (Method.result validated it by the phase's own blocks: judge it again only when
            # those do not include auto's, which costs seconds on 10,000 tasks)
            found = [] if self._judged_alike(result) else violations(self.problem, result.to_schedule(), self.blocks)
            if found:
                record.note = f"its schedule breaks auto's formulation ({found[0]}): not used"
                record.status = None
            else:
                record.makespan = schedule.makespan
                self._found.append((schedule, record.label))
            if found:
                pass  # (never the incumbent)
            elif self.schedule is None or schedule.makespan < self.schedule.makespan:
                self.schedule, self.provenance, self.schedule_from = schedule, result.provenance, record.label
                self.proven = result.quality is Quality.OPTIMAL
                better = True
            elif result.quality is Quality.OPTIMAL and closed(schedule.makespan, self.makespan, OPTIMAL_GAP):
                self.proven = True
        if result.quality is Quality.OPTIMAL and found == []:   # (a schedule that breaks a block proves nothing)
            better |= self.bound_at_least(schedule.makespan, record.label)
        better |= self.bound_at_least(result.bound, record.label)
        if self.bound is not None and self.makespan is not None and self.bound > self.makespan:
            self.bound = self.makespan
        if better:
            self.emit("better")
        return better

    def _judged_alike(self, result: Result) -> bool:
        """Whether ``result`` was validated by every semantic block ``auto`` is judged by."""
        if self._own is None:
            self._own = {_key(b.to_data()) for b in semantic_blocks(self.problem, self.blocks)}
        recorded = (result.formulation or {}).get("blocks")
        if not isinstance(recorded, list):
            return False
        return self._own <= {_key(b.to_data()) for b in semantic_blocks(self.problem, map(block_from_data, recorded))}

    def starts(self) -> list[Schedule]:
        """Every valid schedule the phases gave, shortest first, one per makespan."""
        seen, out = set(), []
        for schedule, _ in sorted(self._found, key=lambda item: item[0].makespan):
            if schedule.makespan not in seen:
                seen.add(schedule.makespan)
                out.append(schedule)
        return out

    def origin(self, schedule: Schedule) -> str:
        """The phase that gave ``schedule``."""
        return next((label for s, label in self._found if s is schedule), "the incumbent")

    def records(self) -> list[dict]:
        return [r.to_data() for r in self.phases]
