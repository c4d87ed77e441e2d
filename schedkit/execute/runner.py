"""Run a schedule's plan of an ONNX model on onnxruntime and compare it with its predictions.

:func:`execute` is what ``schedkit execute`` runs: it reads the model
(:mod:`~schedkit.execute.graph`), matches the schedule to it (:mod:`~schedkit.execute.plan`),
cuts each device's tasks into segments and sub-models (:mod:`~schedkit.execute.segments`),
gives each device a worker with its own sessions and thread budget
(:mod:`~schedkit.execute.workers`), and runs the model ``warmup + runs`` times on one random
input. Then it runs the whole model in one session, with every tensor the cut hands between
segments as an extra output, and checks that the split run's outputs and handed tensors equal
it (``numpy.allclose``): the proof that the cut is right. An :class:`Execution` holds the
measured and predicted times.

Examples
--------
>>> import pathlib, tempfile
>>> from onnx import TensorProto, helper, save
>>> from schedkit.schedule import Schedule
>>> v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])
>>> nodes = [helper.make_node("Relu", ["x"], ["h"], name="a"), helper.make_node("Neg", ["h"], ["y"], name="b")]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.onnx"
>>> save(helper.make_model(helper.make_graph(nodes, "g", [v("x")], [v("y")])), path)
>>> schedule = Schedule.model_validate({"problem": "m", "method": "manual", "status": "heuristic",
...     "tasks": [{"task": "a", "device": "cpu0", "start": 0, "end": 1},
...               {"task": "b", "device": "cpu1", "start": 1, "end": 2}]})
>>> run = execute(path, schedule, runs=2, warmup=0)
>>> run.segments, run.checked, run.predicted_makespan
({'cpu0': 1, 'cpu1': 1}, 2, 2.0)
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedkit.errors import SchedkitError
from schedkit.execute.graph import ModelTasks, constant_values, first_line, load_model
from schedkit.execute.plan import make_plan
from schedkit.execute.segments import cut, segments, sub_model
from schedkit.execute.workers import ExecuteError, Part, run_workers

__all__ = ["Execution", "execute", "need_runtime", "usable_cores", "OPTIMIZATION_LEVELS"]

#: Seconds per time unit of a schedule.
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
#: ``--optimization`` levels: names of onnxruntime's ``GraphOptimizationLevel`` members.
OPTIMIZATION_LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def need_runtime() -> Any:
    """Import ``onnxruntime``; a one-line :class:`SchedkitError` naming the extra when missing.

    Examples
    --------
    >>> need_runtime().__name__
    'onnxruntime'
    """
    try:
        import onnxruntime
    except ImportError as exc:
        raise SchedkitError(f"execute needs onnxruntime, which is not installed ({first_line(exc)}): "
                            "pip install 'schedkit[profile]'") from None
    return onnxruntime


def usable_cores() -> int:
    """The cores this process may run on.

    Examples
    --------
    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class Execution:
    """A placed model's measured run beside the schedule's predictions.

    Times are in the schedule's time unit (``unit``). Measured values are medians over the
    measured runs.

    Attributes
    ----------
    model : str
        The model's name.
    unit : str
        The time unit; ``unit_assumed`` when no problem recorded one.
    runs, warmup : int
        Measured and unmeasured runs.
    optimization : str
        onnxruntime's graph optimisation level (a key of :data:`OPTIMIZATION_LEVELS`).
    threads : dict
        Device -> its worker's intra-op threads.
    segments : dict
        Device -> its number of segments (sub-models).
    mapped : tuple of str
        Devices run on CPU workers by ``--map``.
    latency, predicted_makespan : float
        Measured end-to-end latency and the schedule's makespan.
    busy, predicted_busy : dict
        Device -> measured and predicted busy time.
    single : float
        Latency of the whole model in one session using every core.
    checked : int
        How many tensors (outputs and handed tensors) equal the single-session run.
    max_difference : float
        Their largest absolute difference, relative to the largest value of its tensor.
    outputs : dict
        The model's outputs from the split run (of the last run).
    """

    model: str
    unit: str
    unit_assumed: bool
    runs: int
    warmup: int
    optimization: str
    threads: dict[str, int]
    segments: dict[str, int]
    mapped: tuple[str, ...]
    latency: float
    predicted_makespan: float
    busy: dict[str, float]
    predicted_busy: dict[str, float]
    single: float
    single_threads: int
    checked: int
    max_difference: float
    outputs: dict[str, Any]

    def lines(self) -> list[str]:
        """The report ``schedkit execute`` prints."""
        u = self.unit
        workers = "; ".join(f"{d}: {self.threads[d]} thread{'s' if self.threads[d] > 1 else ''}, "
                            f"{self.segments[d]} segment{'s' if self.segments[d] > 1 else ''}"
                            + (" (mapped to cpu)" if d in self.mapped else "") for d in self.threads)
        assumed = f" (times read as {u}: neither the problem nor --time-unit gave a unit)" if self.unit_assumed else ""
        lines = [f"{self.model} on {len(self.threads)} CPU worker(s) ({workers}); "
                 f"median of {self.runs} run(s) after {self.warmup} warm-up, optimisation "
                 f"{self.optimization}{assumed}",
                 f"latency: measured {self.latency:.4g} {u}, predicted makespan "
                 f"{self.predicted_makespan:.4g} {u}: measured/predicted "
                 f"{_ratio(self.latency, self.predicted_makespan)}"]
        for device in self.threads:
            lines.append(f"  {device} busy: measured {self.busy[device]:.4g} {u}, predicted "
                         f"{self.predicted_busy[device]:.4g} {u}: measured/predicted "
                         f"{_ratio(self.busy[device], self.predicted_busy[device])}")
        lines.append(f"single session ({self.single_threads} thread{'s' if self.single_threads > 1 else ''}): "
                     f"{self.single:.4g} {u}; {self.checked} tensor(s) (outputs and handed tensors) equal "
                     f"its values (largest difference {self.max_difference:.2g} of the tensor's largest value)")
        return lines


def _ratio(measured: float, predicted: float) -> str:
    return f"{measured / predicted:.3f}" if predicted > 0 else "n/a (predicted 0)"


def execute(model: str | Path, schedule: Any, problem: Any = None, device_map: dict[str, str] | None = None,
            runs: int = 10, warmup: int = 2, threads: int | None = None, shape: Any = None,
            unit: str | None = None, optimization: str = "basic", source: str = "schedule") -> Execution:
    """Run ``schedule``'s plan of ``model`` on CPU workers; see the module documentation.

    Parameters
    ----------
    model : str or Path
        The ONNX model the schedule's problem was converted from.
    schedule : Schedule
        Its schedule.
    problem : Problem, optional
        The problem: checked against the schedule, the source of device kinds and time unit.
    device_map : dict, optional
        Device -> ``cpu``: run a device that is not a CPU on a CPU worker.
    runs, warmup : int
        Measured runs (at least 1) and unmeasured runs before them.
    threads : int, optional
        Intra-op threads per worker; by default the usable cores split evenly between the
        devices of the problem (used or not: a plan that leaves a device idle still runs on
        its share), else of the schedule, at least 1.
    shape : optional
        ``--shape`` values for inputs with dynamic dimensions.
    unit : {"s", "ms", "us"}, optional
        The unit of the schedule's times; by default the problem's, else ``ms`` (what
        ``convert onnx`` writes by default), said so in the report.
    optimization : {"basic", "extended", "all"}
        onnxruntime's graph optimisation level of every session: by default ``basic``, the
        level ``schedkit profile`` measures durations at (``all`` changes the layout and is
        faster, but the durations of the plan were not measured so).
    source : str
        The schedule's name in messages.

    Raises
    ------
    SchedkitError
        On bad input (one line naming it), a failing worker, or a split run whose values
        differ from the whole model's.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise SchedkitError(f"--runs {runs}: give a whole number of runs >= 1")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise SchedkitError(f"--warmup {warmup}: give a whole number >= 0")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise SchedkitError(f"--threads-per-device {threads}: give a whole number >= 1")
    if optimization not in OPTIMIZATION_LEVELS:
        raise SchedkitError(f"--optimization {optimization}: give one of {', '.join(OPTIMIZATION_LEVELS)}")
    if unit is not None and unit not in _SECONDS:
        raise SchedkitError(f"--time-unit {unit}: give one of {', '.join(_SECONDS)}")
    runtime = need_runtime()
    tasks = load_model(model, shape)
    preds = {t: list(dict.fromkeys(tasks.producer[x] for x in tasks.inputs[t] if x in tasks.producer))
             for t in tasks.order}
    plan = make_plan(tasks.order, preds, schedule, problem, device_map, source)
    groups = cut(plan.order, preds, plan.start, plan.end, tolerance=1e-9 * max(1.0, plan.makespan))
    rows = segments(tasks, groups)
    cores = usable_cores()
    budget = threads or max(1, cores // max(len(plan.order), plan.devices))
    level = getattr(runtime.GraphOptimizationLevel, OPTIMIZATION_LEVELS[optimization])
    values = constant_values(tasks, runtime)
    parts: dict[str, list[Part]] = {d: [] for d in plan.order}
    for row in rows:
        session = _session(runtime, sub_model(tasks, row, values), budget, level,
                           alone=len(plan.order) == 1, what=row.label)
        parts[row.device].append(Part(row.label, session, list(row.inputs), list(row.outputs)))
    feeds = _inputs(tasks)
    timing = run_workers(parts, feeds, runs, warmup)
    handed = [t for row in rows for t in row.outputs]
    reference, single = _single_session(runtime, tasks, feeds, handed, runs, warmup, cores, level)
    split = _weights(tasks, tasks.graph_outputs)  # (a weight may be an output of the model too)
    split.update(values)
    split.update(timing.values)
    checked, difference = _compare(reference, split, tasks.path)
    unit, assumed = (unit, False) if unit is not None else (plan.unit, plan.unit_assumed)
    seconds = _SECONDS[unit]
    return Execution(
        model=tasks.path.stem, unit=unit, unit_assumed=assumed, runs=runs, warmup=warmup,
        optimization=optimization,
        threads={d: budget for d in plan.order}, segments={d: len(p) for d, p in parts.items()},
        mapped=plan.mapped, latency=statistics.median(timing.latency) / seconds,
        predicted_makespan=plan.makespan,
        busy={d: statistics.median(b) / seconds for d, b in timing.busy.items()},
        predicted_busy=plan.busy, single=single / seconds, single_threads=cores, checked=checked,
        max_difference=difference, outputs={name: split[name] for name in tasks.graph_outputs})


def _weights(tasks: ModelTasks, names: list[str]) -> dict[str, Any]:
    """The initializers among ``names``, as arrays."""
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in tasks.model.graph.initializer if t.name in names}


def _session(runtime: Any, proto: Any, threads: int, level: Any, alone: bool, what: str) -> Any:
    options = runtime.SessionOptions()
    options.graph_optimization_level = level
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = runtime.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: its warnings (unused initializers) are no news
    if not alone:
        # Idle pool threads that spin would take the cores of the other workers.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return runtime.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own error types
        raise ExecuteError(f"{what}: onnxruntime cannot load it: {first_line(exc)}") from None


def _inputs(tasks: ModelTasks) -> dict[str, Any]:
    """One input per model input, the same every run: normal noise, zeros for integers and booleans."""
    import numpy as np
    from onnx import helper

    rng = np.random.default_rng(0)
    feeds = {}
    for name in tasks.graph_inputs:
        dtype = helper.tensor_dtype_to_np_dtype(tasks.types[name].tensor_type.elem_type)
        shape = tasks.input_shape(name)
        feeds[name] = rng.standard_normal(shape).astype(dtype) if np.issubdtype(dtype, np.floating) \
            else np.zeros(shape, dtype=dtype)
    return feeds


def _single_session(runtime: Any, tasks: ModelTasks, feeds: dict, handed: list[str], runs: int,
                    warmup: int, cores: int, level: Any) -> tuple[dict[str, Any], float]:
    """The whole model's values (outputs and ``handed`` tensors) and its median latency, one session."""
    from time import perf_counter

    from onnx import ModelProto

    whole = ModelProto()
    whole.CopyFrom(tasks.model)
    outputs = list(tasks.graph_outputs)
    for name in handed:
        if name not in outputs:
            whole.graph.output.append(tasks.value_info(name))
            outputs.append(name)
    probe = _session(runtime, whole, cores, level, alone=True, what=f"{tasks.path} (whole)")
    try:
        reference = dict(zip(outputs, probe.run(outputs, feeds)))
    except Exception as exc:  # onnxruntime's own error types
        raise ExecuteError(f"{tasks.path}: the whole model fails in one session: {first_line(exc)}") from None
    del probe
    # Timed on the model as it is: extra outputs would keep onnxruntime from fusing across them.
    session = _session(runtime, tasks.model, cores, level, alone=True, what=f"{tasks.path} (whole)")
    times = []
    for k in range(warmup + runs):
        began = perf_counter()
        session.run(tasks.graph_outputs, feeds)
        if k >= warmup:
            times.append(perf_counter() - began)
    return reference, statistics.median(times)


def _compare(reference: dict[str, Any], split: dict[str, Any], path: Path) -> tuple[int, float]:
    """Check the split run's tensors against the single session's; raise naming those that differ."""
    import numpy as np

    wrong, largest = [], 0.0
    for name, expected in reference.items():
        got = split.get(name)
        got, expected = np.asarray(got), np.asarray(expected)
        if got.shape != expected.shape or got.dtype != expected.dtype:
            wrong.append(name)
            continue
        if np.issubdtype(expected.dtype, np.inexact):
            same = np.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
            finite = np.isfinite(expected) & np.isfinite(got)
            scale = float(np.max(np.abs(expected[finite]))) if finite.any() else 0.0
            if scale > 0:  # relative to the tensor's largest value: the light models reach 1e12
                largest = max(largest, float(np.max(np.abs(got[finite] - expected[finite]))) / scale)
        else:
            same = np.array_equal(got, expected)
        if not same:
            wrong.append(name)
    if wrong:
        shown = ", ".join(wrong[:5]) + (f" (+{len(wrong) - 5} more)" if len(wrong) > 5 else "")
        raise ExecuteError(f"{path}: the split run differs from the single-session run in "
                           f"{len(wrong)} of {len(reference)} tensor(s): {shown}")
    return len(reference), largest
