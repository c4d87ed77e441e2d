"""Whether the devices of each ``group`` are interchangeable, as the ``symmetry`` block needs.

Two devices ``a`` and ``b`` of one group are interchangeable when swapping their names maps
the problem onto itself, so that swapping them in any valid schedule gives a valid schedule
of the same makespan. Compared, in this order (the first difference is reported):

- the device data: ``speed``, ``memory`` and ``batch_sizes``;
- every task: it may run on both or on neither (durations, pins and memory), with equal
  durations, and equal per-batch duration maps where the file gives them;
- the network, through the fixed route of every ordered device pair (DESIGN, "Transfers"):
  for every other device ``c``, ``a -> c`` and ``b -> c`` are both linked or both not, with
  equal bandwidth and latency; the same for ``c -> a`` and ``c -> b``, and for ``a -> b``
  against ``b -> a``; every edge's own ``transfer_times`` give the mirrored pair the same
  time;
- the channels: the swap must map channels onto channels. The route of each ordered pair
  ``(x, y)`` is compared channel by channel with the route of the swapped pair, which must
  define a one-to-one renaming of channels; a route between two other devices keeps its
  channels, so a channel that the renaming moves may not appear on it. Default channels
  (``a->c`` against ``b->c``) always pass; a shared channel passes when both members use it
  alike (a PCIe switch both GPUs hang off), and fails when only one of them does.

Swaps of the first member with each other member generate every permutation of the group,
so those are the pairs checked. The answer is computed once per :class:`~schedkit.problem.Problem`.

Examples
--------
>>> from schedkit import Problem
>>> data = {"name": "pair", "devices": [{"name": "g0", "group": "gpu"}, {"name": "g1", "group": "gpu"},
...                                     {"name": "cpu"}],
...         "links": [{"src": "g0", "dst": "cpu", "bandwidth": 2}, {"src": "g1", "dst": "cpu", "bandwidth": 2}],
...         "tasks": [{"name": "t", "durations": {"g0": 1, "g1": 1, "cpu": 3}}]}
>>> device_groups(Problem.from_dict(data))
{'gpu': [0, 1]}
>>> first_difference(Problem.from_dict(data)) is None
True
>>> data["links"][1]["bandwidth"] = 1
>>> first_difference(Problem.from_dict(data))
"group 'gpu': devices g0 and g1 are not interchangeable: g0->cpu has bandwidth 2 and latency 0, g1->cpu bandwidth 1 and latency 0"
"""

from __future__ import annotations

import math
import weakref

__all__ = ["device_groups", "first_difference"]

#: Problem -> its answer (``""``: interchangeable), computed once.
_ANSWERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_groups(problem) -> dict[str, list[int]]:
    """Group name -> its devices (indices, in file order), groups of two devices or more only."""
    groups: dict[str, list[int]] = {}
    for d, device in enumerate(problem.spec.devices):
        if device.group is not None:
            groups.setdefault(device.group, []).append(d)
    return {name: members for name, members in groups.items() if len(members) > 1}


def first_difference(problem) -> str | None:
    """The one-line message naming the first two devices of a group that differ, and how;
    ``None`` when the members of every group are interchangeable."""
    answer = _ANSWERS.get(problem)
    if answer is None:
        answer = ""
        usage = None
        for name, members in device_groups(problem).items():
            for b in members[1:]:
                why = _differ(problem, members[0], b)
                if why is None:
                    usage = usage if usage is not None else _channel_usage(problem)
                    why = _channels_differ(problem, members[0], b, usage)
                if why is not None:
                    a_name, b_name = problem.devices[members[0]], problem.devices[b]
                    answer = f"group '{name}': devices {a_name} and {b_name} are not interchangeable: {why}"
                    break
            if answer:
                break
        _ANSWERS[problem] = answer
    return answer or None


def _close(x: float, y: float) -> bool:
    # Routes sum latencies along paths: mirrored sums may differ in the last bits.
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def _differ(p, a: int, b: int) -> str | None:
    """The first difference of the device data, the tasks and the transfer times, or ``None``."""
    da, db = p.spec.devices[a], p.spec.devices[b]
    na, nb = da.name, db.name
    memory = lambda m: "unlimited" if m is None else f"{m:g}"  # noqa: E731
    if da.speed != db.speed:
        return f"speed {da.speed:g} and {db.speed:g}"
    if da.memory != db.memory:
        return f"memory {memory(da.memory)} and {memory(db.memory)}"
    if sorted(da.batch_sizes or []) != sorted(db.batch_sizes or []):
        return f"batch sizes {da.batch_sizes} and {db.batch_sizes}"
    for i, task in enumerate(p.spec.tasks):
        ta, tb = p.durations[i].get(a), p.durations[i].get(b)
        if (ta is None) != (tb is None):
            on, off = (na, nb) if tb is None else (nb, na)
            return f"task '{task.name}' may run on {on} but not on {off}"
        if ta is None:
            continue
        if ta != tb:
            return f"task '{task.name}' lasts {ta:g} on {na} and {tb:g} on {nb}"
        if task.durations is not None and task.entry(da) != task.entry(db):
            return f"task '{task.name}' has durations {task.entry(da)} on {na} and {task.entry(db)} on {nb}"
    swap = _swap(a, b)
    for c in range(len(p.devices)):
        if c in (a, b):
            continue
        for (x, y) in ((a, c), (c, a)):
            why = _route_differs(p, x, y, swap(x), swap(y))
            if why:
                return why
    why = _route_differs(p, a, b, b, a)
    if why:
        return why
    for i, j, size in p.edges:
        times = getattr(size, "times", None)
        if not times:
            continue
        for (u, v), t in times.items():
            mirrored = times.get((swap(u), swap(v)))
            if mirrored is None or not _close(t, mirrored):
                shown = "none" if mirrored is None else f"{mirrored:g}"
                return (f"edge {p.tasks[i]}->{p.tasks[j]} gives transfer time {t:g} for "
                        f"{p.devices[u]}->{p.devices[v]} and {shown} for {p.devices[swap(u)]}->{p.devices[swap(v)]}")
    return None


def _swap(a: int, b: int):
    return lambda x: b if x == a else a if x == b else x


def _route_differs(p, x: int, y: int, x2: int, y2: int) -> str | None:
    first, second = f"{p.devices[x]}->{p.devices[y]}", f"{p.devices[x2]}->{p.devices[y2]}"
    if p.linked[x][y] != p.linked[x2][y2]:
        return f"{first if p.linked[x][y] else second} is linked, {second if p.linked[x][y] else first} is not"
    if not p.linked[x][y]:
        return None
    if not (_close(p.inv_bandwidth[x][y], p.inv_bandwidth[x2][y2]) and _close(p.latency[x][y], p.latency[x2][y2])):
        bw = lambda u, v: 1 / p.inv_bandwidth[u][v] if p.inv_bandwidth[u][v] else math.inf  # noqa: E731
        return (f"{first} has bandwidth {bw(x, y):g} and latency {p.latency[x][y]:g}, "
                f"{second} bandwidth {bw(x2, y2):g} and latency {p.latency[x2][y2]:g}")
    return None


def _channel_usage(p) -> dict[str, list[tuple[int, int]]]:
    """Channel -> the ordered device pairs whose route holds it."""
    usage: dict[str, list[tuple[int, int]]] = {}
    for x, row in enumerate(p.route):
        for y, route in enumerate(row):
            for channel in route:
                usage.setdefault(channel, []).append((x, y))
    return usage


def _channels_differ(p, a: int, b: int, usage) -> str | None:
    """Whether swapping ``a`` and ``b`` maps the routes onto routes under a renaming of channels."""
    swap = _swap(a, b)
    rename: dict[str, str] = {}
    back: dict[str, str] = {}
    n = len(p.devices)
    pairs = [(x, y) for x in (a, b) for y in range(n) if y != x] + \
            [(x, y) for x in range(n) if x not in (a, b) for y in (a, b)]
    for x, y in pairs:
        mine, theirs = p.route[x][y], p.route[swap(x)][swap(y)]
        ok = len(mine) == len(theirs)
        for c1, c2 in zip(mine, theirs):
            ok = ok and rename.setdefault(c1, c2) == c2 and back.setdefault(c2, c1) == c1
        if not ok:
            return (f"the routes {p.devices[x]}->{p.devices[y]} ({', '.join(mine) or 'none'}) and "
                    f"{p.devices[swap(x)]}->{p.devices[swap(y)]} ({', '.join(theirs) or 'none'}) "
                    f"share channels differently")
    # A route between two other devices is its own mirror image: it keeps its channels.
    for channel, target in rename.items():
        if target == channel:
            continue
        for x, y in usage.get(channel, ()):
            if x not in (a, b) and y not in (a, b):
                return (f"channel '{channel}' carries {p.devices[x]}->{p.devices[y]}, which does not "
                        f"involve them, while the swap maps it to '{target}'")
    return None
