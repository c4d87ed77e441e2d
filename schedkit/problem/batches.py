"""Batches (DiviML): the sizes a task may run in on each device, and how long a batch takes.

A problem with ``workload: {inputs: L}`` asks for L inputs of its graph. Every
(task, input) pair runs in exactly one **batch**: a task, a device and a set of inputs
run together. DESIGN, "``batching``":

- a duration map ``{b: t}`` gives the time ``t`` of a batch of ``b`` inputs on that device
  (only the sizes it lists); a plain number ``t`` means ``t`` per input (``b * t``);
- a device's ``batch_sizes``, when given, restricts every batch on it (its duration maps
  must then list each of them: the spec checks that);
- no batch holds more than L inputs.

:class:`Batches` is that table for a :class:`~schedkit.problem.Problem`, and the check
that every task can split its L inputs into batches it may run.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"name": "b", "workload": {"inputs": 8},
...     "devices": [{"name": "gpu", "batch_sizes": [4, 8]}, {"name": "cpu"}],
...     "tasks": [{"name": "conv", "durations": {"gpu": {4: 1.0, 8: 1.5}, "cpu": 2.0}}]})
>>> b = p.batches
>>> b.inputs, b.sizes[0][0], b.sizes[0][1][-1]
(8, (4, 8), 8)
>>> b.time(0, 0, 8), b.time(0, 1, 3)
(1.5, 6.0)
"""

from __future__ import annotations

from schedkit.errors import ProblemError
from schedkit.machine import ensure_fits

#: Bytes a method holds per (task, input) run, at the least: an unrolled task with its rows.
TASK_RUN_BYTES = 1000


class Batches:
    """Batch sizes and batch times of every task on every device it may use.

    Parameters
    ----------
    problem : Problem

    Attributes
    ----------
    inputs : int
        L, the workload's inputs (1 without a workload).
    sizes : list of dict
        ``sizes[i][d]``: the batch sizes task ``i`` may run in on device ``d`` (ascending),
        for its allowed devices.

    Raises
    ------
    ProblemError
        When a task's sizes cannot add up to L on any mix of its devices.
    """

    def __init__(self, problem):
        spec = problem.spec
        self.inputs = spec.workload.inputs if spec.workload is not None else 1
        if self.inputs > 1:  # (every method holds each task's runs, and sizes up to L a device)
            n, L = len(spec.tasks), self.inputs
            ensure_fits(f"workload.inputs: {L:,} inputs of {n:,} tasks are {n * L:,} task runs to schedule",
                        n * L * (TASK_RUN_BYTES + 8 * len(spec.devices)))
        self._tables: list[dict[int, object]] = []
        self.sizes: list[dict[int, tuple[int, ...]]] = []
        for i, task in enumerate(spec.tasks):
            tables, sizes = {}, {}
            for d in problem.allowed[i]:
                device = spec.devices[d]
                value = task.entry(device) if task.durations is not None else task.work / device.speed
                tables[d] = value
                offered = value.keys() if isinstance(value, dict) else range(1, self.inputs + 1)
                allowed = set(offered) & set(device.batch_sizes) if device.batch_sizes else set(offered)
                sizes[d] = tuple(sorted(b for b in allowed if b <= self.inputs))
            self._tables.append(tables)
            self.sizes.append(sizes)
            every = sorted(set().union(*sizes.values()))
            if not adds_up(every, self.inputs):
                raise ProblemError(f"task '{task.name}': its batch sizes {tuple(every)} cannot add up to the "
                                   f"workload's {self.inputs} input{'s' if self.inputs > 1 else ''}")

    def time(self, i: int, d: int, b: int) -> float:
        """Time of a batch of ``b`` inputs of task ``i`` on device ``d`` (``b`` one of its sizes)."""
        value = self._tables[i][d]
        return float(value[b]) if isinstance(value, dict) else b * float(value)

    def per_input(self, i: int, d: int) -> float:
        """The least time per input of task ``i`` on ``d``, over its sizes there (for ranks and bounds)."""
        return min(self.time(i, d, b) / b for b in self.sizes[i][d]) if self.sizes[i][d] else float("inf")

    def lower_bound(self, problem) -> float:
        """A lower bound on the makespan of the L inputs of ``problem``.

        The longest path of the least time of one batch of each task (the batch that holds
        input 0 takes at least that), and the least total time per input of every task, L
        times, spread over all devices.
        """
        n = len(problem.tasks)
        least = [min(self.time(i, d, b) for d in problem.allowed[i] for b in self.sizes[i][d]) for i in range(n)]
        finish = [0.0] * n
        for i in problem.topological_order:
            finish[i] = least[i] + max((finish[k] for k, _ in problem.preds[i]), default=0.0)
        work = sum(self.inputs * min(self.per_input(i, d) for d in problem.allowed[i]) for i in range(n))
        return max(max(finish), work / len(problem.devices))

    def splits(self, problem) -> list[int]:
        """Candidate sizes of a split into equal batches, ascending: 1, L/4, L/2, 3L/4, L (DiviML's)
        and every device's batch sizes up to L."""
        L = self.inputs
        sizes = {1, L // 4, L // 2, 3 * L // 4, L}
        for device in problem.spec.devices:
            sizes.update(device.batch_sizes or ())
        return sorted(b for b in sizes if 1 <= b <= L)


def adds_up(sizes, total: int) -> bool:
    """Whether ``total`` is a sum of ``sizes`` (each used any number of times).

    >>> adds_up([4, 8], 12), adds_up([4, 8], 10), adds_up([], 0)
    (True, False, True)
    """
    if 1 in sizes:  # (any total: the table below would cost L steps per size)
        return True
    reachable = [True] + [False] * total
    for t in range(1, total + 1):
        reachable[t] = any(b <= t and reachable[t - b] for b in sizes)
    return reachable[total]
