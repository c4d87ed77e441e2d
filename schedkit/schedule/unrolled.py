"""A batched problem unrolled into one task per batch, and its schedules folded back.

Under ``batching`` (DESIGN) a task row is a batch: a task, a device and the inputs it runs
together. Given the batches (which inputs each task runs together, and optionally on which
device), :class:`Unrolled` is the problem of one task per batch, for that batch's time on
each device that runs batches of its size, with an edge from batch ``A`` of task ``i`` to
batch ``B`` of task ``j`` for every edge ``(i, j)`` where ``A`` and ``B`` share an input (a
batch waits for the batches that hold its inputs, plus the transfer time of the edge's
size when the devices differ). Any method for one input then schedules the batches, and
:meth:`Unrolled.fold` turns its schedule back into batch rows.

- :meth:`Unrolled.uniform`: DiviML's batched heuristics split the L inputs into batches of
  one size ``b`` (the last takes what is left): a copy of the graph per batch.
- The MILP's read-back fixes every batch's device and re-times the solver's batches
  exactly with :func:`~schedkit.timing.fixed_order_times` on the unrolled problem.

Pins are kept, and collocation holds batch by batch. Static ``memory`` is counted per
batch, more than the semantics count (once per device that runs a task): a schedule of the
batches is valid, never the reverse.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"name": "b", "workload": {"inputs": 3},
...     "devices": [{"name": "gpu", "batch_sizes": [1, 2]}, {"name": "cpu"}],
...     "tasks": [{"name": "a", "durations": {"gpu": {1: 2, 2: 3}, "cpu": 4}}]})
>>> u = Unrolled.uniform(p, 2)
>>> u.problem.tasks, [inputs for _, inputs, _ in u.batches]
(['a[0]', 'a[2]'], [[0, 1], [2]])
>>> u.problem.durations     # the cpu takes 4 per input, the gpu 3 for two
[{0: 3.0, 1: 8.0}, {0: 2.0, 1: 4.0}]
"""

from __future__ import annotations

from typing import Sequence

from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.schedule.schedule import Schedule, TaskRun

#: A batch: its task, its inputs and its device (``None``: any that runs batches of its size).
Batch = tuple[int, list[int], "int | None"]


class Unrolled:
    """One task per batch of ``problem``.

    Parameters
    ----------
    problem : Problem
        A problem with a workload of L inputs.
    batches : sequence of (task, inputs, device or None)
        Every (task, input) pair in exactly one batch.

    Attributes
    ----------
    problem : Problem
        The unrolled problem: task ``NAME[FIRST INPUT]`` per batch, in the order of
        ``batches`` (no workload).
    batches : list of (int, list of int, int or None)

    Raises
    ------
    ProblemError
        When a batch's size runs on none of its task's devices (or not on its device).
    """

    def __init__(self, problem: Problem, batches: Sequence[Batch]):
        self.original, self.batches = problem, [(i, list(inputs), d) for i, inputs, d in batches]
        spec, sizes = problem.spec, problem.batches
        tasks, names = [], []
        holder: list[dict[int, int]] = [{} for _ in problem.tasks]  # task -> input -> batch
        for k, (i, inputs, fixed) in enumerate(self.batches):
            task, size = spec.tasks[i], len(inputs)
            devices = problem.allowed[i] if fixed is None else (fixed,)
            durations = {problem.devices[d]: sizes.time(i, d, size) for d in devices if size in sizes.sizes[i].get(d, ())}
            if not durations:
                where = "any device" if fixed is None else problem.devices[fixed]
                raise ProblemError(f"task '{task.name}' runs no batch of {size} inputs on {where}")
            names.append(f"{task.name}[{inputs[0]}]")
            row = {"name": names[-1], "durations": durations, "memory": task.memory}
            if task.colocate is not None:
                row["colocate"] = f"{task.colocate}[{inputs[0]}]"
            tasks.append(row)
            for l in inputs:
                holder[i][l] = k
        edges = []
        for edge, (i, j, _) in zip(spec.edges, problem.edges):
            pairs = {(holder[i][l], holder[j][l]) for l in holder[j] if l in holder[i]}
            for a, b in sorted(pairs):
                row = {"src": names[a], "dst": names[b], "size": spec.edge_size(edge)}
                if edge.transfer_times:
                    row["transfer_times"] = dict(edge.transfer_times)
                edges.append(row)
        devices = [d.model_dump(exclude={"batch_sizes"}, exclude_none=True) for d in spec.devices]
        self.problem = Problem.from_dict({
            "name": problem.name, "devices": devices, "tasks": tasks, "edges": edges,
            "links": [link.model_dump(exclude_none=True) for link in spec.links]})

    @classmethod
    def uniform(cls, problem: Problem, size: int) -> Unrolled:
        """The L inputs in batches of ``size`` (the last holds ``L mod size`` when ``size`` does not
        divide L), every task's batches alike: a copy of the graph per batch."""
        L = problem.inputs
        chunks = [list(range(first, min(first + size, L))) for first in range(0, L, size)]
        return cls(problem, [(i, chunk, None) for chunk in chunks for i in range(len(problem.tasks))])

    def fold(self, schedule: Schedule) -> Schedule:
        """``schedule`` of the unrolled problem as batch rows of the original (no transfer rows:
        under batching a transfer is a delay)."""
        rows = {r.task: r for r in schedule.tasks}
        out = []
        for name, (i, inputs, _) in zip(self.problem.tasks, self.batches):
            row = rows[name]
            out.append(TaskRun(task=self.original.tasks[i], device=row.device, start=row.start, end=row.end,
                               inputs=list(inputs)))
        return schedule.model_copy(update={"tasks": out, "transfers": [], "makespan": max(r.end for r in out)})
