"""The problem without collocation groups (schedkit.problem.without_collocation)."""

from schedkit import Problem
from schedkit.problem.without_collocation import without_collocation


def test_groups_go_and_everything_else_stays():
    p = Problem.load("examples/hetero20.yaml")
    data = p.spec.model_dump(exclude_none=True)
    for k, task in enumerate(data["tasks"][:6]):
        task["colocate"] = f"g{k % 2}"
    k = next(i for i, allowed in enumerate(p.allowed) if i >= 6 and len(allowed) > 1)   # (in no group)
    data["tasks"][k]["pin"] = [p.devices[p.allowed[k][-1]]]
    grouped = Problem.from_dict(data)
    assert len(grouped.colocate_groups) == 2 and list(grouped.allowed[k]) == [p.allowed[k][-1]]
    q = without_collocation(grouped)
    assert q.colocate_groups == {} and q.allowed == grouped.allowed      # (the pin stays)
    assert q.tasks == grouped.tasks and q.edges == grouped.edges and q.durations == grouped.durations
    assert without_collocation(p) is p
