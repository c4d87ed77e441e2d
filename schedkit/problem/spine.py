"""A spine of a task graph: a chain of *pivot* tasks, each a descendant of the one before, and
the windows of tasks between them, which run one after the other in every schedule.

Where every input-to-output path crosses a task (:mod:`schedkit.problem.series_cuts`), the
graph splits into modules exactly. Most graphs without such a cut still have tasks that
almost every task is before or after: an encoder-decoder transformer's layer outputs, which
the encoder's output skips to reach each decoder layer's cross-attention. Take pivots
``v1, ..., vk``, each a descendant of the one before. The *window* of ``v_t`` is ``v_t`` and
the tasks that are descendants of ``v_(t-1)`` and ancestors of ``v_t``; the first window is
``v1`` and its ancestors, the last every descendant of ``vk``. In any schedule whose edges
order their tasks, a task of window ``t`` starts after ``v_(t-1)`` ends and ends by the end
of ``v_t``, and so do the transfers between two tasks of the window: the windows occupy
disjoint stretches of time, one after the other. The makespan is at least the sum, over the
windows, of a lower bound of each window's own problem (the tasks of no window are left
out: a relaxation). :func:`spine` picks the pivots by a dynamic program over the tasks that
leave out few tasks, each window valued by its critical path and its work over the devices'
speeds (an estimate for the choice only: the bounds are the caller's, per window).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> s = spine(p)
>>> [[p.tasks[i] for i in w] for w in s.windows]     # (attn and mlp side by side in the second)
[['embed'], ['attn', 'mlp', 'norm'], ['logits', 'sample']]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from schedkit.problem.problem import Problem

__all__ = ["Spine", "spine", "MAX_TASKS"]

#: No spine on larger graphs: the ancestor and descendant sets are two bit matrices of
#: ``tasks x tasks`` (25 MB each at 5,000 tasks).
MAX_TASKS = 5000
#: A task that leaves more than this share of the tasks in no window is no pivot.
MOST_LEFT_OUT = 0.25
#: Pivots are chosen among at most this many tasks (those that leave out the fewest).
MOST_CANDIDATES = 800


@dataclass(frozen=True)
class Spine:
    """Pivots and their windows.

    Attributes
    ----------
    pivots : list of int
        The pivot tasks, each a descendant of the one before.
    windows : list of list of int
        The tasks of each window, in task order: ``windows[t]`` ends with ``pivots[t]``
        (the last window follows the last pivot). Windows without a task are left out.
    entries : list of int or None
        The pivot whose end opens each window (``None`` for the first): its data to the
        window's tasks leave after the window opens.
    """

    pivots: list[int]
    windows: list[list[int]]
    entries: list[int | None]

    @property
    def covered(self) -> int:
        """Tasks in some window."""
        return sum(len(w) for w in self.windows)


def spine(problem: Problem) -> Spine | None:
    """The spine of ``problem`` of largest estimated worth, or ``None`` (more than
    :data:`MAX_TASKS` tasks, or no task is a pivot).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.from_dict({"devices": [{"name": "a"}], "tasks": [{"name": "x", "work": 1}]})
    >>> s = spine(p)
    >>> s.pivots, s.windows, s.entries
    ([0], [[0]], [None])
    """
    n = len(problem.tasks)
    if n == 0 or n > MAX_TASKS:
        return None
    order = problem.topological_order
    before, after = _closures(problem)
    left_out = n - 1 - before.sum(axis=1) - after.sum(axis=1)
    ranked = sorted((v for v in range(n) if left_out[v] <= MOST_LEFT_OUT * n), key=lambda v: left_out[v])
    if not ranked:
        return None
    position = {v: k for k, v in enumerate(order)}
    candidates = sorted(ranked[:MOST_CANDIDATES], key=position.__getitem__)
    least, speed = _least_durations(problem)
    pivots = _best_chain(problem, order, candidates, before, after, least, speed)
    windows, entries, last = [], [], None
    for v in pivots + [None]:
        inside = after[last].copy() if v is None else before[v].copy()
        if v is not None:
            inside[v] = True
            if last is not None:
                inside &= after[last]
        tasks = np.flatnonzero(inside).tolist()
        if tasks:
            windows.append(tasks)
            entries.append(last)
        last = v
    return Spine(pivots, windows, entries)


def _closures(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """``before[v, u]``: ``u`` is an ancestor of ``v``; ``after[v, w]``: a descendant (the
    problem's closure bit sets as rows of booleans, for the estimate's matrix products)."""
    n = len(problem.tasks)
    width = (n + 7) // 8

    def rows(bit_sets: list[int]) -> np.ndarray:
        packed = np.frombuffer(b"".join(b.to_bytes(width, "little") for b in bit_sets), dtype=np.uint8)
        return np.unpackbits(packed.reshape(n, width), axis=1, count=n, bitorder="little").astype(bool)

    return rows(problem.ancestors), rows(problem.descendants)


def _least_durations(problem: Problem) -> tuple[np.ndarray, float]:
    """Each task's least duration, and the devices' speeds summed, relative to the device
    that is fastest for most tasks (the median ratio of durations): the estimate's divisor."""
    m = len(problem.devices)
    durations = np.full((len(problem.tasks), m), np.inf)
    for i, allowed in enumerate(problem.allowed):
        for d in allowed:
            durations[i, d] = problem.durations[i][d]
    least = durations.min(axis=1)
    reference = int(np.bincount(durations.argmin(axis=1), minlength=m).argmax())
    speed = 0.0
    for d in range(m):
        both = np.isfinite(durations[:, d]) & (durations[:, d] > 0) & (durations[:, reference] > 0)
        if both.any():
            speed += float(np.median(durations[both, reference] / durations[both, d]))
    return least, max(speed, 1.0)


def _best_chain(problem: Problem, order: list[int], candidates: list[int], before: np.ndarray,
                after: np.ndarray, least: np.ndarray, speed: float) -> list[int]:
    """The chain of ``candidates`` (in topological order) of largest estimated worth: each
    window worth the longer of its critical path (least durations) and its work over
    ``speed``."""
    c = len(candidates)
    index = {v: k for k, v in enumerate(candidates)}
    # (longest paths of least durations from each candidate, its own duration left out,
    # one array of all candidates per task)
    path = np.full((len(order), c), -np.inf)
    for v in order:
        for u, _ in problem.preds[v]:
            np.maximum(path[v], path[u] + least[v], out=path[v])
        if v in index:
            path[v, index[v]] = 0.0
    ahead = np.array(problem.heads) + least     # (longest path ending with each task, its duration in)
    behind = np.array(problem.tails)            # (longest path after each task)
    ups = before[candidates].astype(float)
    downs = after[candidates].astype(float)
    own = least[candidates]
    work = (downs * least) @ ups.T + own[None, :]          # (window between candidates a and b)
    between = path[candidates].T                           # (a, b): a's path to b, b's duration in
    worth = np.where(np.isfinite(between), np.maximum(between, work / speed), -np.inf)
    first = np.maximum(ahead[candidates], (ups @ least + own) / speed)
    last = np.maximum(behind[candidates], (downs @ least) / speed)
    # (ties go to fewer pivots: a window's part lets the pivot that opens it sit anywhere, so
    # a split can drop a transfer the whole would pay; tiny: [logits, sample] bounds 4.3163,
    # [logits] and [sample] 4.3)
    best, back = first.copy(), np.full(c, -1)
    for b in range(1, c):
        through = best[:b] + worth[:b, b]
        a = _first_best(through)
        if through[a] > best[b] + 1e-9 * abs(best[b]):
            best[b], back[b] = through[a], a
    b = _first_best(best + last)
    chain = []
    while b >= 0 and math.isfinite(best[b]):
        chain.append(candidates[b])
        b = int(back[b])
    return chain[::-1]


def _first_best(values: np.ndarray) -> int:
    """The first index whose value is the largest, up to rounding (sums in another order)."""
    top = values.max()
    return int(np.flatnonzero(values >= top - 1e-9 * abs(top))[0]) if np.isfinite(top) else int(np.argmax(values))
