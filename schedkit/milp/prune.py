"""Choices no schedule better than the incumbent can make, left out of the model.

A task that would run longer on a device than the whole incumbent schedule lasts cannot
run there in any schedule at least as short: its column only widens the model's
coefficient range (a duration of 1e15 beside durations of 1 made HiGHS reject the model)
and the search. :func:`pruned_problem` pins such tasks to their other devices. The
optimum is unchanged (it is never longer than the incumbent), so a bound proved on the
pruned problem holds for the original, and its schedules are schedules of the original.

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
...                        "tasks": [{"name": "t", "durations": {"a": 1e15, "b": 1}}]})
>>> pruned_problem(p, horizon=1.0).allowed
[(1,)]
>>> pruned_problem(p, horizon=2e15) is p
True
"""

from __future__ import annotations

import math

from schedkit.problem import Problem

__all__ = ["pruned_problem"]

#: Relative slack on the horizon: a choice exactly as long as the incumbent stays.
SLACK = 1e-9


def pruned_problem(problem: Problem, horizon: float | None) -> Problem:
    """``problem`` without the (task, device) choices longer than ``horizon`` (the makespan of
    a valid schedule); ``problem`` itself when there is none (or a workload of several inputs,
    whose batch durations depend on the batch)."""
    if horizon is None or not math.isfinite(horizon) or problem.inputs > 1:
        return problem
    cut = {}
    for i, allowed in enumerate(problem.allowed):
        keep = [d for d in allowed if problem.durations[i][d] <= horizon * (1 + SLACK)]
        if keep and len(keep) < len(allowed):
            cut[i] = keep
    if not cut:
        return problem
    data = problem.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for i, keep in cut.items():
        data["tasks"][i]["pin"] = [problem.devices[d] for d in keep]
    return Problem.from_dict(data)
