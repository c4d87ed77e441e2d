"""Methods ``PARTITIONER+SCHEDULER``: partition, then schedule every device (Mayer et al. 2017).

One generic method, :class:`PartitionSchedule`, is registered for each of the
5 x 3 pairs of a partitioner (:mod:`schedkit.heuristics.partitioners`: ``hash``,
``batch_split``, ``critical_path``, ``mite``, ``dfs``) and a per-device scheduler
(:mod:`schedkit.heuristics.device_schedulers`: ``fifo``, ``pct``, ``msr``), e.g.
``critical_path+pct`` or ``hash+fifo``. The partitioner maps the tasks; the event
simulator (:func:`schedkit.timing.events.simulate`) runs each device by the scheduler's
priority; the schedule carries :func:`schedkit.problem.bounds.formulation_bound` as its bound.

Under ``memory_timeline`` (both modes) the mapping is the partitioner's as ever, and a device
starts the first of its ready tasks, by priority, that fits its memory level, waiting while
none does; when the mapping leaves some task no moment to start, the method says so
(a :class:`~schedkit.errors.ProblemError`, not a proof that no schedule exists).

Options: ``seed`` (methods with ``hash``), and the MSR weights ``msr_successor``,
``msr_remote``, ``msr_unlock``, ``msr_idle`` (methods with ``msr``).

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.load("examples/tiny.yaml")
>>> s = solve(p, "critical_path+pct")
>>> s.status, round(s.makespan, 3), round(s.bound, 3)
('heuristic', 4.516, 3.483)
>>> solve(p, "hash+msr", seed=3, msr_idle=2.0).method
'hash+msr'
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from schedkit.methods import MethodOptions, register_method
from schedkit.problem import Problem
from schedkit.problem.bounds import formulation_bound
from schedkit.schedule import Result
from schedkit.machine import paused_gc
from schedkit.timing import simulate, to_schedule

from schedkit.heuristics.device_schedulers import SCHEDULERS
from schedkit.heuristics.formulation import HONOURED, FollowsFormulation, FormulationOptions
from schedkit.heuristics.partitioners import PARTITIONERS

__all__ = ["PartitionSchedule", "PARTITION_SCHEDULE_METHODS"]


class SeedOptions(MethodOptions):
    """Options of methods whose partitioner uses randomness."""

    seed: int = 0
    """Key of the hash that spreads the tasks (another seed, another mapping)."""


class MsrOptions(MethodOptions):
    """Weights of the MSR device scheduler."""

    msr_successor: float = Field(1.0, ge=0)
    """Score of every successor."""
    msr_remote: float = Field(1.0, ge=0)
    """Extra score of a successor on another device."""
    msr_unlock: float = Field(1.0, ge=0)
    """Extra score of a remote successor for which the task is the last unstarted input."""
    msr_idle: float = Field(5.0, ge=0)
    """Extra score of such a successor when its device is idle."""


_USES_SEED = {"hash"}
_LABELS = {
    "hash": "hash partitioning (speed-weighted)",
    "batch_split": "batch split by total rank",
    "critical_path": "critical path on its fastest device",
    "mite": "MITE partitioning (memory, importance, traffic, execution)",
    "dfs": "depth-first partitioning",
    "fifo": "FIFO",
    "pct": "PCT (remaining path time)",
    "msr": "MSR (successor score, idle bonus)",
}


class PartitionSchedule(FollowsFormulation):
    """Partition the tasks, then let every device run its ready tasks by a priority rule.

    Subclasses set ``partitioner`` and ``scheduler`` (names in
    :data:`~schedkit.heuristics.partitioners.PARTITIONERS` and
    :data:`~schedkit.heuristics.device_schedulers.SCHEDULERS`). Under ``memory_timeline``
    a device waits while none of its ready tasks fits
    (:func:`~schedkit.timing.events.simulate`'s ``levels``).
    """

    honours = HONOURED | {"memory_timeline"}

    partitioner: ClassVar[str] = ""
    scheduler: ClassVar[str] = ""

    def device_of(self, problem: Problem) -> list[int]:
        """The partitioner's mapping."""
        options = {"seed": self.options.seed} if self.partitioner in _USES_SEED else {}
        return PARTITIONERS[self.partitioner](problem, **options)

    def priority(self, problem: Problem, device_of: list[int]):
        """The scheduler's priority for :func:`~schedkit.timing.events.simulate`."""
        options = {}
        if self.scheduler == "msr":
            o = self.options
            options = dict(successor=o.msr_successor, remote=o.msr_remote,
                           unlock=o.msr_unlock, idle=o.msr_idle)
        return SCHEDULERS[self.scheduler](problem, device_of, **options)

    def run(self, problem: Problem) -> Result:
        # Tables of every task and transfer, nothing cyclic: no full passes of the collector.
        with paused_gc():
            return self._run(problem)

    def _run(self, problem: Problem) -> Result:
        device_of = self.device_of(problem)
        transfers = self.transfers(problem)
        start = simulate(problem, device_of, self.priority(problem, device_of), transfers=transfers,
                         levels=self.levels(problem, transfers))
        return Result.heuristic(to_schedule(problem, device_of, start, self.name, transfers),
                                bound=formulation_bound(problem, self.blocks(problem)))


def _register(partitioner: str, scheduler: str) -> type[PartitionSchedule]:
    name = f"{partitioner}+{scheduler}"
    bases = tuple(base for flag, base in ((partitioner in _USES_SEED, SeedOptions),
                                           (scheduler == "msr", MsrOptions)) if flag)
    options = type(f"Options[{name}]", bases + (FormulationOptions,), {"__doc__": f"Options of {name}."})
    label = _LABELS[partitioner]
    doc = (f"{label[0].upper() + label[1:]} + {_LABELS[scheduler]} per device "
           f"(Mayer et al. 2017).\n\n{PartitionSchedule.__doc__}")
    cls = type(f"PartitionSchedule[{name}]", (PartitionSchedule,),
               {"__doc__": doc, "Options": options, "partitioner": partitioner,
                "scheduler": scheduler, "__module__": __name__})
    return register_method(name)(cls)


PARTITION_SCHEDULE_METHODS: dict[str, type[PartitionSchedule]] = {
    f"{part}+{sched}": _register(part, sched) for part in PARTITIONERS for sched in SCHEDULERS}
"""Every registered ``PARTITIONER+SCHEDULER`` method class by name."""
