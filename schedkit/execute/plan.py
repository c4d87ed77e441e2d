"""A schedule matched to the model it places: each device's tasks in order, the times it predicts.

:func:`make_plan` checks that a ``schedkit-schedule/v1`` schedule places exactly the model's
operators (the task names ``convert onnx`` gives them), that it is a schedule of the problem
when one is given (its name, its tasks, the validator), that no task starts before an input
ends, and that every device it uses can run here. Only CPUs run here: a device is a CPU when
its name (after a server prefix ``n0_``), its ``group`` or its ``type`` in the problem starts
with ``cpu`` (as ``schedkit generate platform`` names them: ``cpu``, ``cpu0``, group
``cpu-server``);
``--map DEVICE=cpu`` (:func:`parse_device_map`) runs another device's tasks on a CPU worker
of its own.

Examples
--------
>>> from schedkit.schedule import Schedule
>>> schedule = Schedule.model_validate({"problem": "p", "method": "m", "status": "heuristic",
...     "tasks": [{"task": "b", "device": "gpu0", "start": 1, "end": 3},
...               {"task": "a", "device": "cpu", "start": 0, "end": 1}]})
>>> plan = make_plan(["a", "b"], {"a": [], "b": ["a"]}, schedule, device_map={"gpu0": "cpu"})
>>> plan.order, plan.busy, plan.makespan, plan.mapped
({'cpu': ['a'], 'gpu0': ['b']}, {'cpu': 1.0, 'gpu0': 2.0}, 3.0, ('gpu0',))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedkit.errors import InvalidScheduleError, ScheduleError, SchedkitError

__all__ = ["Plan", "make_plan", "parse_device_map", "is_cpu", "listed"]

#: The only kind of worker this machine runs (onnxruntime's CPU provider).
CPU = "cpu"


def listed(names: list[str], most: int = 5) -> str:
    """``a, b, c (+2 more)``: the first names of a list, for one-line messages.

    Examples
    --------
    >>> listed(["n1", "n2", "n3"], most=2)
    'n1, n2 (+1 more)'
    """
    shown = ", ".join(names[:most])
    return shown + (f" (+{len(names) - most} more)" if len(names) > most else "")


def parse_device_map(items: list[str] | None) -> dict[str, str]:
    """``--map DEVICE=cpu`` values as a map from device to ``cpu``.

    Examples
    --------
    >>> parse_device_map(["gpu0=cpu", "gpu1=CPU"])
    {'gpu0': 'cpu', 'gpu1': 'cpu'}
    >>> parse_device_map(["gpu0=tpu"])
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: --map gpu0=tpu: only CPU workers run here: give DEVICE=cpu
    """
    mapping: dict[str, str] = {}
    for item in items or []:
        device, sep, target = str(item).partition("=")
        if not sep or not device.strip():
            raise SchedkitError(f"--map {item}: give DEVICE=cpu")
        if target.strip().lower() != CPU:
            raise SchedkitError(f"--map {item}: only CPU workers run here: give DEVICE=cpu")
        mapping[device.strip()] = CPU
    return mapping


def is_cpu(name: str, spec: Any = None) -> bool:
    """Whether device ``name`` (with its ``DeviceSpec`` from the problem, if any) is a CPU.

    Examples
    --------
    >>> is_cpu("cpu1"), is_cpu("n1_CPU0"), is_cpu("gpu0"), is_cpu("host"), is_cpu("n0_gpu0")
    (True, True, False, False, False)
    """
    # the name without a server prefix, as a platform reads a device's type from its name
    words = [name.rsplit("_", 1)[-1], getattr(spec, "group", None), getattr(spec, "type", None)]
    return any(isinstance(w, str) and w.lower().startswith(CPU) for w in words)


@dataclass
class Plan:
    """What a schedule asks of the workers, and what it predicts.

    Attributes
    ----------
    order : dict
        Device -> its tasks in the schedule's order (start, then end, then model order).
    start, end : dict
        Task -> its start and end in the schedule.
    makespan : float
        The schedule's predicted makespan (transfers included).
    busy : dict
        Device -> the predicted time its tasks run.
    mapped : tuple of str
        The devices that are not CPUs, run on CPU workers by ``--map``.
    devices : int
        The devices of the platform: the problem's, else the schedule's (each a share of the
        cores, used or not).
    unit : str
        The time unit of the schedule's times.
    unit_assumed : bool
        True when no problem gave the unit (``ms``, ``convert onnx``'s default, assumed).
    """

    order: dict[str, list[str]]
    start: dict[str, float]
    end: dict[str, float]
    makespan: float
    busy: dict[str, float]
    mapped: tuple[str, ...]
    devices: int = 1
    unit: str = "ms"
    unit_assumed: bool = True


def make_plan(tasks: list[str], preds: dict[str, list[str]], schedule: Any, problem: Any = None,
              device_map: dict[str, str] | None = None, source: str = "schedule") -> Plan:
    """Match ``schedule`` to a model's tasks (and its problem); see the module documentation.

    Parameters
    ----------
    tasks : list of str
        The model's tasks, in model order.
    preds : dict
        Task -> the tasks whose outputs it reads.
    schedule : Schedule
        The schedule to run.
    problem : Problem, optional
        The problem it was solved for: checked against the schedule and the model, and the
        source of device kinds and time unit.
    device_map : dict, optional
        Device -> ``cpu`` (:func:`parse_device_map`).
    source : str
        The schedule's name in messages (its path).

    Raises
    ------
    ScheduleError
        When the schedule does not place exactly the model's operators, is batched, is not
        a schedule of ``problem``, starts a task before its input ends, or uses a device
        that is not available here.
    SchedkitError
        When ``device_map`` names a device the schedule does not use.

    Examples
    --------
    >>> from schedkit.schedule import Schedule
    >>> schedule = Schedule.model_validate({"problem": "p", "method": "m", "status": "heuristic",
    ...     "tasks": [{"task": "a", "device": "gpu0", "start": 0, "end": 1}]})
    >>> make_plan(["a"], {"a": []}, schedule)
    Traceback (most recent call last):
    ...
    schedkit.errors.ScheduleError: schedule: device gpu0 is not a CPU, and only CPU workers run here: add --map gpu0=cpu to run its tasks on a CPU worker
    """
    rows = schedule.tasks
    if any(r.inputs is not None for r in rows):
        raise ScheduleError(f"{source}: a batched schedule (rows with 'inputs') cannot be executed")
    seen: set[str] = set()
    twice = [r.task for r in rows if r.task in seen or seen.add(r.task)]
    if twice:
        raise ScheduleError(f"{source}: {len(twice)} task(s) placed twice: {listed(twice)}")
    _same_tasks(source, "the schedule", [r.task for r in rows], tasks)
    specs: dict[str, Any] = {}
    unit = None
    if problem is not None:
        if schedule.problem != problem.name:
            raise ScheduleError(f"{source}: a schedule of problem '{schedule.problem}', not of "
                                f"'{problem.name}' (--problem)")
        _same_tasks(source, f"problem '{problem.name}'", problem.tasks, tasks)
        violations = schedule.violations(problem)
        if violations:
            raise InvalidScheduleError(violations, context=source)
        specs = {d.name: d for d in problem.spec.devices}
        unit = getattr(problem.spec, "time_unit", None)
    # devices in the problem's order, else by name: the workers' order in every listing
    position = {d: k for k, d in enumerate(specs)}
    used = sorted({r.device for r in rows}, key=lambda d: (position.get(d, len(position)), d))
    mapping = dict(device_map or {})
    for device in mapping:
        if device not in used:
            raise SchedkitError(f"--map {device}=cpu: the schedule has no device '{device}' "
                                f"(its devices: {listed(used)})")
    foreign = [d for d in used if not is_cpu(d, specs.get(d)) and d not in mapping]
    if foreign:
        maps = " ".join(f"--map {d}=cpu" for d in foreign)
        raise ScheduleError(f"{source}: device{'s' if len(foreign) > 1 else ''} {listed(foreign, 10)} "
                            f"{'are not CPUs' if len(foreign) > 1 else 'is not a CPU'}, and only CPU "
                            f"workers run here: add {maps} to run {'their' if len(foreign) > 1 else 'its'} "
                            f"tasks on a CPU worker")
    start = {r.task: r.start for r in rows}
    end = {r.task: r.end for r in rows}
    makespan = float(schedule.makespan or 0.0)
    tolerance = 1e-9 * max(1.0, abs(makespan))
    for task in tasks:
        for p in preds[task]:
            if end[p] > start[task] + tolerance:
                raise ScheduleError(f"{source}: task '{task}' starts at {start[task]:g}, before its "
                                    f"input from '{p}' ends at {end[p]:g}")
    rank = {t: k for k, t in enumerate(tasks)}
    order = {d: [] for d in used}
    for r in sorted(rows, key=lambda r: (r.start, r.end, rank[r.task])):
        order[r.device].append(r.task)
    busy = {d: float(sum(end[t] - start[t] for t in ts)) for d, ts in order.items()}
    return Plan(order, start, end, makespan, busy, tuple(d for d in used if d in mapping),
                len(specs) or len(used), unit or "ms", unit is None)


def _same_tasks(source: str, what: str, given: list[str], model: list[str]) -> None:
    """Refuse ``given`` task names unless they are exactly the model's, naming how many differ."""
    known = set(model)
    unknown = [t for t in given if t not in known]
    placed = set(given)
    missing = [t for t in model if t not in placed]
    if unknown or missing:
        parts = []
        if unknown:
            parts.append(f"{len(unknown)} task(s) of {what} are not operators of the model: {listed(unknown)}")
        if missing:
            parts.append(f"{len(missing)} operator(s) of the model are missing from {what}: {listed(missing)}")
        raise ScheduleError(f"{source}: {'; '.join(parts)}")
