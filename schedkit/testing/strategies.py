"""Hypothesis strategies: random problems (one strategy for every test) and mappings.

Needs the ``hypothesis`` package (the ``test`` extra).

Examples
--------
>>> from hypothesis import given, settings
>>> from schedkit import Problem, ProblemError
>>> @settings(max_examples=5, database=None)
... @given(problems(max_tasks=5))
... def sizes(data):
...     assert 1 <= len(data["tasks"]) <= 5
>>> sizes()
"""

from __future__ import annotations

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - the test extra is missing
    from schedkit.errors import SchedkitError

    raise SchedkitError("schedkit.testing.strategies needs hypothesis: pip install 'schedkit[test]'") from None

#: Values the strategies draw from: small, with zeros (zero-length tasks and empty edges
#: are where read-back and timing bugs hide) and repeated values (ties).
DURATIONS = (0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 5.0, 9.0)
SPEEDS = (0.5, 1.0, 2.0, 4.0)
CAPACITIES = (2.0, 4.0, 8.0, 16.0)
TASK_MEMORY = (0.0, 0.0, 1.0, 2.0, 3.0)
BANDWIDTHS = (0.5, 1.0, 4.0)
LATENCIES = (0.0, 0.25, 1.0)
SIZES = (0.0, 1.0, 3.0)


@st.composite
def problems(draw, *, max_tasks: int = 9, min_devices: int = 1, max_devices: int = 4,
             sparse_links: bool = True, colocate: bool = True, pins: bool = True,
             memory: bool = True, work: bool = True, channels: bool = False,
             transfer_times: bool = False) -> dict:
    """``schedkit/v1`` data of a small random problem; building a Problem from it may raise.

    Parameters
    ----------
    max_tasks, min_devices, max_devices : int
        Sizes (at least one task).
    sparse_links : bool
        Leave about one pair of devices in five unlinked (else every pair is linked).
    colocate, pins, memory, work : bool
        Draw collocation groups, pins, memory capacities and task memory, and tasks given
        as ``work`` (run everywhere at ``work / speed``) beside per-device durations.
    channels, transfer_times : bool
        Let some links share one named channel (``bus``), and some edges of positive size
        give their own transfer times for directly linked pairs (zeros included).
    """
    n = draw(st.integers(1, max_tasks))
    m = draw(st.integers(min_devices, max_devices))
    names = [f"d{k}" for k in range(m)]
    devices = []
    for name in names:
        row = {"name": name, "speed": draw(st.sampled_from(SPEEDS))}
        if memory and draw(st.integers(0, 3)) == 0:
            row["memory"] = draw(st.sampled_from(CAPACITIES))
        devices.append(row)
    links = []
    for u in range(m):
        for v in range(u + 1, m):
            if not sparse_links or draw(st.integers(0, 4)) > 0:
                links.append({"src": names[u], "dst": names[v],
                              "bandwidth": draw(st.sampled_from(BANDWIDTHS)),
                              "latency": draw(st.sampled_from(LATENCIES))})
                if channels and draw(st.booleans()):
                    links[-1]["channel"] = "bus"
    tasks = []
    for i in range(n):
        row = {"name": f"t{i}"}
        if memory:
            row["memory"] = draw(st.sampled_from(TASK_MEMORY))
        if work and draw(st.booleans()):
            row["work"] = draw(st.sampled_from(DURATIONS))
        else:
            subset = draw(st.lists(st.sampled_from(names), min_size=1, max_size=m, unique=True))
            row["durations"] = {d: draw(st.sampled_from(DURATIONS)) for d in subset}
        if pins and draw(st.integers(0, 4)) == 0:
            row["pin"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=m, unique=True))
        if colocate:
            group = draw(st.sampled_from([None, None, None, "g0", "g1"]))
            if group is not None:
                row["colocate"] = group
        row["output_size"] = draw(st.sampled_from(SIZES))
        tasks.append(row)
    edges = []
    for j in range(n):
        for i in range(j):
            if draw(st.integers(0, 2)) == 0:
                edge = {"src": f"t{i}", "dst": f"t{j}"}
                if draw(st.booleans()):
                    edge["size"] = draw(st.sampled_from(SIZES))
                size = edge.get("size", tasks[i]["output_size"])
                if transfer_times and size > 0 and links and draw(st.booleans()):
                    pairs = [(k["src"], k["dst"]) for k in links] + [(k["dst"], k["src"]) for k in links]
                    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, unique=True))
                    edge["transfer_times"] = {f"{a}->{b}": draw(st.sampled_from(DURATIONS)) for a, b in chosen}
                edges.append(edge)
    return {"name": "random", "devices": devices, "links": links, "tasks": tasks, "edges": edges}


def mappings(problem) -> st.SearchStrategy[list[int]]:
    """Device strings of ``problem``: each task on one of its allowed devices (may break memory,
    collocation or links; :func:`~schedkit.problem.mapping.is_feasible_mapping` tells)."""
    return st.tuples(*(st.sampled_from(a) for a in problem.allowed)).map(list)
