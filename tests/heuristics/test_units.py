"""List heuristics place a collocation group as one unit and look ahead on tight memory.

Both instances are small enough for the MILP to prove the optimum, which the list
heuristics must reach (before these rules HEFT was 4x off on the first, 1.5x on the second).
"""

import pytest

from schedkit import Problem, solve
from schedkit.heuristics.reservation import MemoryLookahead
from schedkit.timing import list_schedule

LIST_METHODS = ("heft", "greedy", "met")


def weights_and_operators() -> Problem:
    """MSR's BERT operator graphs in small: each operator is collocated with its weight.

    A weight costs nothing anywhere, so when it is placed first every device finishes it
    at once; judged alone it went to the lowest index, the slow cpu, and its operator, ten
    times slower there, with it.
    """
    free = {"cpu": 0, "acc0": 0, "acc1": 0}
    operator = {"cpu": 20, "acc0": 2, "acc1": 2}
    return Problem.from_dict({
        "name": "weights_and_operators",
        "devices": [{"name": "cpu"}, {"name": "acc0", "memory": 10}, {"name": "acc1", "memory": 10}],
        "links": [{"src": "cpu", "dst": "acc0", "bandwidth": 1}, {"src": "cpu", "dst": "acc1", "bandwidth": 1},
                  {"src": "acc0", "dst": "acc1", "bandwidth": 1}],
        "tasks": [{"name": "input", "durations": {"cpu": 1}},
                  {"name": "w1", "durations": free, "memory": 4, "colocate": "layer1"},
                  {"name": "op1", "durations": operator, "memory": 1, "colocate": "layer1"},
                  {"name": "w2", "durations": free, "memory": 4, "colocate": "layer2"},
                  {"name": "op2", "durations": operator, "memory": 1, "colocate": "layer2"}],
        "edges": [{"src": "input", "dst": "op1", "size": 1}, {"src": "w1", "dst": "op1", "size": 4},
                  {"src": "op1", "dst": "op2", "size": 1}, {"src": "w2", "dst": "op2", "size": 4}]})


def pinned_room() -> Problem:
    """Two small tasks and a big one that only the two limited gpus run.

    By earliest finish, ``b`` goes to g1 (1.5 beats 2 behind ``a`` on g0), and ``c`` then
    fits nowhere; the fallback reservation kept ``c`` on g0 and sent ``a`` and ``b`` to the
    slower g1 (3). Looking ahead, ``b`` stays behind ``a`` on g0 and ``c`` gets g1 (2).
    """
    fast_on_g0 = {"g0": 1, "g1": 1.5, "cpu": 10}
    return Problem.from_dict({
        "name": "pinned_room",
        "devices": [{"name": "g0", "memory": 4}, {"name": "g1", "memory": 4}, {"name": "cpu"}],
        "tasks": [{"name": "a", "durations": fast_on_g0, "memory": 2},
                  {"name": "b", "durations": fast_on_g0, "memory": 2},
                  {"name": "c", "durations": {"g0": 1, "g1": 1}, "memory": 4}]})


@pytest.fixture(scope="module")
def optima():
    out = {}
    for make in (weights_and_operators, pinned_room):
        p = make()
        s = solve(p, "milp")
        assert s.status == "optimal"
        out[p.name] = s.makespan
    return out


@pytest.mark.parametrize("method", LIST_METHODS)
def test_group_placed_by_its_whole_cost_reaches_the_optimum(method, optima):
    p = weights_and_operators()
    s = solve(p, method)
    s.validate(p)
    assert s.makespan == pytest.approx(optima["weights_and_operators"])   # 6: both layers on one acc
    assert {r.device for r in s.tasks if r.task != "input"} != {"cpu"}


@pytest.mark.parametrize("method", LIST_METHODS)
def test_memory_lookahead_reaches_the_optimum(method, optima):
    p = pinned_room()
    s = solve(p, method)
    s.validate(p)
    assert s.makespan == pytest.approx(optima["pinned_room"])   # 2


def test_annealing_starts_from_the_group_aware_heft(optima):
    p = weights_and_operators()
    assert solve(p, "annealing", iterations=50, seed=0).makespan == pytest.approx(optima["weights_and_operators"])


def test_a_group_takes_its_memory_at_once():
    # w opens the group on acc (4 of 5); x, ready before op, must not take the last unit.
    p = Problem.from_dict({
        "devices": [{"name": "cpu"}, {"name": "acc", "memory": 5}],
        "tasks": [{"name": "w", "durations": {"cpu": 0, "acc": 0}, "memory": 4, "colocate": "g"},
                  {"name": "x", "durations": {"cpu": 5, "acc": 1}, "memory": 1},
                  {"name": "op", "durations": {"cpu": 9, "acc": 1}, "memory": 1, "colocate": "g"}],
        "edges": [{"src": "x", "dst": "op", "size": 0}]})
    device_of, _ = list_schedule(p, [3.0, 2.0, 1.0])
    assert [p.devices[d] for d in device_of] == ["acc", "cpu", "acc"]


def test_lookahead_only_where_memory_confines_a_unit():
    assert MemoryLookahead.build(weights_and_operators()) is None   # the cpu is unlimited
    assert MemoryLookahead.build(pinned_room()) is not None


def test_lookahead_keeps_every_completable_choice():
    # Two gpus of 4, two tasks of 2 and one of 4 confined to them: only a spread that starves c
    # is refused.
    p = Problem.from_dict({
        "devices": [{"name": "g0", "memory": 4}, {"name": "g1", "memory": 4}],
        "tasks": [{"name": "a", "work": 1, "memory": 2}, {"name": "b", "work": 1, "memory": 2},
                  {"name": "c", "work": 1, "memory": 4}]})
    look = MemoryLookahead.build(p)
    assert look.candidates(0, [0, 1]) == [0, 1]
    look.commit(0, 0)
    assert look.candidates(1, [0, 1]) == [0]          # on g1 it would leave c no device
    look.commit(1, 0)
    assert look.candidates(2, [1]) == [1]             # (the scheduler offers only devices that hold c)
