"""Windows alike: parts of one task graph that have one shape and differ only in durations
and data, and one part whose optimum is at most each of theirs.

A transformer repeats its layers, an Inception network its modules: the windows of a spine
(:mod:`schedkit.auto.spine_bound`) or the modules of a chain (:mod:`schedkit.auto.series`)
come in classes of isomorphic graphs. A bound of the class's *least part* (each task's least
duration on each device, each edge's least transfer, over the members) bounds every member:
one solve instead of one per member. MOIRAI's Inception-v4: 28 modules, of which 4, 7 and
3 alike (23, 32 and 34 tasks), proven free in 0.8, 2.7 and 7.7 s by CP-SAT.
"""

from __future__ import annotations

import warnings

import networkx as nx
from networkx.algorithms import isomorphism

from schedkit.problem import Problem
from schedkit.problem.network import Payload
from schedkit.problem.series_cuts import TWIN
from schedkit.reductions.subproblem import edge_row, spec_data, task_row

__all__ = ["alike", "least_part", "carried"]


def alike(problem: Problem, windows: list[list[int]],
          entries: list[int | None]) -> list[list[tuple[int, dict[int, int]]]]:
    """``windows`` (each opened by the task of ``entries`` whose data it takes, or ``None``) in
    classes of one shape, each member with the map of the first member's tasks to its own:
    isomorphic graphs whose tasks allow the same devices and take the same data from the
    task that opens them (networkx's Weisfeiler-Lehman hash, then VF2); only
    durations, memory and data may differ (the layers of a transformer). A window with a
    collocation group is a class of its own.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> windows = [[1], [2], [5]]            # attn, mlp, sample (on the cpu only)
    >>> [[t for t, _ in c] for c in alike(p, windows, [None, None, None])]
    [[0, 1], [2]]
    """
    buckets: dict = {}
    for t, (tasks, entry) in enumerate(zip(windows, entries)):
        graph, odd = _shape(problem, tasks, entry)
        with warnings.catch_warnings():     # (networkx 3.5 warns that its hashes of digraphs changed)
            warnings.simplefilter("ignore", UserWarning)
            key = ("odd", t) if odd else nx.weisfeiler_lehman_graph_hash(graph, node_attr="kind")
        for members in buckets.setdefault(key, []):
            first = members[0][2]
            matcher = isomorphism.DiGraphMatcher(first, graph, node_match=lambda a, b: a["kind"] == b["kind"])
            if not odd and matcher.is_isomorphic():
                members.append((t, dict(matcher.mapping), graph))
                break
        else:
            buckets[key].append([(t, {i: i for i in tasks}, graph)])
    return [[(t, mapping) for t, mapping, _ in members] for bucket in buckets.values() for members in bucket]


def _shape(problem: Problem, tasks: list[int], entry: int | None) -> tuple[nx.DiGraph, bool]:
    """A window's graph, each task's kind its allowed devices and whether the pivot feeds it;
    and whether it is odd (a collocation group)."""
    inside = set(tasks)
    fed = {} if entry is None else {j: size for j, size in problem.succs[entry] if j in inside}
    graph = nx.DiGraph()
    for i in tasks:
        graph.add_node(i, kind=f"{problem.allowed[i]}{i in fed}")
    graph.add_edges_from((i, j) for i in tasks for j, _ in problem.succs[i] if j in inside)
    return graph, any(problem.spec.tasks[i].colocate for i in tasks)


def least_part(problem: Problem, windows: list[list[int]], entries: list[int | None],
               members: list[tuple[int, dict[int, int]]], pins: dict[int, list[int]] | None = None) -> Problem:
    """A part whose optimum is at most every member's: the first member's part with the least
    duration on each device and the least data of each edge over the members of a class of
    :func:`alike`, and no memory (a schedule of a member's part is one of this part, each task
    and transfer as long or shorter, left to move earlier). ``pins``: the first member's tasks
    (or the pivot whose twin opens it) kept to these devices.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> part = least_part(p, [[1], [2]], [0, 0], [(0, {1: 1}), (1, {1: 2})])
    >>> part.tasks, part.durations[0][0]      # (attn's place; mlp runs 1.5 on gpu0, attn 1.2)
    (['attn', 'embed~twin'], 1.2)
    """
    t0, _ = members[0]
    first, entry = windows[t0], entries[t0]
    sizes = [{(i, j): s for i in windows[t] + [entries[t]] if i is not None for j, s in problem.succs[i]}
             for t, _ in members]
    tasks = []
    pins = pins or {}
    for i in first:
        row = task_row(problem, i)
        row["durations"] = {problem.devices[d]: min(problem.durations[to[i]][d] for _, to in members)
                            for d in problem.allowed[i] if d in pins.get(i, problem.allowed[i])}
        tasks.append({key: value for key, value in row.items() if "memory" not in key})
    inside = set(first)
    edges = [edge_row(problem, problem.tasks[i], problem.tasks[j],
                      _least_data(problem, [size[to[i], to[j]] for (_, to), size in zip(members, sizes)]))
             for i in first for j, _ in problem.succs[i] if j in inside]
    if entry is not None:
        twin = problem.tasks[entry] + TWIN
        tasks.append({"name": twin, "durations": {problem.devices[d]: 0.0 for d in problem.allowed[entry]
                                                  if d in pins.get(entry, problem.allowed[entry])}})
        edges += [edge_row(problem, twin, problem.tasks[j],
                           _least_data(problem, [size[entries[t], to[j]] for (t, to), size in zip(members, sizes)]))
                  for j, _ in problem.succs[entry] if j in inside]
    data = spec_data(problem, platform=True)
    return Problem.from_dict({"format": data["format"], "name": f"{problem.name}/windows alike",
                              "devices": data["devices"], "links": data.get("links", []),
                              "tasks": tasks, "edges": edges})


def _least_data(problem: Problem, sizes: list) -> float:
    """The data of one edge no slower than any of ``sizes`` between any two devices."""
    if all(size.__class__ is not Payload for size in sizes):
        return min(sizes)
    m = len(problem.devices)
    return Payload(min(float(size) for size in sizes),
                   {(u, v): min(problem.comm_time(size, u, v) for size in sizes)
                    for u in range(m) for v in range(m) if u != v and problem.linked[u][v]})


def carried(problem: Problem, part: Problem, schedule, to_source: dict[int, int], twins: tuple[str, str] | None,
            rules=None):
    """``schedule``, of a member's part, carried onto ``part``, another member's part of one
    class of :func:`alike`: each task on the device and in the order of the task it maps to
    (``to_source``: ``part``'s task indices in ``problem`` -> the source member's), the twin
    of the pivot that opens the window as its source's (``twins``: the source's name, this
    part's), all times recomputed (:func:`~schedkit.reductions.subproblem.stitch`). ``None``
    where that order contradicts ``part``'s graph.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.methods import METHODS
    >>> from schedkit.reductions.subproblem import sub_problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> attn, mlp = sub_problem(p, [1], "attn"), sub_problem(p, [2], "mlp")
    >>> s = METHODS.get("heft")().solve(attn)
    >>> [(r.task, r.device, r.end) for r in carried(p, mlp, s, {2: 1}, None).tasks]
    [('mlp', 'gpu0', 1.5)]
    """
    from schedkit.errors import SchedkitError
    from schedkit.reductions.subproblem import orders_by_start, stitch

    names = {problem.tasks[source]: part.task_index[problem.tasks[mine]] for mine, source in to_source.items()}
    if twins is not None:
        names[twins[0]] = part.task_index[twins[1]]
    device = {r.task: part.device_index[r.device] for r in schedule.tasks}
    device_of = [0] * len(part.tasks)
    for name, k in names.items():
        device_of[k] = device[name]
        if device_of[k] not in part.allowed[k]:     # (a pinned end the map sends elsewhere)
            return None
    try:
        return stitch(part, device_of, orders_by_start(part, schedule, names), schedule.method, rules)
    except SchedkitError:
        return None
