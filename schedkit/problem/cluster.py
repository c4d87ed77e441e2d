"""Device types and group links: a cluster named once per kind of device and per server.

A device may give ``type: NAME``; a task's ``durations`` may key an entry by a device name
or by a type, and a device takes the entry of its own name when there is one, else the entry
of its type. A link's ``src`` or ``dst`` may name a device ``group`` (a server): it then
stands for a link between every device of one side and every device of the other (with
``src == dst`` a group, between every two distinct devices of that group). A link between two
devices takes precedence over group links for that ordered pair; among group links the rule
for several direct links applies (the widest, then the least latency, then the first in the
file). Names of devices, types and groups are three separate sets.

This module resolves both rules for the rest of the package: :func:`link_pairs` lists the
ordered device pairs a link stands for, in the order an expanded file would list them, and
:func:`expanded` writes a file that states everything per device (what every reader saw
before types and groups existed).

Examples
--------
>>> data = {"devices": [{"name": f"n{s}_g{k}", "type": "a100", "group": f"n{s}"}
...                     for s in range(2) for k in range(2)],
...         "links": [{"src": "n0", "dst": "n0", "bandwidth": 50},
...                   {"src": "n0", "dst": "n1", "bandwidth": 10, "channel": "net"}],
...         "tasks": [{"name": "t", "durations": {"a100": 2.0, "n1_g1": 3.0}}]}
>>> out = expanded(data)
>>> out["tasks"][0]["durations"]
{'n0_g0': 2.0, 'n0_g1': 2.0, 'n1_g0': 2.0, 'n1_g1': 3.0}
>>> [(l["src"], l["dst"], l.get("channel")) for l in out["links"]][:3]
[('n0_g0', 'n0_g1', None), ('n0_g0', 'n1_g0', 'net'), ('n0_g0', 'n1_g1', 'net')]
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

__all__ = ["name_sets", "check_names", "devices_named", "check_batch_sizes", "link_pairs", "device_pairs",
           "resolved_links", "expanded"]


def name_sets(devices: Sequence[Any]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Types and groups of ``devices`` (objects or dicts with ``type`` and ``group``): each
    name to its devices' indices, in file order.

    Examples
    --------
    >>> name_sets([{"name": "c", "type": "cpu"}, {"name": "g0", "type": "gpu", "group": "n0"},
    ...            {"name": "g1", "type": "gpu", "group": "n0"}])
    ({'cpu': [0], 'gpu': [1, 2]}, {'n0': [1, 2]})
    """
    types: dict[str, list[int]] = {}
    groups: dict[str, list[int]] = {}
    for k, device in enumerate(devices):
        kind, group = _field(device, "type"), _field(device, "group")
        if kind is not None:
            types.setdefault(kind, []).append(k)
        if group is not None:
            groups.setdefault(group, []).append(k)
    return types, groups


def _field(device: Any, key: str) -> Any:
    return device.get(key) if isinstance(device, dict) else getattr(device, key)


def check_names(names: Sequence[str], types: dict[str, list[int]], groups: dict[str, list[int]]) -> None:
    """Raise ``ValueError`` naming the device whose type or group is spelled like a device
    name, or whose group is spelled like a type: a key or a link end would mean two things.

    Examples
    --------
    >>> check_names(["gpu", "g1"], {"gpu": [1]}, {})
    Traceback (most recent call last):
    ...
    ValueError: device 'g1': type 'gpu' is spelled like a device name (a durations key would name both)
    """
    devices = set(names)
    for kind, members in types.items():
        if kind in devices:
            raise ValueError(f"device '{names[members[0]]}': type '{kind}' is spelled like a device name "
                             f"(a durations key would name both)")
    for group, members in groups.items():
        clash = "a device name" if group in devices else "a device type" if group in types else None
        if clash:
            raise ValueError(f"device '{names[members[0]]}': group '{group}' is spelled like {clash} "
                             f"(a link end would name both)")


def devices_named(keys: Iterable[str], by_name: dict, types: dict, devices: Sequence[Any]) -> Iterator[Any]:
    """The devices that the ``durations`` keys of a task name, by name and by type (lazily:
    the first device that fits usually settles the task's checks).

    Examples
    --------
    >>> devices = [{"name": "cpu"}, {"name": "g0", "type": "gpu"}, {"name": "g1", "type": "gpu"}]
    >>> by_name = {d["name"]: d for d in devices}
    >>> [d["name"] for d in devices_named({"gpu": 2, "g1": 1}, by_name, {"gpu": [1, 2]}, devices)]
    ['g1', 'g0']
    """
    for key in keys:
        device = by_name.get(key)
        if device is not None:
            yield device
    for kind in (key for key in keys if key in types):
        yield from (devices[d] for d in types[kind] if _field(devices[d], "name") not in keys)


def check_batch_sizes(task: Any, key: str, value: dict, by_name: dict, types: dict, devices: Sequence[Any]) -> None:
    """Raise ``ValueError`` when a per-batch map of ``task``, keyed ``key`` (a device or a
    type), gives no time for a batch size that a device taking it supports.

    Examples
    --------
    >>> from schedkit.problem.spec import DeviceSpec, TaskSpec
    >>> devices = [DeviceSpec(name="g0", type="gpu", batch_sizes=[1, 8])]
    >>> task = TaskSpec(name="t", durations={"gpu": {1: 1.0, 4: 3.0}})
    >>> check_batch_sizes(task, "gpu", task.durations["gpu"], {"g0": devices[0]}, {"gpu": [0]}, devices)
    Traceback (most recent call last):
    ...
    ValueError: task 't': its durations on 'gpu' (device g0) give no time for batch size 8, which the device supports
    """
    takers = [by_name[key]] if key in by_name else \
        [devices[d] for d in types[key] if devices[d].name not in task.durations]
    for device in takers:
        missing = sorted(set(device.batch_sizes or ()) - set(value))
        if missing:
            where = f"'{key}'" if key == device.name else f"'{key}' (device {device.name})"
            raise ValueError(f"task '{task.name}': its durations on {where} give no time for "
                             f"batch size {missing[0]}, which the device supports")


def link_pairs(src: list[int], dst: list[int], bidirectional: bool, same_group: bool) -> Iterator[tuple[int, int]]:
    """The ordered device pairs of a link whose ends stand for the devices ``src`` and ``dst``,
    in the order of an expanded file: per pair of devices, ``(a, b)`` then ``(b, a)`` when
    the link is bidirectional.

    ``same_group``: both ends name one group, which joins every two distinct devices of it
    (once per unordered pair when bidirectional).

    Examples
    --------
    >>> list(link_pairs([0, 1, 2], [0, 1, 2], True, True))
    [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    >>> list(link_pairs([0], [1, 2], False, False))
    [(0, 1), (0, 2)]
    """
    for a, b in _primary(src, dst, bidirectional, same_group):
        yield a, b
        if bidirectional:
            yield b, a


def _primary(src: list[int], dst: list[int], bidirectional: bool, same_group: bool) -> Iterator[tuple[int, int]]:
    # The pairs an expanded file lists as links (a bidirectional one stands for both directions).
    for k, a in enumerate(src):
        for b in dst[k + 1:] if same_group and bidirectional else dst:
            if a != b:
                yield a, b


def device_pairs(links: Sequence[Any], index: dict[str, int]) -> set[tuple[int, int]]:
    """The ordered pairs that links between two devices cover: group links skip them.

    Examples
    --------
    >>> sorted(device_pairs([{"src": "a", "dst": "b"}, {"src": "g", "dst": "a", "bidirectional": False}],
    ...                     {"a": 0, "b": 1}))
    [(0, 1), (1, 0)]
    """
    own: set[tuple[int, int]] = set()
    for link in links:
        u, v = index.get(_field(link, "src")), index.get(_field(link, "dst"))
        if u is not None and v is not None:
            own.add((u, v))
            if _field(link, "bidirectional") is not False:
                own.add((v, u))
    return own


def resolved_links(links: Sequence[Any], index: dict[str, int],
                   groups: dict[str, list[int]]) -> Iterator[tuple[Any, Iterator[tuple[int, int]]]]:
    """Each link with the ordered device pairs it stands for (device-pair links win their
    pairs), in file order: what a route table reads.

    Examples
    --------
    >>> links = [{"src": "g", "dst": "g", "bandwidth": 5}, {"src": "a", "dst": "b", "bandwidth": 1}]
    >>> [list(pairs) for _, pairs in resolved_links(links, {"a": 0, "b": 1, "c": 2}, {"g": [0, 1, 2]})]
    [[(0, 2), (2, 0), (1, 2), (2, 1)], [(0, 1), (1, 0)]]
    """
    own = device_pairs(links, index) if groups else set()
    for link in links:
        src, dst = _field(link, "src"), _field(link, "dst")
        bidirectional = _field(link, "bidirectional") is not False
        if src in index and dst in index:
            u, v = index[src], index[dst]
            yield link, iter([(u, v), (v, u)] if bidirectional else [(u, v)])
            continue
        ends = [[index[end]] if end in index else groups[end] for end in (src, dst)]
        pairs = link_pairs(ends[0], ends[1], bidirectional, src == dst)
        yield link, ((a, b) for a, b in pairs if (a, b) not in own) if own else pairs


def expanded(data: dict) -> dict:
    """``schedkit/v1`` ``data`` with every type key and group link stated per device.

    Durations keyed by a type become one entry per device of that type without an entry
    of its own; a group link becomes one link per pair of devices it covers (a direction a
    device-pair link takes is left out), in place, so that the routes, the channels and
    their order are those of the original. The devices keep their ``type`` and ``group``.

    Examples
    --------
    >>> data = {"devices": [{"name": "a", "group": "g"}, {"name": "b", "group": "g"}],
    ...         "links": [{"src": "g", "dst": "g", "bandwidth": 5},
    ...                   {"src": "a", "dst": "b", "bandwidth": 1, "bidirectional": False}],
    ...         "tasks": [{"name": "t", "work": 1}]}
    >>> [(l["src"], l["dst"], l["bandwidth"], l.get("bidirectional")) for l in expanded(data)["links"]]
    [('b', 'a', 5, False), ('a', 'b', 1, False)]
    """
    devices = data["devices"]
    names = [d["name"] for d in devices]
    index = {name: k for k, name in enumerate(names)}
    types, groups = name_sets(devices)
    own = device_pairs(data.get("links", []), index) if groups else set()
    links = []
    for link in data.get("links", []):
        src, dst = link["src"], link["dst"]
        if src in index and dst in index:
            links.append(dict(link))
            continue
        bidirectional = link.get("bidirectional", True) is not False
        ends = [[index[end]] if end in index else groups[end] for end in (src, dst)]
        for a, b in _primary(ends[0], ends[1], bidirectional, src == dst):
            forward, backward = (a, b) not in own, bidirectional and (b, a) not in own
            if not (forward or backward):
                continue
            row = dict(link, src=names[a if forward else b], dst=names[b if forward else a])
            if bidirectional and not (forward and backward):
                row["bidirectional"] = False  # a device-pair link takes the other direction
            links.append(row)
    tasks = []
    for task in data.get("tasks", []):
        table = task.get("durations")
        if table is None or not any(key in types for key in table):
            tasks.append(task)
            continue
        out = {}
        for k, name in enumerate(names):
            value = table.get(name, table.get(devices[k].get("type")))
            if value is not None:
                out[name] = value
        tasks.append(dict(task, durations=out))
    return dict(data, links=links, tasks=tasks)

