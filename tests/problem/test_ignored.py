"""The problem without the collocation groups or memory capacities a formulation ignores
(schedkit.problem.ignored)."""

import pytest

from schedkit import Problem
from schedkit.problem.ignored import without_ignored


def _grouped_and_pinned():
    p = Problem.load("examples/hetero20.yaml")     # (devices with memory capacities)
    data = p.spec.model_dump(exclude_none=True)
    for k, task in enumerate(data["tasks"][:6]):
        task["colocate"] = f"g{k % 2}"
    k = next(i for i, allowed in enumerate(p.allowed) if i >= 6 and len(allowed) > 1)   # (in no group)
    data["tasks"][k]["pin"] = [p.devices[p.allowed[k][-1]]]
    return Problem.from_dict(data), k


@pytest.mark.parametrize("groups, capacities", [(True, False), (False, True), (True, True)])
def test_what_is_asked_goes_and_everything_else_stays(groups, capacities):
    p, pinned = _grouped_and_pinned()
    assert len(p.colocate_groups) == 2 and len(p.allowed[pinned]) == 1
    assert any(d.memory is not None for d in p.spec.devices)
    q = without_ignored(p, groups=groups, capacities=capacities)
    assert (q.colocate_groups == {}) == groups and len(q.colocate_groups) == (0 if groups else 2)
    assert all(d.memory is None for d in q.spec.devices) == capacities
    assert q.allowed == p.allowed      # (the pin stays)
    assert q.tasks == p.tasks and q.edges == p.edges and q.durations == p.durations


def test_a_problem_without_either_is_returned_as_it_is():
    p = Problem.load("examples/tiny.yaml")
    assert without_ignored(p, groups=True, capacities=False) is p
    q = without_ignored(p, groups=True, capacities=True)
    assert without_ignored(q, groups=True, capacities=True) is q
