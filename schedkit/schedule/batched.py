"""Batched schedules (DiviML): a task row is a batch of inputs, and each input is followed on its own.

With ``workload: {inputs: L}`` a task row carries ``inputs: [l, ...]``: the inputs it
runs together (DESIGN, "``batching``"). The blocks judge such a schedule input by input:
for every task and input, the one row that holds it (:func:`rows_by_input`). A schedule
whose rows carry no ``inputs`` is one input, as before.

Examples
--------
>>> from schedkit.schedule import Schedule, TaskRun
>>> s = Schedule(problem="p", method="manual", status="heuristic", tasks=[
...     TaskRun(task="a", device="gpu", start=0, end=2, inputs=[0, 1]),
...     TaskRun(task="a", device="cpu", start=0, end=3, inputs=[2])])
>>> is_batched(s), throughput(s)
(True, 1.0)
>>> rows, problems = rows_by_input(["a"], 3, s)
>>> rows["a"][2].device, problems
('cpu', [])
"""

from __future__ import annotations

from typing import Sequence


def is_batched(schedule) -> bool:
    """Whether the schedule's rows are batches (some row carries ``inputs``)."""
    return any(row.inputs is not None for row in schedule.tasks)


def inputs_of(schedule) -> int:
    """The inputs a schedule processes: one more than the highest input index (1 unbatched)."""
    return max((max(row.inputs) + 1 for row in schedule.tasks if row.inputs), default=1)


def throughput(schedule) -> float | None:
    """Inputs per time unit, ``L / makespan`` (``None`` without a positive makespan)."""
    makespan = schedule.makespan
    return inputs_of(schedule) / makespan if makespan else None


def rows_by_input(tasks: Sequence[str], inputs: int, schedule) -> tuple[dict[str, dict[int, object]], list[str]]:
    """For every task and input ``0..inputs-1``, the row that holds it; and what is wrong.

    An unbatched row holds input 0 (and, with ``inputs > 1``, is a batch without its
    ``inputs``: named as such). Problems named: an input outside ``0..inputs-1``, an input
    in two rows, an input in no row, a row listing an input twice or none.
    """
    out: dict[str, dict[int, object]] = {name: {} for name in tasks}
    problems = []
    for row in schedule.tasks:
        held = out.get(row.task)
        if held is None:
            continue  # an unknown task: the structural checks name it
        if row.inputs is None:
            if inputs > 1:
                problems.append(f"task '{row.task}': a row on {row.device} lists no 'inputs' "
                                f"(the workload has {inputs} inputs)")
                continue
            listed = [0]
        else:
            listed = row.inputs
            if not listed:
                problems.append(f"task '{row.task}': a batch on {row.device} at {row.start:g} holds no input")
            if len(set(listed)) < len(listed):
                problems.append(f"task '{row.task}': a batch on {row.device} at {row.start:g} lists an "
                                f"input twice")
        for l in listed:
            if not 0 <= l < inputs:
                problems.append(f"task '{row.task}': input {l} is not one of the workload's 0..{inputs - 1}")
            elif l in held and held[l] is not row:
                problems.append(f"task '{row.task}': input {l} is in two batches")
            else:
                held[l] = row
    for name, held in out.items():
        missing = [l for l in range(inputs) if l not in held]
        if missing and len(missing) < inputs:
            problems.append(f"task '{name}': input {missing[0]} is in no batch")
    return out, problems
