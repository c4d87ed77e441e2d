"""``auto``'s ``spine`` phase: a lower bound summed over the windows of a spine.

The windows of a spine (:mod:`schedkit.problem.spine`) run one after the other in every
schedule, so the makespan is at least the sum of their own problems' lower bounds. Each
window's part (:func:`window_part`) holds its tasks and a *twin* of the pivot that opens it:
a task of duration 0 on any of the pivot's devices that sends the pivot's data to the
window's tasks, since those transfers too start after the window opens. Its bound is the
part's combinatorial bound (:func:`~schedkit.auto.series.part_floor`), raised by its
placement relaxation (:mod:`schedkit.auto.relaxation`) while time is left, larger windows
first.

Where the graph has no chain of cuts, this is the bound that sees transfers. MOIRAI's
Transformer under ``-f moirai`` (1,374 tasks; the encoder's output skips to every decoder
layer, so one module holds 1,358 tasks): the whole problem's bound is 10.0 and the chain's
10.3; windows between 40 pivots hold 1,070 tasks and their relaxations sum to 13.5-14.8
with 1-4 s each (2 shared cores).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.semantics import get_formulation
>>> p = Problem.load("examples/tiny.yaml")
>>> f = get_formulation("moirai")
>>> from schedkit.problem.bounds import formulation_bound
>>> round(formulation_bound(p, list(f.blocks)), 4), round(spine_bound(p, list(f.blocks), f.timing_rules(p), 10), 4)   # optimum 4.5163
(3.4826, 4.3163)
"""

from __future__ import annotations

import time
import warnings

import networkx as nx
from networkx.algorithms import isomorphism

from schedkit.auto.relaxation import MAX_TASKS as RELAX_MAX_TASKS, relaxation_bound
from schedkit.auto.series import MAX_CHAIN_TASKS, part_floor
from schedkit.problem import Problem
from schedkit.problem.series_cuts import TWIN, chain_cuts, modules
from schedkit.problem.spine import Spine, spine
from schedkit.problem.network import Payload
from schedkit.reductions.subproblem import edge_row, spec_data, sub_problem, task_row
from schedkit.timing import TimingRules

__all__ = ["spine_bound", "spine_phase", "window_part", "least_part", "alike", "applies", "CLASS_SECONDS"]

#: Seconds of placement relaxation for a class of four windows alike or more (a quarter of
#: it per window below four): MOIRAI's Transformer's attention windows (67 tasks) bound 0.37
#: after 1 s and 0.78 after 4 s, against 0.83 on one device.
CLASS_SECONDS = 8.0


def applies(problem: Problem, rules: TimingRules) -> bool:
    """Whether the windows' bounds add up: a task starts after its predecessors end (the
    formulation orders the edges) and one input runs (a workload interleaves inputs)."""
    return problem.inputs == 1 and rules.ordered_edges


def spine_bound(problem: Problem, blocks: list, rules: TimingRules, seconds: float | None,
                found: Spine | None = None) -> float | None:
    """The sum of the windows' bounds of ``problem``'s spine (``found``, else
    :func:`~schedkit.problem.spine.spine`), in about ``seconds`` (``None``: each class of
    windows alike at most :data:`CLASS_SECONDS`); ``None`` where the graph has no spine or the
    bounds do not add up (:func:`applies`).
    """
    began = time.perf_counter()
    found = found if found is not None else spine(problem) if applies(problem, rules) else None
    if found is None:
        return None
    floors = [part_floor(window_part(problem, found, t), blocks) for t in range(len(found.windows))]
    deadline = None if seconds is None else began + seconds
    # (a window of one task is bounded exactly by its floor; the classes that hold the most
    # tasks gain the most)
    classes = sorted((c for c in alike(problem, found) if 1 < len(found.windows[c[0][0]]) <= RELAX_MAX_TASKS),
                     key=lambda c: -len(c) * len(found.windows[c[0][0]]))
    weights = [len(c) * len(found.windows[c[0][0]]) for c in classes]
    for k, members in enumerate(classes):
        limit = CLASS_SECONDS * min(len(members), 4) / 4
        if deadline is not None:
            limit = min(limit, (deadline - time.perf_counter()) * weights[k] / sum(weights[k:]))
            if limit <= 0:
                break
        part = least_part(problem, found, members)
        bound = relaxation_bound(part, rules, limit, part_floor(part, blocks))
        for t, _ in members:
            floors[t] = max(floors[t], bound)
    return sum(floors)


def alike(problem: Problem, found: Spine) -> list[list[tuple[int, dict[int, int]]]]:
    """The windows in classes of one shape, each member with the map of the first member's
    tasks to its own: isomorphic graphs whose tasks allow the same devices and take the same
    data from the pivot that opens them (networkx's Weisfeiler-Lehman hash, then VF2); only
    durations, memory and data may differ (the layers of a transformer). A window with a
    collocation group is a class of its own.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> [[t for t, _ in c] for c in alike(p, spine(p))]
    [[0], [1], [2]]
    """
    buckets: dict = {}
    for t, (tasks, entry) in enumerate(zip(found.windows, found.entries)):
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


def least_part(problem: Problem, found: Spine, members: list[tuple[int, dict[int, int]]]) -> Problem:
    """A part whose optimum is at most every member's: the first member's part with the least
    duration on each device and the least data of each edge over the members of a class of
    :func:`alike`, and no memory (a schedule of a member's part is one of this part, each task
    and transfer as long or shorter, left to move earlier).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> least_part(p, spine(p), [(1, {1: 1, 2: 2, 3: 3})]).tasks
    ['attn', 'mlp', 'norm', 'embed~twin']
    """
    t0, _ = members[0]
    if len(members) == 1:
        return window_part(problem, found, t0)
    first, entry = found.windows[t0], found.entries[t0]
    sizes = [{(i, j): s for i in found.windows[t] + [found.entries[t]] if i is not None for j, s in problem.succs[i]}
             for t, _ in members]
    tasks = []
    for i in first:
        row = task_row(problem, i)
        row["durations"] = {problem.devices[d]: min(problem.durations[to[i]][d] for _, to in members)
                            for d in problem.allowed[i]}
        tasks.append({key: value for key, value in row.items() if "memory" not in key})
    inside = set(first)
    edges = [edge_row(problem, problem.tasks[i], problem.tasks[j],
                      _least_data(problem, [size[to[i], to[j]] for (_, to), size in zip(members, sizes)]))
             for i in first for j, _ in problem.succs[i] if j in inside]
    if entry is not None:
        twin = problem.tasks[entry] + TWIN
        tasks.append({"name": twin, "durations": {problem.devices[d]: 0.0 for d in problem.allowed[entry]}})
        edges += [edge_row(problem, twin, problem.tasks[j],
                           _least_data(problem, [size[found.entries[t], to[j]] for (t, to), size in zip(members, sizes)]))
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


def spine_phase(problem: Problem, state, seconds: float | None, blocks: list, rules: TimingRules) -> None:
    """``auto``'s ``spine`` phase: the spine's bound goes to ``state`` (an
    :class:`~schedkit.auto.state.Incumbent`), which keeps it when it is the best so far."""
    if not applies(problem, rules):
        state.skip("spine", "spine", "the windows' bounds do not add up: a workload of several inputs, "
                                     "or a formulation that does not order the edges")
        return
    began = time.perf_counter()
    if _chained(problem):
        state.skip("spine", "spine", f"chain cuts split the graph into modules of at most {MAX_CHAIN_TASKS} "
                                     "tasks, which the series phase bounds by their own solves")
        return
    state.begin("spine", "spine")
    found = spine(problem)
    if found is None:
        state.end(note="no task has almost every task before or after it")
        return
    left = None if seconds is None else seconds - (time.perf_counter() - began)
    record = state.phases[-1]
    record.bound = spine_bound(problem, blocks, rules, left, found)
    if state.bound_at_least(record.bound, record.label):
        state.emit("better")
    state.end(note=f"{len(found.windows)} windows between {len(found.pivots)} pivots hold "
                   f"{found.covered} of {len(problem.tasks)} tasks")


def _chained(problem: Problem) -> bool:
    """Whether chain cuts split ``problem`` into modules small enough for the series phase."""
    cuts = chain_cuts(problem)
    return bool(cuts) and max(len(g) for g in modules(problem, cuts)[0]) <= MAX_CHAIN_TASKS


def window_part(problem: Problem, found: Spine, t: int) -> Problem:
    """Window ``t``'s part: its tasks and, after the first, the twin of the pivot that opens
    it, which sends that pivot's data to the window's tasks.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> part = window_part(p, spine(p), 1)
    >>> part.tasks, [(part.tasks[i], part.tasks[j]) for i, j, _ in part.edges][:2]
    (['attn', 'mlp', 'norm', 'embed~twin'], [('attn', 'norm'), ('mlp', 'norm')])
    """
    tasks, entry = found.windows[t], found.entries[t]
    name = f"{problem.name}/window{t + 1}"
    if entry is None:
        return sub_problem(problem, tasks, name)
    inside = set(tasks)
    twin = problem.tasks[entry] + TWIN
    stand_in = [{"name": twin, "durations": {problem.devices[d]: 0.0 for d in problem.allowed[entry]}}]
    data = [edge_row(problem, twin, problem.tasks[j], size) for j, size in problem.succs[entry] if j in inside]
    return sub_problem(problem, tasks, name, extra_tasks=stand_in, extra_edges=data)
