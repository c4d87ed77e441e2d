"""Per-device schedulers of Mayer et al. (2017): which ready task an idle device runs next.

Each rule takes the problem and a fixed mapping ``device_of`` and returns a priority
for :func:`schedkit.timing.events.simulate` (higher first; ties to the lower task index):

``fifo``
    First in, first out: the task whose last input arrived first (``None`` for the
    simulator).
``pct``
    Largest remaining path time first, under the actual placement:
    ``pct[i] = d_i + max over successors j of (comm(i, j) + pct[j])``, where ``d_i`` is
    the duration of ``i`` on its mapped device and ``comm(i, j)`` the actual transfer
    time between the devices of ``i`` and ``j`` (``problem.comm_time``: 0 on one device).
    A static priority.
``msr``
    A successor score, evaluated when the device chooses (a dynamic priority). For a
    ready task ``i`` on device ``u``, each successor ``j`` on device ``v`` adds
    ``successor``; when ``v != u`` it also adds ``remote`` (its data must travel); when
    moreover ``i`` is the last predecessor of ``j`` that has not started, it adds
    ``unlock`` (starting ``i`` is what ``j`` waits for), plus ``idle`` when ``v`` is idle
    at that moment (``j`` would end an idle period). Ties go to the larger ``pct``, then
    to the lower index. Defaults: ``successor = remote = unlock = 1``, ``idle = 5``.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.timing import simulate
>>> p = Problem.load("examples/tiny.yaml")
>>> device_of = [0, 0, 0, 0, 0, 1]
>>> [round(v, 3) for v in pct(p, device_of)]
[3.316, 2.616, 2.916, 1.416, 1.216, 0.3]
>>> simulate(p, device_of, pct(p, device_of))[:3]    # mlp (longer path) before attn
[0.0, 1.9, 0.4]
"""

from __future__ import annotations

from typing import Any, Callable

from schedkit.problem import Problem
from schedkit.timing import SimState

__all__ = ["SCHEDULERS", "fifo", "pct", "msr"]


def fifo(problem: Problem, device_of: list[int]) -> None:
    """FIFO: ready tasks run in the order their inputs arrived (the simulator's ``None``).

    Examples
    --------
    >>> from schedkit import Problem
    >>> fifo(Problem.load("examples/tiny.yaml"), [0, 0, 0, 0, 0, 1]) is None
    True
    """
    return None


def pct(problem: Problem, device_of: list[int]) -> list[float]:
    """Remaining path time of each task under the mapping (longest path to an exit).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> pct(p, [0, 0, 0, 0, 0, 1])[-1]      # sample: its own duration on the cpu
    0.3
    """
    p = problem
    dev = device_of
    comm_time = p.comm_time
    value = [0.0] * len(p.tasks)
    for i in reversed(p.topological_order):
        u = dev[i]
        best = 0.0
        for j, size in p.succs[i]:
            t = value[j] + comm_time(size, u, dev[j])
            if t > best:
                best = t
        value[i] = p.durations[i][u] + best
    return value


def msr(problem: Problem, device_of: list[int], *, successor: float = 1.0, remote: float = 1.0,
        unlock: float = 1.0, idle: float = 5.0) -> Callable[[int, SimState], Any]:
    """MSR: a dynamic priority scoring what starting a task does for its successors.

    Parameters
    ----------
    problem : Problem
    device_of : list of int
    successor, remote, unlock, idle : float
        Weights of the score (see the module docstring).

    Returns
    -------
    callable
        ``rule(task, state) -> (score, pct)`` for :func:`schedkit.timing.events.simulate`.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.timing import SimState
    >>> p = Problem.load("examples/tiny.yaml")
    >>> rule = msr(p, [0, 0, 0, 0, 1, 1])
    >>> state = SimState(p, [0, 0, 0, 0, 1, 1])
    >>> rule(3, state)[0]       # norm -> logits on the idle cpu: 1 + 1 + 1 + 5
    8.0
    """
    p = problem
    dev = list(device_of)
    tie = pct(p, dev)
    succs = p.succs

    def rule(i: int, state: SimState) -> tuple[float, float]:
        u = dev[i]
        score = 0.0
        running = state.running
        waiting = state.unstarted_preds
        for j, _ in succs[i]:
            score += successor
            v = dev[j]
            if v != u:
                score += remote
                if waiting[j] == 1:
                    score += unlock
                    if running[v] < 0:
                        score += idle
        return score, tie[i]

    return rule


SCHEDULERS: dict[str, Callable[..., Any]] = {"fifo": fifo, "pct": pct, "msr": msr}
"""Scheduler name to function ``(problem, device_of, **options) -> priority``."""
