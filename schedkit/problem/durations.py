"""A task's durations on the devices it may use: the loop that meets tasks x devices pairs.

:class:`~schedkit.problem.Problem` tables each task's duration on each device its
memory fits (``TaskSpec.duration_on``). On a cluster of 1,024 devices that is a
thousand calls per task; :meth:`Room.durations` gives the same values by C-level maps for
the two common tasks: one that gives ``work`` (``work / speed``) and one whose
durations name device types only, by plain numbers (each device takes its type's
entry). Any other task goes device by device.

A task keyed by device types (plain numbers, no pin, no workload) is not tabled at all:
its :class:`TypeRow` holds a number per type, its own devices' entries, and the devices it
may use shared with every task that names the same types (:class:`TypeTables`). Nor is a
task given by ``work`` on a large problem (:data:`WORK_ROWS_FROM`): its :class:`WorkRow`
holds its work and its :class:`Room`, and divides on each read.

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

from collections.abc import Mapping
from itertools import repeat
from operator import truediv


#: Tasks x devices from which a task given by ``work`` (no pin, no workload) gets a
#: :class:`WorkRow`, not a dict: 60,000 tasks on 50 devices make 200 MB of dicts and
#: floats; below, a dict is cheap and its look-ups (the MILP builders' loops) faster.
WORK_ROWS_FROM = 1_000_000


class Room:
    """Devices a task's memory fits (by index), with their speeds and types in that order,
    and each one's speed by index (``speed_of``)."""

    __slots__ = ("indices", "devices", "speeds", "types", "speed_of")

    def __init__(self, all_devices, indices):
        self.indices = tuple(indices)
        self.devices = [all_devices[k] for k in self.indices]
        self.speeds = [d.speed for d in self.devices]
        self.types = [d.type for d in self.devices]
        self.speed_of = dict(zip(self.indices, self.speeds))

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


_MISSING = object()


class TypeRow(Mapping):
    """``durations[i]`` of a task keyed by device types: a read-only mapping device ->
    duration that resolves ``d`` to its own entry, else its type's, without a table of
    every device.

    A cluster of 1,024 devices of 3 types holds 3 numbers per task, not 1,024 entries;
    every reading of ``problem.durations[i][d]``, ``in``, ``get``, ``items()`` works as on
    the dict it stands for (and compares equal to it). The devices it holds, their types
    and membership are its :class:`Kinds`, shared by the tasks that name the same types
    and fit the same devices (a task with entries of its own devices, ``own``, has its own).

    Examples
    --------
    >>> kinds = Kinds((0, 1, 1), (0, 2), 3)             # devices 0 and 2 (types 0 and 1) fit
    >>> row = TypeRow((2.0, 5.0), kinds)
    >>> row[2], 1 in row, dict(row), row.least()
    (5.0, False, {0: 2.0, 2: 5.0}, 2.0)
    """

    __slots__ = ("by_type", "kinds", "own")

    def __init__(self, by_type: tuple, kinds: Kinds, own: dict | None = None):
        self.by_type = by_type
        self.kinds = kinds
        self.own = own

    def __getitem__(self, d):
        value = self.get(d, _MISSING)
        if value is _MISSING:
            raise KeyError(d)
        return value

    def __contains__(self, d) -> bool:
        try:
            return d >= 0 and self.kinds.fits[d]
        except (IndexError, TypeError):
            return False

    def get(self, d, default=None):
        # One call, not __contains__ then __getitem__: the arrays read 3 of these per task.
        if self.own is not None and d in self.own:
            return self.own[d]
        kinds = self.kinds
        try:
            if d >= 0 and kinds.fits[d]:
                return self.by_type[kinds.device_type[d]]
        except (IndexError, TypeError):
            pass  # (a key that is no device index: not in the row, as in a dict)
        return default

    def __iter__(self):
        return iter(self.kinds.devices)

    def __len__(self) -> int:
        return len(self.kinds.devices)

    def least(self) -> float:
        """The shortest duration over the devices it holds (``min(self.values())``, exactly)."""
        values = [self.by_type[t] for t in self.kinds.present]
        return min(values + list(self.own.values())) if self.own else min(values)

    def __repr__(self) -> str:
        return f"TypeRow({dict(self)!r})"


class WorkRow(Mapping):
    """``durations[i]`` of a task given by ``work`` on a large problem: a read-only mapping
    device -> ``work / speed`` over the devices of its :class:`Room`, divided on each read
    (the very float of the dict it stands for, which it compares equal to).

    ``values()`` and ``items()`` answer lists (by C-level maps: the arrays read every task's).

    Examples
    --------
    >>> from schedkit.problem.spec import DeviceSpec
    >>> row = WorkRow(3.0, Room([DeviceSpec(name="a"), DeviceSpec(name="b", speed=2.0)], [1]))
    >>> row[1], 0 in row, row.get(0), row == {1: 1.5}, row.least()
    (1.5, False, None, True, 1.5)
    """

    __slots__ = ("work", "room")

    def __init__(self, work: float, room: Room):
        self.work = work
        self.room = room

    def __getitem__(self, d):
        return self.work / self.room.speed_of[d]

    def get(self, d, default=None):
        speed = self.room.speed_of.get(d)
        return default if speed is None else self.work / speed

    def __contains__(self, d) -> bool:
        return d in self.room.speed_of

    def __iter__(self):
        return iter(self.room.indices)

    def __len__(self) -> int:
        return len(self.room.indices)

    def values(self) -> list[float]:
        return list(map(truediv, repeat(self.work), self.room.speeds))

    def items(self) -> list[tuple[int, float]]:
        return list(zip(self.room.indices, self.values()))

    def least(self) -> float:
        """The shortest duration (``min(self.values())``)."""
        return min(self.values())

    def __repr__(self) -> str:
        return f"WorkRow({dict(self.items())!r})"


class Kinds:
    """The devices a :class:`TypeRow` holds (increasing), each device's type number, which
    devices it holds (``fits[d]``) and the types of those that take their type's entry
    (``present``)."""

    __slots__ = ("device_type", "devices", "fits", "present")

    def __init__(self, device_type: tuple, devices: tuple, m: int, own=()):
        self.device_type = device_type
        self.devices = devices
        fits = [False] * m
        for d in devices:
            fits[d] = True
        self.fits = fits
        self.present = tuple(sorted({device_type[d] for d in devices if d not in own}))


class TypeTables:
    """Makes the :class:`TypeRow` of each task that keys its durations by type, and the
    :class:`WorkRow` of each task given by ``work`` (no pin) when ``tasks`` x devices
    reaches :data:`WORK_ROWS_FROM`.

    A task qualifies when a key of its ``durations`` is a device type, every value is a
    plain number (no per-batch map) and it gives no ``pin``; any other task keeps its dict
    (``row`` answers ``None``). Rows of tasks that name the same types and fit the same
    devices (a :class:`Room`) share their :class:`Kinds`.

    Examples
    --------
    >>> from schedkit.problem.spec import DeviceSpec, TaskSpec
    >>> devices = [DeviceSpec(name=f"g{k}", type="ab"[k % 2]) for k in range(4)]
    >>> tables = TypeTables(devices, {f"g{k}": k for k in range(4)})
    >>> row = tables.row(TaskSpec(name="t", durations={"b": 3.0, "g0": 1.0}), Room(devices, range(4)))
    >>> list(row), row[3], row[0]
    ([0, 1, 3], 3.0, 1.0)
    """

    def __init__(self, devices, device_index: dict, tasks: int = 0):
        # Tasks given by work get a WorkRow on a large problem (tasks x devices pairs).
        self.by_work = tasks * len(devices) >= WORK_ROWS_FROM
        names: dict[str, int] = {}
        self.type_number = names
        self.device_index = device_index
        self.device_type = tuple(names.setdefault(d.type, len(names)) if d.type is not None else -1
                                 for d in devices)
        self.m = len(devices)
        self._kinds: dict[tuple, Kinds] = {}
        self._rooms: list[Room] = []  # alive while their ids key the kinds

    def row(self, task, room: Room) -> TypeRow | None:
        """The task's row, or ``None`` where it keeps a dict (see the class)."""
        table = task.durations
        if table is None and self.by_work and task.pin is None:
            return WorkRow(task.work, room)
        if table is None or task.pin is not None or not self.type_number:
            return None
        number, index = self.type_number, self.device_index
        values = [None] * len(number)
        own = None
        for key, value in table.items():
            if value.__class__ is not float:
                return None  # a per-batch map
            t = number.get(key)
            if t is not None:
                values[t] = value
            else:
                own = own or {}
                own[index[key]] = value
        named = tuple(t for t, value in enumerate(values) if value is not None)
        if not named:
            return None
        key = (id(room), named)
        kinds = self._kinds.get(key) if own is None else None
        if kinds is None:
            device_type = self.device_type
            wanted = set(named)
            devices = [d for d in room.indices if device_type[d] in wanted]
            if own is not None:
                inside = set(room.indices)
                own = {d: value for d, value in own.items() if d in inside}
                devices = sorted(set(devices).union(own))
                return TypeRow(tuple(values), Kinds(device_type, tuple(devices), self.m, own), own or None)
            kinds = self._kinds[key] = Kinds(device_type, tuple(devices), self.m)
            self._rooms.append(room)
        return TypeRow(tuple(values), kinds)
