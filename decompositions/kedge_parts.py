"""The problems ``kedge`` cuts out of a large one: its modules' edges read off the arrays.

:func:`~schedkit.reductions.subproblem.sub_problem` scans every edge of the problem for
each part it makes: on 100,000 tasks and hundreds of parts, that is most of the time.
Here the edges into each module are found once (:func:`edges_into`, numpy, in file order,
so that a part lists its edges as ``sub_problem`` would) and read one by one from the
problem's arrays (:func:`edge_at`: a bulk-loaded problem never builds its edge list).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> into = edges_into(p, [[0, 1, 2, 3], [4, 5]])
>>> q = plain_part(p, [4, 5], into[1], "tiny/tail")
>>> q.tasks, q.edges
(['logits', 'sample'], [(0, 1, 100000.0)])
"""

from __future__ import annotations

import numpy as np

from schedkit.problem import Problem
from schedkit.reductions.subproblem import edge_row, spec_data, task_row

__all__ = ["edges_into", "edge_at", "plain_part"]


def edges_into(problem: Problem, modules: list[list[int]]) -> list[list[int]]:
    """Per module, the edges (indices in file order) whose destination is in it.

    Examples
    --------
    >>> from schedkit import Problem
    >>> edges_into(Problem.load("examples/tiny.yaml"), [[0, 1, 2, 3], [4, 5]])
    [[0, 1, 2, 3], [4, 5]]
    """
    a = problem.arrays
    label = np.full(len(problem.tasks), len(modules), dtype=np.int64)
    for t, tasks in enumerate(modules):
        label[tasks] = t
    target = label[a.edge_dst]
    order = np.argsort(target, kind="stable")
    cuts = np.searchsorted(target[order], np.arange(len(modules) + 1))
    return [order[cuts[t]:cuts[t + 1]].tolist() for t in range(len(modules))]


def edge_at(problem: Problem, k: int) -> tuple[int, int, float]:
    """Edge ``k`` (file order) as :attr:`~schedkit.problem.Problem.edges` holds it.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> edge_at(p, 4) == p.edges[4]
    True
    """
    a = problem.arrays
    if a.edge_payload[k]:  # (its own transfer times: only in a problem whose edge list exists)
        return problem.edges[k]
    return int(a.edge_src[k]), int(a.edge_dst[k]), float(a.edge_size[k])


def plain_part(problem: Problem, tasks: list[int], edges: list[int], name: str) -> Problem:
    """``tasks`` alone (every device and link, full capacities) with those of ``edges``
    (indices, in file order) that join two of them."""
    inside = set(tasks)
    rows = [task_row(problem, i) for i in sorted(inside)]
    inner = [edge_row(problem, problem.tasks[i], problem.tasks[j], size)
             for i, j, size in (edge_at(problem, k) for k in edges) if i in inside and j in inside]
    data = spec_data(problem, platform=True)
    return Problem.from_dict({"format": data["format"], "name": name, "devices": data["devices"],
                              "links": data.get("links", []), "tasks": rows, "edges": inner})
