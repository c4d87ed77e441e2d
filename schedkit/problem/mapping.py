"""The one mapping-feasibility rule: which device strings (one device per task) are allowed.

A mapping is feasible when every task sits on one of its allowed devices (durations,
pins, its own memory), the tasks of a collocation group share a device, the static
memory of the tasks on each device fits its capacity
(:func:`~schedkit.numerics.fits`), and the devices of the two ends of every edge that
carries data are linked. The blocks ``assignment``, ``placement``, ``memory`` and
``precedence`` state the same rules on schedules; every heuristic checks its device
strings with this module.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> is_feasible_mapping(p, [0, 0, 0, 0, 0, 1]), is_feasible_mapping(p, [0] * 6)
(True, False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from schedkit.errors import ProblemError
from schedkit.numerics import fits

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.problem.problem import Problem


def memory_loads(problem: Problem, device_of: Sequence[int]) -> list[float]:
    """Static memory the tasks of ``device_of`` use on every device."""
    used = [0.0] * len(problem.devices)
    for i, d in enumerate(device_of):
        used[d] += problem.task_memory[i]
    return used


def check_mapping(problem: Problem, device_of: Sequence[int]) -> None:
    """Raise :class:`~schedkit.errors.ProblemError` unless ``device_of`` is a feasible mapping.

    Checks, naming the offending task or device: one device per task, each an
    allowed device of its task (durations, pins, memory of the task alone), the
    collocation groups share a device, the static memory of the tasks on each
    device fits, and the devices of the two ends of every edge carrying data are
    linked.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> check_mapping(p, [0, 0, 0, 0, 0, 0])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: task 'sample' cannot run on device gpu0 (allowed: cpu)
    """
    message = mapping_error(problem, device_of)
    if message is not None:
        raise ProblemError(message)


def is_feasible_mapping(problem: Problem, device_of: Sequence[int]) -> bool:
    """Whether ``device_of`` is a feasible mapping (see :func:`check_mapping`)."""
    return mapping_error(problem, device_of) is None


def mapping_error(problem: Problem, device_of: Sequence[int]) -> str | None:
    """The first reason why ``device_of`` is not a feasible mapping, or ``None``."""
    n, m = len(problem.tasks), len(problem.devices)
    if len(device_of) != n:
        return f"the mapping has {len(device_of)} entries for {n} tasks"
    for i, d in enumerate(device_of):
        if not isinstance(d, int) or not 0 <= d < m:
            return f"task '{problem.tasks[i]}' is mapped to unknown device {d!r}"
        if d not in problem.durations[i]:
            allowed = ", ".join(problem.devices[k] for k in problem.allowed[i])
            return f"task '{problem.tasks[i]}' cannot run on device {problem.devices[d]} (allowed: {allowed})"
    used = memory_loads(problem, device_of)
    for d, cap in enumerate(problem.device_memory):
        if not fits(used[d], cap):
            return (f"device {problem.devices[d]}: the tasks mapped to it need {used[d]:g} of memory, "
                    f"capacity {cap:g}")
    for group, members in problem.colocate_groups.items():
        devices = {device_of[i] for i in members}
        if len(devices) > 1:
            names = ", ".join(sorted(problem.devices[d] for d in devices))
            return f"collocation group '{group}' is split over {names}"
    for i, j, size in problem.edges:
        if not problem.pair_allowed(size, device_of[i], device_of[j]):
            return (f"edge {problem.tasks[i]}->{problem.tasks[j]}: no link path from "
                    f"{problem.devices[device_of[i]]} to {problem.devices[device_of[j]]}")
    return None
