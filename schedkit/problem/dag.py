"""Checks of a task graph given as two arrays of task indices: edges repeated, cycles.

The problem file's checks (:mod:`schedkit.problem.spec` on a list of edges,
:mod:`schedkit.problem.bulk` on columns) run these on 1.8 million edges at 60,000 tasks:
in numpy, and in Python over plain ints where a walk is needed, not over names.

Examples
--------
>>> import numpy as np
>>> acyclic(np.array([0, 1]), np.array([1, 2]), 3), acyclic(np.array([0, 2, 1]), np.array([1, 1, 2]), 3)
(True, False)
>>> repeated(np.array([3, 1, 3]))
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["acyclic", "repeated"]


def repeated(keys: np.ndarray) -> bool:
    """Whether a value occurs twice in ``keys`` (sorted, each compared with its neighbour:
    ``np.unique`` costs a hundred times more on 1.8 million keys).

    Examples
    --------
    >>> repeated(np.array([2, 0, 1]))
    False
    """
    keys = np.sort(keys)
    return bool((keys[1:] == keys[:-1]).any())


def acyclic(src: np.ndarray, dst: np.ndarray, n: int) -> bool:
    """Whether the edges ``src[e] -> dst[e]`` among tasks ``0 .. n-1`` make no cycle.

    Edges that all go forward in task order make none (one comparison each); else
    Kahn's algorithm, over int lists.

    Examples
    --------
    >>> acyclic(np.array([1]), np.array([0]), 2), acyclic(np.array([0, 1]), np.array([1, 0]), 2)
    (True, False)
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if (src < dst).all():
        return True
    targets = dst[np.argsort(src, kind="stable")].tolist()
    bounds = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))).tolist()
    indegree = np.bincount(dst, minlength=n).tolist()
    ready = [i for i in range(n) if not indegree[i]]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in targets[bounds[i]:bounds[i + 1]]:
            indegree[j] -= 1
            if not indegree[j]:
                ready.append(j)
    return done == n
