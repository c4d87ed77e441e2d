"""Measured times in a converted model: which platform devices take a cost table's times.

``schedkit convert onnx MODEL --platform FILE --costs TABLE[:DEVICE]`` gives each operator its
measured time on the devices a cost table (:mod:`schedkit.costs.table`) names, and its
roofline time elsewhere. The importer sees a table as plain data, a :class:`MeasuredTimes`
(node name -> seconds, and the device it was measured on), so that importers never depend on
the cost-table package. A table goes to the platform devices named by ``DEVICE`` (a device
name, or a device type: :meth:`~schedkit.importers.platform.Platform.device_type`), by default
to the devices of the table's own device type. A measured time includes the node's share of
the time a run spends outside the nodes (:attr:`MeasuredTimes.overhead`), which the problem
records per device as ``measured_overhead``.

Examples
--------
>>> from schedkit.importers.platform import parse_platform
>>> platform = parse_platform({"devices": [
...     {"name": "cpu0", "peak_flops": 1e11, "memory_bandwidth": 1e10},
...     {"name": "cpu1", "peak_flops": 1e11, "memory_bandwidth": 1e10},
...     {"name": "gpu0", "peak_flops": 1e13, "memory_bandwidth": 1e12}]})
>>> table = MeasuredTimes({"conv": 0.002}, device_type="cpu", source="t.json")
>>> sorted(assign_devices(platform, [table]))
['cpu0', 'cpu1']
>>> sorted(assign_devices(platform, [MeasuredTimes({}, "cpu", target="gpu0")]))
['gpu0']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from schedkit.errors import ProblemError, quoted
from schedkit.importers.platform import Platform

__all__ = ["MeasuredTimes", "assign_devices", "check_nodes"]


@dataclass(frozen=True)
class MeasuredTimes:
    """Measured time per node of a model on one device (a cost table as plain data).

    Attributes
    ----------
    times : mapping
        Node (task) name -> time in seconds.
    device_type : str
        Type of the device measured (``cpu``).
    device_name : str, optional
        That device's own name, when known.
    target : str, optional
        The platform device or device type that takes these times (``--costs TABLE:DEVICE``);
        by default the devices of type ``device_type``.
    source : str
        How messages name the table (its file).
    model : str, optional
        The model the table was measured on, for messages.
    ops : mapping, optional
        Node name -> operator type, to tell a table of another model whose node names
        happen to match (``n0``, ``n1``...).
    overhead : float
        Seconds already in the time of each node that ran: its share of the run's time
        outside the nodes (:meth:`schedkit.costs.CostTable.overhead`), so that on one device
        the times sum to the measured latency. The problem records it per device
        (``measured_overhead``).
    """

    times: Mapping[str, float] = field(default_factory=dict)
    device_type: str = "cpu"
    device_name: str | None = None
    target: str | None = None
    source: str = "cost table"
    model: str | None = None
    ops: Mapping[str, str] = field(default_factory=dict)
    overhead: float = 0.0


def assign_devices(platform: Platform, measured: Sequence[MeasuredTimes]) -> dict[str, MeasuredTimes]:
    """Platform device name -> the table whose times it takes.

    Raises
    ------
    ProblemError
        A target that is no device nor device type of the platform, a table whose device type
        the platform lacks, or a device that two tables would both give times (one line).

    Examples
    --------
    >>> from schedkit.importers.platform import parse_platform
    >>> platform = parse_platform({"name": "p", "devices": [
    ...     {"name": "cpu", "peak_flops": 1e11, "memory_bandwidth": 1e10}]})
    >>> assign_devices(platform, [MeasuredTimes({}, "gpu", source="g.json")])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: g.json: platform 'p' has no device of type 'gpu' (the table's device): give --costs g.json:DEVICE
    """
    chosen: dict[str, MeasuredTimes] = {}
    types = sorted({platform.device_type(d) for d in platform.devices})
    for table in measured:
        if table.target is not None:
            devices = [d for d in platform.devices if d.name == table.target] or \
                [d for d in platform.devices if platform.device_type(d) == table.target]
            if not devices:
                names = ", ".join(d.name for d in platform.devices)
                raise ProblemError(f"{table.source}:{table.target}: no device or device type "
                                   f"{quoted(table.target)} on platform '{platform.name}' (devices: "
                                   f"{names}; types: {', '.join(types)})")
        else:
            devices = [d for d in platform.devices if platform.device_type(d) == table.device_type]
            if not devices:
                raise ProblemError(f"{table.source}: platform '{platform.name}' has no device of type "
                                   f"{quoted(table.device_type)} (the table's device): give --costs "
                                   f"{table.source}:DEVICE")
        for device in devices:
            if device.name in chosen:
                raise ProblemError(f"device '{device.name}' would take measured times from both "
                                   f"{chosen[device.name].source} and {table.source}")
            chosen[device.name] = table
    return chosen


def check_nodes(measured: Sequence[MeasuredTimes], ops: Mapping[str, str], model: str) -> None:
    """Refuse a table whose nodes the model lacks, or has with another operator type: how many,
    and the first few. A runtime's fused type (``FusedConv``) agrees with its base (``Conv``).

    Parameters
    ----------
    measured : list of MeasuredTimes
        The tables.
    ops : mapping
        The model's operators: task name -> operator type.
    model : str
        The model's name, for messages.

    Examples
    --------
    >>> check_nodes([MeasuredTimes({"conv": 1e-3, "fc9": 1e-3}, source="t.json", model="vgg")],
    ...             {"conv": "Conv", "relu": "Relu"}, "resnet")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: t.json: 1 of its 2 nodes do not match model 'resnet': 'fc9' (not in the model) (the table was measured on model 'vgg')
    >>> check_nodes([MeasuredTimes({"conv": 1e-3}, ops={"conv": "Relu"}, source="t.json")],
    ...             {"conv": "Conv"}, "resnet")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: t.json: 1 of its 1 nodes do not match model 'resnet': 'conv' (a Relu in the table, a Conv in the model)
    """
    for table in measured:
        wrong = []
        for name in table.times:
            if name not in ops:
                wrong.append(f"{quoted(name)} (not in the model)")
                continue
            kind = table.ops.get(name)
            if kind and kind != ops[name] and not kind.endswith(ops[name]):
                wrong.append(f"{quoted(name)} (a {kind} in the table, a {ops[name]} in the model)")
        if not wrong:
            continue
        more = f" (+{len(wrong) - 3} more)" if len(wrong) > 3 else ""
        other = f" (the table was measured on model {quoted(table.model)})" \
            if table.model and table.model != model else ""
        raise ProblemError(f"{table.source}: {len(wrong)} of its {len(table.times)} nodes do not match "
                           f"model {quoted(model)}: {', '.join(wrong[:3])}{more}{other}")
