"""The list-scheduling base class: a priority rule plus a device rule."""

from helpers.method_contract import example
from schedkit.problem.bounds import lower_bound
from schedkit.heuristics.components import order_priority
from schedkit.timing import bfs_order
from schedkit.heuristics.list_scheduling import ListSchedulingMethod
from schedkit import Problem, solve


class LastDevice(ListSchedulingMethod):
    """Every task on its highest-index candidate, in breadth-first order."""

    name = "last-device"

    def priority(self, problem):
        return order_priority(bfs_order(problem))

    def rule(self, problem):
        return lambda i, options: max(o[0] for o in options)


def test_composes_rules():
    p = example("topcuoglu2002.json")
    s = LastDevice().solve(p)
    assert {r.device for r in s.tasks} == {"p3"}
    assert s.makespan == sum(p.durations[i][2] for i in range(len(p.tasks)))
    assert s.status == "heuristic" and s.bound == lower_bound(p)


def test_insertion_option():
    assert LastDevice(insertion=False).options.insertion is False


def test_a_nearly_full_instance_gets_a_schedule_that_keeps_room():
    """Greedy choices fill the devices; the list schedulers then keep room for later tasks."""
    import pytest

    from schedkit import Problem, ProblemError, solve
    from schedkit.timing import list_schedule

    p = Problem.load("examples/moirai_example1.json")      # memory 44 of 44: an exact packing
    with pytest.raises(ProblemError, match="no memory left"):
        list_schedule(p, [float(-i) for i in range(len(p.tasks))])
    for name in ("heft", "met", "greedy"):
        s = solve(p, name)                                   # validated on memory too
        used = {}
        for row in s.tasks:
            used[row.device] = used.get(row.device, 0.0) + p.task_memory[p.task_index[row.task]]
        assert all(used[d] <= p.device_memory[p.device_index[d]] for d in used)


def test_the_retry_keeps_a_collocation_group_on_a_device_all_its_tasks_may_use():
    # t0 is fastest on d0, which its group mate t1 cannot use: the first pass fails there,
    # the retry must not put t0 on d0 either.
    p = Problem.from_dict({
        "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
        "links": [{"src": "d0", "dst": "d1", "bandwidth": 1}, {"src": "d0", "dst": "d2", "bandwidth": 1},
                  {"src": "d1", "dst": "d2", "bandwidth": 1}],
        "tasks": [{"name": "t0", "durations": {"d0": 1, "d1": 5, "d2": 6}, "colocate": "g"},
                  {"name": "t1", "durations": {"d1": 1, "d2": 1}, "colocate": "g"}],
        "edges": [{"src": "t0", "dst": "t1", "size": 1}]})
    for method in ("heft", "met", "greedy"):
        s = solve(p, method)
        assert [(r.task, r.device) for r in s.tasks] == [("t0", "d1"), ("t1", "d1")]
        assert s.makespan == 6


def test_the_retry_keeps_a_task_next_to_its_pinned_consumer_when_no_link_joins_them():
    # t1 is as fast on d0 as on d1; its consumer t4 is pinned to d1 and no link joins d0 and d1.
    p = Problem.from_dict({
        "devices": [{"name": "d0"}, {"name": "d1"}],
        "tasks": [{"name": "t0", "durations": {"d0": 1}}, {"name": "t1", "durations": {"d0": 1, "d1": 1}},
                  {"name": "t4", "durations": {"d0": 1, "d1": 1}, "pin": ["d1"]}],
        "edges": [{"src": "t1", "dst": "t4", "size": 1.0}]})
    for method in ("heft", "met", "greedy"):
        s = solve(p, method)
        assert {r.task: r.device for r in s.tasks}["t1"] == "d1"
