"""A task's durations on the devices it may use: the loop that meets tasks x devices pairs.

:class:`~schedkit.problem.Problem` tables each task's duration on each device its
memory fits (``TaskSpec.duration_on``). On a cluster of 1,024 devices that is a
thousand calls per task; :meth:`Room.durations` gives the same values by C-level maps for
the two common tasks: one that gives ``work`` (``work / speed``) and one whose
durations name device types only, by plain numbers (each device takes its type's
entry). Any other task goes device by device.

Examples
--------
>>> from schedkit.problem.spec import DeviceSpec, TaskSpec
>>> devices = [DeviceSpec(name="g0", type="a100"), DeviceSpec(name="g1", type="h100", speed=2.0)]
>>> room = Room(devices, [0, 1])
>>> list(room.durations(TaskSpec(name="t", durations={"a100": 2.0, "h100": 1.0}), {"g0": 0, "g1": 1}))
[2.0, 1.0]
>>> list(room.durations(TaskSpec(name="w", work=3.0), {"g0": 0, "g1": 1}))
[3.0, 1.5]
"""

from __future__ import annotations

from itertools import repeat
from operator import truediv


class Room:
    """Devices a task's memory fits (by index), with their speeds and types in that order."""

    __slots__ = ("indices", "devices", "speeds", "types")

    def __init__(self, all_devices, indices):
        self.indices = tuple(indices)
        self.devices = [all_devices[k] for k in self.indices]
        self.speeds = [d.speed for d in self.devices]
        self.types = [d.type for d in self.devices]

    def durations(self, task, device_index: dict):
        """``map(task.duration_on, self.devices)``, the same values (see the module)."""
        if task.durations is None:
            return map(truediv, repeat(task.work), self.speeds)
        table = task.durations
        # No entry of a device's own name, no batch map: each device takes its type's entry.
        if not any(key in device_index or type(value) is dict for key, value in table.items()):
            return map(table.get, self.types)
        return map(task.duration_on, self.devices)


def per_input(task, devices, indices, table) -> dict[int, float]:
    """Per-input times, for the ranks and bounds of batching methods, on the devices where
    every batch of ``task`` holds several inputs (its duration maps have no size 1)."""
    out = {}
    for k, device in zip(indices, devices):
        value = task.entry(device)
        if table[k] is None and isinstance(value, dict):
            sizes = [b for b in value if not device.batch_sizes or b in device.batch_sizes]
            out[k] = min((value[b] / b for b in sizes), default=None)
    return out
