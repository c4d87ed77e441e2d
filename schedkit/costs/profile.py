"""``schedkit profile``: measure a model's nodes with onnxruntime's profiler into a cost table.

The model is read as ``convert onnx`` reads it (``--shape`` fixes symbolic dimensions), so
the table's nodes are the problem's tasks under the same names. onnxruntime runs it on
random inputs of the right types (the onnx wheel's light models, whose weights are made by
``ConstantOfShape``, run as they are: the runtime folds those constants once), in two
sessions that take turns run by run (so that a change in the machine's load weighs on both
alike; the model is in memory twice): one without the profiler, whose ``runs`` timed runs
after ``warmup`` give the table's ``total`` (median and mean), and one with the profiler,
whose kernel times in its ``runs`` runs after ``warmup`` make the nodes' rows
(:mod:`~schedkit.costs.ort_profile`). The table's ``total.overhead`` is the time a run spends
outside the nodes, measured pairwise (:func:`paired_overhead`): it is what
``convert onnx --costs`` shares among the nodes (:meth:`~schedkit.costs.CostTable.overhead`).
On this toolkit's 2-core development machine it is within 1 % of the light models' latency
(about 4 microseconds between kernels); what differs more, between a median of whole runs and
a sum of per-node medians, is other processes' load, which the pairing leaves out.

Graph optimisation is onnxruntime's ``basic`` level by default: constants are folded and a
``BatchNormalization`` is folded into its ``Conv`` (that node is then in the table with
``calls`` 0 and time 0), but nodes keep their names. ``extended`` also fuses activations
into convolutions. onnxruntime's ``all`` level changes the layout (NCHWc) and renames the
nodes, so that their times no longer belong to the model's operators: it is not offered.

Examples
--------
>>> import pathlib, tempfile
>>> from onnx import TensorProto, helper, save
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 64])
>>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["h"], name="relu"),
...                            helper.make_node("Sigmoid", ["h"], ["y"], name="gate")],
...                           "mlp", [x], [y])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "mlp.onnx"
>>> save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
>>> table, left_out = profile_model(path, runs=2, warmup=1, threads=1, shape=["n=4"])
>>> [(n.name, n.op_type, n.calls, n.output_bytes) for n in table.nodes], table.runs, left_out
([('relu', 'Relu', 1, 1024), ('gate', 'Sigmoid', 1, 1024)], 2, {})
>>> table.device.type, table.device.threads, table.total is not None
('cpu', 1, True)
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from schedkit.costs.ort_profile import kernel_runs, node_costs, provider_type
from schedkit.costs.table import CostTable, ModelInfo
from schedkit.errors import ProblemError, SchedkitError
from schedkit.problem.reading import file_path, parse_json, read_text

__all__ = ["OPTIMIZATION_LEVELS", "paired_overhead", "profile_model"]

#: ``--optimization`` levels: names of onnxruntime's ``GraphOptimizationLevel`` members.
OPTIMIZATION_LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED"}


def _onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise SchedkitError("profiling needs onnxruntime, the 'profile' extra: "
                            "pip install 'schedkit[profile]'") from None
    return onnxruntime


def profile_model(path: str | Path, *, runs: int = 10, warmup: int = 3, threads: int | None = None,
                  provider: str = "CPUExecutionProvider", shape: Any = None,
                  optimization: str = "basic",
                  progress: Callable[[int, int], None] | None = None) -> tuple[CostTable, dict]:
    """Profile the ONNX model at ``path`` with onnxruntime; see the module documentation.

    Parameters
    ----------
    path : str or Path
        The ONNX model.
    runs, warmup : int
        Measured runs (at least 1) and warm-up runs left out (at least 0), each with and
        without the profiler.
    threads : int, optional
        onnxruntime's intra-op threads (by default the machine's CPU count).
    provider : str
        An execution provider the installed onnxruntime offers.
    shape : str, list of str or dict, optional
        Static shapes of inputs or values of symbolic dimensions, as ``convert onnx --shape``.
    optimization : str
        A key of :data:`OPTIMIZATION_LEVELS`.
    progress : callable, optional
        Called as ``progress(done, total)`` after every run.

    Returns
    -------
    (CostTable, dict)
        The table, in milliseconds, and the kernels of nodes the runtime made itself (no
        operator of the model), with their mean time per run in milliseconds.

    Raises
    ------
    SchedkitError
        A bad option, a model onnxruntime cannot load or run, or too little memory (one line).
    """
    from schedkit.importers.onnx import operator_costs

    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ProblemError(f"--runs {runs}: give at least 1 measured run")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ProblemError(f"--warmup {warmup}: give 0 or more warm-up runs")
    threads = os.cpu_count() or 1 if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ProblemError(f"--threads {threads}: give at least 1 thread")
    if optimization not in OPTIMIZATION_LEVELS:
        raise ProblemError(f"--optimization {optimization}: choose one of {', '.join(OPTIMIZATION_LEVELS)}")
    ort = _onnxruntime()
    available = ort.get_available_providers()
    if provider not in available:
        raise ProblemError(f"--provider {provider}: not offered by this onnxruntime "
                           f"(available: {', '.join(available)})")
    path = file_path(path)
    operators, model = operator_costs(path, shape)
    feed = _random_inputs(model)
    serialized = model.SerializeToString()
    total_runs = 2 * (warmup + runs)
    done = [0]

    def step() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total_runs)

    plain = _session(ort, serialized, path, threads, provider, optimization, None)
    latencies = []
    with tempfile.TemporaryDirectory(prefix="schedkit-profile-") as folder:
        profiled = _session(ort, serialized, path, threads, provider, optimization,
                            os.path.join(folder, "ort"))
        # Unprofiled and profiled runs take turns, so that a machine whose load changes
        # (other work on a shared host) weighs on the total and on the nodes alike.
        for k in range(warmup + runs):
            began = time.perf_counter()
            _run(plain, feed, path)
            if k >= warmup:
                latencies.append((time.perf_counter() - began) * 1e3)
            step()
            _run(profiled, feed, path)
            step()
        written = profiled.end_profiling()
        events = parse_json(read_text(written), written)
    table_runs = kernel_runs(events, f"{path} (onnxruntime's profile)", skip=warmup)
    rows, left_out = node_costs(table_runs, operators)
    # Kernels of nodes the runtime made itself belong to no node: outside the nodes, as dispatch.
    node_time = [sum(k.dur for k in run if k.node not in left_out) * 1e-3 for run in table_runs]
    table = CostTable(source="onnxruntime", runs=len(table_runs),
                      device={"type": provider_type(provider), "host": socket.gethostname(),
                              "provider": provider, "threads": threads, "name": _processor(provider)},
                      model=ModelInfo.of_file(path),
                      total={"median": float(f"{np.median(latencies):.6g}"),
                             "mean": float(f"{np.mean(latencies):.6g}"),
                             "overhead": float(f"{paired_overhead(latencies, node_time):.6g}")},
                      nodes=rows)
    return table, left_out


def paired_overhead(latencies: list[float], node_times: list[float]) -> float:
    """The time a run spends outside its nodes: the median of ``latency - node time`` over
    pairs of runs taken back to back.

    A median of whole runs minus a sum of per-node medians would mix two statistics: when
    another process takes the core for part of the runs, the first moves and the second
    hardly does, and their difference is the load, not the runtime. A pair of runs taken
    back to back shares the load, so the median of their differences is near the runtime's
    own time between kernels unless most runs are disturbed.

    Parameters
    ----------
    latencies : list of float
        Unprofiled runs' latencies.
    node_times : list of float
        The node kernel time of each profiled run, taken after the run of the same index.

    Examples
    --------
    Two runs of four disturbed by another process, one unprofiled and one profiled: the
    difference of the medians says 5.2 ms, the pairs 0.2 ms.

    >>> latencies, node_times = [10.2, 20.2, 20.2, 10.2], [10.0, 10.0, 20.0, 10.0]
    >>> unpaired = float(np.median(latencies) - np.median(node_times))
    >>> round(unpaired, 3), round(paired_overhead(latencies, node_times), 3)
    (5.2, 0.2)
    """
    pairs = min(len(latencies), len(node_times))
    if pairs == 0:
        return 0.0
    if len(latencies) != len(node_times):  # runs lost in the profile: no pairs to trust
        return float(np.median(latencies) - np.median(node_times))
    return float(np.median(np.asarray(latencies[:pairs]) - np.asarray(node_times[:pairs])))


def _session(ort: Any, serialized: bytes, path: Path, threads: int, provider: str,
             optimization: str, profile_prefix: str | None) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPTIMIZATION_LEVELS[optimization])
    options.log_severity_level = 3  # its warnings (unused initializers) are not the user's business
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    try:
        return ort.InferenceSession(serialized, options, providers=[provider])
    except MemoryError:
        raise SchedkitError(f"{path}: too large to load into memory for profiling") from None
    except Exception as exc:  # onnxruntime's Fail, InvalidGraph, NotImplemented, RuntimeException
        raise SchedkitError(f"{path}: onnxruntime cannot load it: {_reason(exc)}") from None


def _run(session: Any, feed: dict, path: Path) -> None:
    try:
        session.run(None, feed)
    except MemoryError:
        raise SchedkitError(f"{path}: out of memory while running it") from None
    except Exception as exc:
        raise SchedkitError(f"{path}: onnxruntime failed to run it: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if "allocat" in text.lower() and "memory" in text.lower():
        return "out of memory (" + text[:200] + ")"
    return text[:300] or type(exc).__name__


def _random_inputs(model: Any) -> dict[str, np.ndarray]:
    """Random data for every model input (not the weights), of its static shape and type."""
    import onnx

    rng = np.random.default_rng(0)
    weights = {t.name for t in model.graph.initializer}
    feed = {}
    for given in model.graph.input:
        if given.name in weights:
            continue
        tensor = given.type.tensor_type
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        dims = tuple(d.dim_value for d in tensor.shape.dim)
        if np.issubdtype(dtype, np.floating):
            feed[given.name] = rng.random(dims).astype(dtype)
        else:  # integers are indices and bools masks more often than not: zeros stay in range
            feed[given.name] = np.zeros(dims, dtype=dtype)
    return feed


def _processor(provider: str) -> str | None:
    """The CPU's model name (Linux), for a CPU provider; ``None`` elsewhere."""
    if provider_type(provider) != "cpu":
        return None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return None
