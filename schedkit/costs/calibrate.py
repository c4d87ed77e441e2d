"""``schedkit calibrate``: fit a platform device's roofline to a measured cost table.

The ONNX importer gives an operator of ``F`` FLOPs moving ``B`` bytes the duration
``launch_overhead + max(F / peak_flops, B / memory_bandwidth)`` on a device
(:meth:`~schedkit.importers.platform.Platform.duration`). Calibration finds the three numbers
that make this roofline match a cost table (:mod:`~schedkit.costs.table`):
``scipy.optimize.least_squares`` over the logarithms of the three parameters, with one
residual per measured node, ``log(predicted / measured)`` under the robust ``soft_l1`` loss,
and one for the whole model, ``log(sum of predicted / measured total)``, plain and weighted
as much as all nodes together. The nodes shape the roofline; the whole model keeps its sum
honest where per-node errors do not cancel: a kernel far slower than any roofline
(onnxruntime's ``LRN`` on CPU takes half of Inception v1's time), or nodes that the runtime
fused into a neighbour, which have no time of their own but a roofline time in the problem.

What is fitted is what ``convert onnx --costs`` would write: a node that ran measures its
median plus its share of the time a run spends outside the nodes
(:meth:`~schedkit.costs.CostTable.overhead`: dispatch, allocation, the call), and the whole
model the sum of those, :meth:`~schedkit.costs.CostTable.latency` (the table's nodes plus its
measured overhead; the nodes alone when the table has no ``total``). The roofline's
``launch_overhead``, a time added to every operator, is where that share belongs. The whole
model is not fitted to the median of unprofiled runs itself: on a shared machine that median
moves with other processes' load while the per-node medians hardly do (a table of 49 ms of
nodes and a 91 ms median of whole runs on a loaded 2-core machine, whose quiet runs take
48 ms), and one roofline cannot be both. Nothing is tuned per model: the same fit for every
table.

Examples
--------
>>> import numpy as np
>>> true = Roofline(peak_flops=5e10, memory_bandwidth=1e10, launch_overhead=2e-6)
>>> rng = np.random.default_rng(1)
>>> flops, moved = rng.uniform(1e4, 1e9, 60), rng.uniform(1e4, 1e8, 60)
>>> nodes = [{"name": f"n{k}", "op_type": "Conv", "median": t * 1e3, "mean": t * 1e3,
...           "p95": t * 1e3, "flops": f, "bytes": b}
...          for k, (f, b, t) in enumerate(zip(flops, moved, true.times(flops, moved)))]
>>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"},
...                   model={"name": "m"}, nodes=nodes)
>>> fit = fit_roofline(table, Roofline(1e12, 1e11, 1e-5))
>>> [round(v / t, 3) for v, t in zip(fit.after.values(), true.values())]
[1.0, 1.0, 1.0]
>>> round(fit.errors_before[0].median, 2) > 1, fit.errors_after[0].median < 1e-6
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from schedkit.costs.table import CostTable
from schedkit.errors import ProblemError, SchedkitError, quoted

__all__ = ["Roofline", "Errors", "Calibration", "fit_roofline", "roofline_errors", "calibrate_platform"]

#: Bounds of the fit (FLOP/s, bytes/s, seconds): far outside any real device, inside floats.
_LOW = np.log([1e5, 1e5, 1e-10])
_HIGH = np.log([1e18, 1e16, 1.0])


def _scipy_optimize() -> Any:
    try:
        from scipy import optimize
    except ImportError:
        raise SchedkitError("calibration needs scipy, the 'calibrate' extra: "
                            "pip install 'schedkit[calibrate]'") from None
    return optimize


@dataclass(frozen=True)
class Roofline:
    """A device's roofline: peak FLOP/s, memory bandwidth (bytes/s), launch overhead (s)."""

    peak_flops: float
    memory_bandwidth: float
    launch_overhead: float

    def times(self, flops: Any, moved: Any) -> np.ndarray:
        """Seconds of operators of ``flops`` FLOPs moving ``moved`` bytes (as the importer)."""
        return self.launch_overhead + np.maximum(np.asarray(flops, float) / self.peak_flops,
                                                 np.asarray(moved, float) / self.memory_bandwidth)

    def values(self) -> tuple[float, float, float]:
        """``(peak_flops, memory_bandwidth, launch_overhead)``."""
        return self.peak_flops, self.memory_bandwidth, self.launch_overhead


@dataclass(frozen=True)
class Errors:
    """How far a roofline is from a table.

    Attributes
    ----------
    median, p90 : float
        Median and 90th percentile over the measured nodes of ``|log(predicted / measured)|``.
    predicted, measured : float
        The whole model: the sum of the predicted times of every node, and of the measured
        ones (the nodes' medians, table units).
    total : float or None
        The table's measured end-to-end latency, when it has one.
    overhead : float
        The time a run spends outside the nodes (table units), shared among the nodes that
        ran: what is fitted per node is a median plus its share, and for the whole model
        ``measured + overhead``.
    """

    median: float
    p90: float
    predicted: float
    measured: float
    total: float | None
    overhead: float = 0.0


@dataclass(frozen=True)
class Calibration:
    """A fit: the roofline before and after, their errors per table, and the nodes it used."""

    before: Roofline
    after: Roofline
    errors_before: tuple[Errors, ...]
    errors_after: tuple[Errors, ...]
    nodes: int


@dataclass(frozen=True)
class _Data:
    flops: np.ndarray          # every node with a cost (FLOPs 0 where only bytes are known)
    moved: np.ndarray
    measured: np.ndarray       # seconds: median, plus the share outside the nodes if it ran
    fitted: np.ndarray         # mask: nodes that ran (calls > 0, time > 0)
    uncosted: float            # seconds of nodes without FLOPs and bytes (in both sums)
    total: float               # seconds: the table's latency (nodes and time outside them)


def _data(table: CostTable, source: str) -> _Data:
    costed = [n for n in table.nodes if n.flops is not None or n.bytes is not None]
    fitted = np.array([n.calls > 0 and n.median > 0 for n in costed], bool)
    if not fitted.any():
        raise ProblemError(f"{source}: no measured node with FLOPs or bytes to fit (profile the model "
                           f"with 'schedkit profile', or import the trace with its model)")
    times = table.measured().times  # as convert onnx --costs writes them
    uncosted = sum(times[n.name] for n in table.nodes if n.flops is None and n.bytes is None)
    return _Data(np.array([n.flops or 0.0 for n in costed]), np.array([n.bytes or 0.0 for n in costed]),
                 np.array([times[n.name] for n in costed]), fitted, uncosted, table.latency())


def roofline_errors(table: CostTable, roofline: Roofline, source: str = "cost table") -> Errors:
    """The errors of ``roofline`` on ``table`` (see :class:`Errors`).

    Examples
    --------
    >>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"}, model={"name": "m"},
    ...                   nodes=[{"name": "a", "op_type": "Relu", "median": 2.0, "mean": 2.0,
    ...                           "p95": 2.0, "bytes": 1e6}])
    >>> e = roofline_errors(table, Roofline(1e12, 1e9, 0.0))
    >>> round(e.median, 4), e.predicted, e.measured
    (0.6931, 1.0, 2.0)
    """
    data = _data(table, source)
    return _errors(data, roofline, table)


def _errors(data: _Data, roofline: Roofline, table: CostTable) -> Errors:
    predicted = roofline.times(data.flops, data.moved)
    ratio = np.abs(np.log(predicted[data.fitted] / data.measured[data.fitted]))
    to_unit = table.seconds(1.0)
    return Errors(float(np.median(ratio)), float(np.percentile(ratio, 90)),
                  (float(predicted.sum()) + data.uncosted) / to_unit,
                  sum(n.median for n in table.nodes),
                  table.total.median if table.total is not None else None,
                  table.overhead() / to_unit)


def fit_roofline(tables: CostTable | Sequence[CostTable], start: Roofline,
                 sources: Sequence[str] | None = None) -> Calibration:
    """Fit one roofline to one or several tables, from ``start`` and from a guess read off them.

    Several tables (models measured on the same device) are fitted together: every measured
    node is a residual, and every table's whole model one, weighted as much as that table's
    nodes.

    Parameters
    ----------
    tables : CostTable or list of CostTable
        Measured times, with FLOPs or bytes per node.
    start : Roofline
        The device's current roofline (one of the two starting points; the errors before).
    sources : list of str, optional
        How messages name the tables.

    Returns
    -------
    Calibration
        With the errors per table, in the order given.
    """
    optimize = _scipy_optimize()
    tables = [tables] if isinstance(tables, CostTable) else list(tables)
    sources = list(sources) if sources is not None else ["cost table"] * len(tables)
    parts = [_data(table, source) for table, source in zip(tables, sources)]
    log_measured = [np.log(d.measured[d.fitted]) for d in parts]
    # A whole model weighs as much as its nodes together (its residual is squared).
    weights = [np.sqrt(d.fitted.sum()) for d in parts]

    def residuals(theta: np.ndarray) -> np.ndarray:
        peak, bandwidth, overhead = np.exp(theta)
        out = []
        for d, logs, weight in zip(parts, log_measured, weights):
            predicted = overhead + np.maximum(d.flops / peak, d.moved / bandwidth)
            out.append(_soft_l1(np.log(predicted[d.fitted]) - logs))
            out.append([weight * np.log((predicted.sum() + d.uncosted) / d.total)])
        return np.concatenate(out)

    best = None
    for guess in (start, _guess(parts)):
        theta = np.clip(np.log(np.maximum(guess.values(), 1e-300)), _LOW + 1e-9, _HIGH - 1e-9)
        found = optimize.least_squares(residuals, theta, bounds=(_LOW, _HIGH), x_scale=1.0,
                                       diff_step=1e-6)
        if best is None or found.cost < best.cost:
            best = found
    after = Roofline(*(float(f"{v:.6g}") for v in np.exp(best.x)))
    return Calibration(start, after, tuple(_errors(d, start, t) for d, t in zip(parts, tables)),
                       tuple(_errors(d, after, t) for d, t in zip(parts, tables)),
                       int(sum(d.fitted.sum() for d in parts)))


#: Scale of the robust loss: a node off by more than about 10 % counts less and less.
_F_SCALE = 0.1


def _soft_l1(r: np.ndarray) -> np.ndarray:
    """Residuals whose squares are scipy's ``soft_l1`` loss of ``r``.

    The robust loss is the nodes' alone (one slow kernel must not bend the roofline); the
    whole-model residual stays plain least squares, which ``least_squares(loss=...)`` cannot
    express, as it applies one loss to every residual.
    """
    z = (r / _F_SCALE) ** 2
    return np.sign(r) * _F_SCALE * np.sqrt(2.0 * (np.sqrt(1.0 + z) - 1.0))


def _guess(parts: list[_Data]) -> Roofline:
    """A start read off the tables: the best rates their nodes reach, half the shortest time."""
    seconds = np.concatenate([d.measured[d.fitted] for d in parts])
    flops = np.concatenate([d.flops[d.fitted] for d in parts])
    moved = np.concatenate([d.moved[d.fitted] for d in parts])
    rate = flops / seconds
    speed = moved / seconds
    peak = float(np.percentile(rate[rate > 0], 90)) if (rate > 0).any() else 1e12
    bandwidth = float(np.percentile(speed[speed > 0], 90)) if (speed > 0).any() else 1e11
    return Roofline(peak, bandwidth, max(float(seconds.min()) / 2, 1e-9))


def calibrate_platform(data: dict, tables: CostTable | Sequence[CostTable], device: str,
                       sources: Sequence[str] | None = None,
                       platform_source: str = "platform") -> tuple[dict, Calibration]:
    """Platform file data with ``device``'s roofline fitted to ``tables``; everything else as given.

    Parameters
    ----------
    data : dict
        A ``schedkit-platform/v1`` file's data (as read).
    tables : CostTable or list of CostTable
        The measured tables (:func:`fit_roofline`).
    device : str
        The device to calibrate.
    sources : list of str, optional
        How messages name the tables.
    platform_source : str
        How messages name the platform file.

    Returns
    -------
    (dict, Calibration)
        The new file data (only that device's ``peak_flops``, ``memory_bandwidth`` and
        ``launch_overhead`` changed) and the fit.

    Examples
    --------
    >>> data = {"devices": [{"name": "cpu", "peak_flops": 1e12, "memory_bandwidth": 1e11}]}
    >>> table = CostTable(source="onnxruntime", runs=1, device={"type": "cpu"}, model={"name": "m"},
    ...                   nodes=[{"name": "a", "op_type": "Relu", "median": 1, "mean": 1, "p95": 1,
    ...                           "bytes": 1e6}])
    >>> calibrate_platform(data, table, "gpu", platform_source="p.yaml")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: --device 'gpu': no such device on p.yaml (devices: cpu)
    """
    from schedkit.importers.platform import parse_platform

    platform = parse_platform(data, platform_source)
    found = next((d for d in platform.devices if d.name == device), None)
    if found is None:
        names = ", ".join(d.name for d in platform.devices)
        raise ProblemError(f"--device {quoted(device)}: no such device on {platform_source} (devices: {names})")
    fit = fit_roofline(tables, Roofline(found.peak_flops, found.memory_bandwidth, found.launch_overhead),
                       sources)
    new = dict(data)
    new["devices"] = [dict(row, peak_flops=fit.after.peak_flops, memory_bandwidth=fit.after.memory_bandwidth,
                           launch_overhead=fit.after.launch_overhead)
                      if isinstance(row, dict) and row.get("name") == device else row
                      for row in data["devices"]]
    parse_platform(new, platform_source)  # what is written must read back
    return new, fit
