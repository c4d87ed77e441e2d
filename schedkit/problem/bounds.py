"""Lower bounds on the makespan, valid for every schedule of a problem.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> round(critical_path_bound(p), 3), round(load_bound(p), 3)
(3.3, 2.25)
>>> lower_bound(p) == max(critical_path_bound(p), load_bound(p), device_bound(p))
True
"""

from __future__ import annotations

from schedkit.problem.problem import Problem


def critical_path_bound(problem: Problem) -> float:
    """Longest path of minimum durations, ignoring communication."""
    p = problem
    return max(p.heads[i] + p.min_duration[i] + p.tails[i] for i in range(len(p.tasks)))


def load_bound(problem: Problem) -> float:
    """Total minimum work spread evenly over the devices any task may use."""
    used = {d for allowed in problem.allowed for d in allowed}
    return sum(problem.min_duration) / len(used)


def device_bound(problem: Problem) -> float:
    """One-device bound: the tasks bound to a device run one after another on it.

    For every device, the tasks that may run only there take at least the
    smallest head among them, plus their durations, plus the smallest tail.
    """
    best = 0.0
    for d in range(len(problem.devices)):
        mine = [i for i, allowed in enumerate(problem.allowed) if allowed == (d,)]
        if mine:
            best = max(best, min(problem.heads[i] for i in mine)
                       + sum(problem.durations[i][d] for i in mine)
                       + min(problem.tails[i] for i in mine))
    return best


def per_task_bounds(problem: Problem) -> list[float]:
    """For each task, the least makespan of any schedule: head + minimum duration + tail."""
    p = problem
    return [p.heads[i] + p.min_duration[i] + p.tails[i] for i in range(len(p.tasks))]


def lower_bound(problem: Problem) -> float:
    """The best of the bounds above."""
    return max(critical_path_bound(problem), load_bound(problem), device_bound(problem))
