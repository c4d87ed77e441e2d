"""The devices file (``schedkit-platform/v1``): a roofline per device, and the links.

Importers that compute durations from operation counts (ONNX) read a platform: per
device its peak FLOP rate, its memory bandwidth and a fixed launch overhead, and the links
between devices. Physical units in the file (FLOP/s, bytes/s, seconds, bytes); the problem
written from it uses the platform's ``time_unit`` (milliseconds by default, like the
shipped examples), so link bandwidths become bytes per time unit.

The duration of an operator of ``F`` FLOPs that moves ``B`` bytes on a device is the
roofline ``launch_overhead + max(F / peak_flops, B / memory_bandwidth)``. A problem that already
has durations (a generated RWNN) is moved onto a platform's devices by :meth:`Platform.retarget`.

A platform may also list ``switches``: devices that run no operator and only pass data on (a
network switch between servers). Links name them like devices; the problem written from the
platform keeps each as a device that no task's ``durations`` name, so that data between two
devices linked only to the switch takes the widest path through it (the bottleneck bandwidth,
the latencies added).

Examples
--------
>>> platform = parse_platform({
...     "devices": [{"name": "gpu", "peak_flops": 1e13, "memory_bandwidth": 1e12,
...                  "launch_overhead": 5e-6},
...                 {"name": "cpu", "peak_flops": 1e12, "memory_bandwidth": 1e11}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1.6e10, "latency": 1e-5}]})
>>> round(platform.duration(platform.devices[0], flops=2e9, moved=1e6), 6)   # ms
0.205
>>> platform.problem_links()
[{'src': 'gpu', 'dst': 'cpu', 'bandwidth': 16000000.0, 'latency': 0.01}]
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schedkit.errors import ProblemError
from schedkit.problem.cluster import check_names, name_sets
from schedkit.problem.reading import parse_format, read_data
from schedkit.problem.spec import Name, NonNegative, Positive

__all__ = ["PLATFORM_FORMAT", "TIME_UNITS", "Platform", "RooflineDevice", "Switch", "PlatformLink",
           "parse_platform", "load_platform"]

PLATFORM_FORMAT = "schedkit-platform/v1"
#: Seconds per time unit of the problem written from a platform.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RooflineDevice(_Frozen):
    """A device described by its roofline."""

    name: Name
    """Unique device name."""
    peak_flops: Positive
    """Peak floating-point operations per second (FLOP/s)."""
    memory_bandwidth: Positive
    """Bandwidth of the device's own memory, bytes per second."""
    launch_overhead: NonNegative = 0.0
    """Fixed time added to every operator (kernel launch, dispatch), seconds."""
    memory: NonNegative | None = None
    """Memory capacity in bytes; unlimited when absent."""
    group: str | None = None
    """Identical devices share a group (symmetry breaking); a link's end may name a group (a
    server) to stand for each of its devices."""
    unsupported_ops: list[str] = []
    """Operator types this device cannot run (no duration there)."""
    type: Name | None = None
    """Device type (``cpu``, ``gpu``) that cost tables name (``convert onnx --costs``); by
    default read from the name (:meth:`Platform.device_type`). A type that two devices or more
    state is also their ``type`` in the problem written from the platform, which gives a task
    one duration for the type where all of them agree (:attr:`Platform.problem_types`)."""


class Switch(_Frozen):
    """A device that runs no operator and only passes data on along its links."""

    name: Name
    """Unique among the devices, switches and groups: a link's end."""


class PlatformLink(_Frozen):
    """A link between two devices, or between the devices of groups (as in a problem's
    ``links``: :mod:`schedkit.problem.cluster`)."""

    src: Name
    """A device, a switch, or a device group."""
    dst: Name
    """A device, a switch, or a device group."""
    bandwidth: Positive
    """Bytes per second."""
    latency: NonNegative = 0.0
    """Seconds added to every transfer."""
    bidirectional: bool = True
    """Also carries data from ``dst`` to ``src``."""
    channel: str | None = None
    """Links that share a channel contend for it."""


class Platform(_Frozen):
    """Devices with rooflines and the links between them."""

    format: Literal["schedkit-platform/v1"] = PLATFORM_FORMAT
    name: Name = "platform"
    time_unit: Literal["s", "ms", "us"] = "ms"
    """Unit of every time in the problem written from this platform."""
    devices: list[RooflineDevice] = Field(min_length=1)
    switches: list[Switch] = []
    """Devices that run no operator (network switches): after the devices in the problem."""
    links: list[PlatformLink] = []

    @model_validator(mode="after")
    def _known_names(self) -> Platform:
        names = set()
        for device in [*self.devices, *self.switches]:
            if device.name in names:
                raise ValueError(f"duplicate device name '{device.name}'")
            names.add(device.name)
        # A platform's types name cost tables' devices and may be spelled like a device
        # ("cpu"): only its groups must differ from device names, as link ends.
        _, groups = name_sets(self.devices)
        check_names([d.name for d in self.devices] + [d.name for d in self.switches], {}, groups)
        kind = "device or group" if groups else "device"
        for link in self.links:
            for end in (link.src, link.dst):
                if end not in names and end not in groups:
                    raise ValueError(f"link {link.src}->{link.dst}: unknown {kind} '{end}'")
            if link.src == link.dst and link.src in names:
                raise ValueError(f"link {link.src}->{link.dst}: a link joins two different devices")
        return self

    @cached_property
    def problem_types(self) -> dict[str, str]:
        """Device name -> the ``type`` the problem written from this platform gives it: the
        ``type`` the device states, where two devices or more state it and no device or
        group is spelled like it (a platform's type may be spelled like a device, a
        problem's not). Devices without one state no type in the problem.

        Examples
        --------
        >>> platform = parse_platform({"devices": [
        ...     {"name": n, "type": "gpu", "peak_flops": 1, "memory_bandwidth": 1} for n in ("g0", "g1")]
        ...     + [{"name": "cpu", "type": "cpu", "peak_flops": 1, "memory_bandwidth": 1}]})
        >>> platform.problem_types
        {'g0': 'gpu', 'g1': 'gpu'}
        """
        stated: dict[str, list[str]] = {}
        for d in self.devices:
            if d.type is not None:
                stated.setdefault(d.type, []).append(d.name)
        taken = {d.name for d in [*self.devices, *self.switches]} | \
            {d.group for d in self.devices if d.group is not None}
        return {name: kind for kind, names in stated.items() if len(names) > 1 and kind not in taken
                for name in names}

    def keyed(self, durations: dict[str, float]) -> dict[str, float]:
        """``durations`` by device name, keyed by :attr:`problem_types` where every device of
        a type has the same duration (a file of a thousand identical GPUs says it once).

        Examples
        --------
        >>> platform = parse_platform({"devices": [
        ...     {"name": n, "type": "gpu", "peak_flops": 1, "memory_bandwidth": 1} for n in ("g0", "g1", "g2")]})
        >>> platform.keyed({"g0": 2.0, "g1": 2.0, "g2": 2.0}), platform.keyed({"g0": 2.0, "g1": 3.0})
        ({'gpu': 2.0}, {'g0': 2.0, 'g1': 3.0})
        """
        types = self.problem_types
        if not types:
            return durations
        values: dict[str, set] = {}
        counts: dict[str, int] = {}
        for name, value in durations.items():
            kind = types.get(name)
            if kind is not None:
                values.setdefault(kind, set()).add(value)
                counts[kind] = counts.get(kind, 0) + 1
        size = self._type_sizes
        whole = {kind for kind, seen in values.items() if len(seen) == 1 and counts[kind] == size[kind]}
        out: dict[str, float] = {}
        for name, value in durations.items():
            kind = types.get(name)
            if kind in whole:
                out.setdefault(kind, value)
            else:
                out[name] = value
        return out

    @cached_property
    def _type_sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for kind in self.problem_types.values():
            sizes[kind] = sizes.get(kind, 0) + 1
        return sizes

    @staticmethod
    def device_type(device: RooflineDevice) -> str:
        """The type of ``device``: its ``type``, else its name lower-cased without a server
        prefix (up to the last ``_``) and trailing digits.

        Examples
        --------
        >>> devices = [{"name": n, "peak_flops": 1, "memory_bandwidth": 1}
        ...            for n in ("cpu0", "n1_GPU3", "host")]
        >>> platform = parse_platform({"devices": devices + [
        ...     {"name": "x", "type": "tpu", "peak_flops": 1, "memory_bandwidth": 1}]})
        >>> [platform.device_type(d) for d in platform.devices]
        ['cpu', 'gpu', 'host', 'tpu']
        """
        if device.type is not None:
            return device.type
        base = device.name.rsplit("_", 1)[-1].lower()
        return base.rstrip("0123456789") or base

    @property
    def seconds(self) -> float:
        """Seconds per time unit."""
        return TIME_UNITS[self.time_unit]

    def duration(self, device: RooflineDevice, flops: float, moved: float) -> float:
        """Roofline time of an operator on ``device``, in the platform's time unit.

        Parameters
        ----------
        device : RooflineDevice
            One of :attr:`devices`.
        flops : float
            Floating-point operations of the operator.
        moved : float
            Bytes it reads and writes.
        """
        busy = max(flops / device.peak_flops, moved / device.memory_bandwidth)
        return (device.launch_overhead + busy) / self.seconds

    def problem_devices(self) -> list[dict]:
        """The ``devices`` of a ``schedkit/v1`` problem (names, memory, types, groups), the
        switches last (a name each: no task's ``durations`` name them)."""
        types = self.problem_types
        rows = []
        for d in self.devices:
            row: dict[str, Any] = {"name": d.name}
            if d.memory is not None:
                row["memory"] = d.memory
            if d.name in types:
                row["type"] = types[d.name]
            if d.group is not None:
                row["group"] = d.group
            rows.append(row)
        return rows + [{"name": s.name} for s in self.switches]

    def problem_links(self) -> list[dict]:
        """The ``links`` of a ``schedkit/v1`` problem, in bytes per time unit and time units."""
        rows = []
        for link in self.links:
            row: dict[str, Any] = {"src": link.src, "dst": link.dst,
                                   "bandwidth": link.bandwidth * self.seconds,
                                   "latency": link.latency / self.seconds}
            if not link.bidirectional:
                row["bidirectional"] = False
            if link.channel is not None:
                row["channel"] = link.channel
            rows.append(row)
        return rows

    def retarget(self, data: dict) -> dict:
        """``schedkit/v1`` problem ``data`` moved onto this platform's devices and links.

        A task keeps its time on its fastest device (the least of its ``durations``, or its
        ``work``) as its time on the platform's fastest device (largest ``peak_flops``), and
        runs ``fastest / peak_flops`` times as long on every other device (devices whose
        ``unsupported_ops`` hold its ``op`` left out): devices with one roofline get one
        duration. Memory, sizes, edges and collocation are kept; the devices, groups and links
        are the platform's. The problem's times must be in the platform's ``time_unit`` and its
        sizes in bytes. Per-batch duration maps, pins and per-edge ``transfer_times`` name the
        old devices: a task or edge that gives one is a one-line
        :class:`~schedkit.errors.ProblemError`.

        Examples
        --------
        >>> platform = parse_platform({"devices": [
        ...     {"name": "fast", "peak_flops": 2e13, "memory_bandwidth": 1e12},
        ...     {"name": "slow", "peak_flops": 1e13, "memory_bandwidth": 1e12}]})
        >>> data = {"name": "p", "devices": [{"name": "d0"}, {"name": "d1"}],
        ...         "tasks": [{"name": "t", "durations": {"d0": 3.0, "d1": 1.5}}]}
        >>> platform.retarget(data)["tasks"]
        [{'name': 't', 'durations': {'fast': 1.5, 'slow': 3.0}}]
        """
        fastest = max(d.peak_flops for d in self.devices)
        tasks = []
        for task in data.get("tasks", []):
            name = task.get("name")
            if task.get("pin"):
                raise ProblemError(f"task '{name}': its pin names devices of the problem, not of "
                                   f"platform '{self.name}'")
            times = task.get("durations")
            if times is not None and any(isinstance(t, dict) for t in times.values()):
                raise ProblemError(f"task '{name}': per-batch durations cannot be moved onto platform "
                                   f"'{self.name}' (give plain durations)")
            base = task["work"] if times is None else min(times.values())
            row = {k: v for k, v in task.items() if k not in ("durations", "work")}
            # One product per device: devices with one roofline get one duration, bit for bit.
            row["durations"] = self.keyed({d.name: float(f"{base * (fastest / d.peak_flops):.6g}")
                                           for d in self.devices if task.get("op") not in d.unsupported_ops})
            tasks.append(row)
        for edge in data.get("edges", []):
            if edge.get("transfer_times"):
                raise ProblemError(f"edge {edge.get('src')}->{edge.get('dst')}: its transfer_times name "
                                   f"devices of the problem, not of platform '{self.name}'")
        out = {k: v for k, v in data.items() if k not in ("devices", "links", "tasks")}
        out.update(devices=self.problem_devices(), links=self.problem_links(), tasks=tasks)
        return out


def parse_platform(data: Any, source: str = "platform") -> Platform:
    """Validate Python data as a :class:`Platform` (one-line :class:`ProblemError` otherwise).

    Examples
    --------
    >>> parse_platform({"devices": [{"name": "gpu", "memory_bandwidth": 1e12}]}, "p.yaml")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: p.yaml: device 'gpu' peak_flops: Field required
    """
    return parse_format(data, Platform, PLATFORM_FORMAT, source, f"'devices' (a {PLATFORM_FORMAT} file)")


def load_platform(path: str | Path) -> Platform:
    """Read a devices file (YAML or JSON) as a :class:`Platform`.

    Examples
    --------
    >>> load_platform("examples/platform_cpu_2gpu.yaml").time_unit
    'ms'
    """
    return parse_platform(read_data(path), source=str(path))
