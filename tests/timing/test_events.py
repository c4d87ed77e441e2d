"""The event simulator: semantics, priorities, determinism and mapping checks."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError
from schedkit.timing import SimState, arrival, simulate
from schedkit.problem.mapping import check_mapping
from schedkit.generators import erdos_renyi, layered
from schedkit.timing import to_schedule


@pytest.fixture(scope="module")
def tiny():
    return Problem.load("examples/tiny.yaml")


def ends(p, device_of, start):
    return [start[i] + p.durations[i][device_of[i]] for i in range(len(start))]


def test_tiny_fifo_by_hand(tiny):
    device_of = [0, 0, 0, 0, 0, 1]
    start = simulate(tiny, device_of)
    # embed 0-0.4, attn 0.4-1.6, mlp 1.6-3.1, norm 3.1-3.3, logits 3.3-4.2, then the
    # logits (1e5) reach the cpu after 1e5 / 1.6e7 + 0.01.
    assert start == pytest.approx([0.0, 0.4, 1.6, 3.1, 3.3, 4.2 + 1e5 / 1.6e7 + 0.01])
    to_schedule(tiny, device_of, start, "sim").validate(tiny)


def test_static_priority_and_ties():
    p = Problem.from_dict({"devices": [{"name": "d"}],
                           "tasks": [{"name": n, "work": 1} for n in "abc"]})
    assert simulate(p, [0, 0, 0]) == [0.0, 1.0, 2.0]                 # FIFO ties: index
    assert simulate(p, [0, 0, 0], [0.0, 0.0, 0.0]) == [0.0, 1.0, 2.0]  # equal: index
    assert simulate(p, [0, 0, 0], [1.0, 3.0, 2.0]) == [2.0, 0.0, 1.0]


def test_fifo_is_arrival_order():
    # b's input arrives late (remote), c's early: c goes first although b has the lower index.
    p = Problem.from_dict({
        "devices": [{"name": "u"}, {"name": "v"}],
        "links": [{"src": "u", "dst": "v", "bandwidth": 1}],
        "tasks": [{"name": "a", "work": 1}, {"name": "b", "work": 1}, {"name": "c", "work": 1},
                  {"name": "x", "work": 5}],
        "edges": [{"src": "a", "dst": "b", "size": 3}, {"src": "a", "dst": "c", "size": 0},
                  {"src": "x", "dst": "c", "size": 0}]})
    start = simulate(p, [0, 1, 1, 1])
    # a on u ends at 1; b ready at 1 + 3 = 4; x on v runs 0-5; c ready at 5; v: x, then b, then c.
    assert start == [0.0, 5.0, 6.0, 0.0]


def test_non_delay_device_waits_for_data_not_for_priority():
    p = Problem.from_dict({
        "devices": [{"name": "u"}, {"name": "v"}],
        "links": [{"src": "u", "dst": "v", "bandwidth": 1, "latency": 1}],
        "tasks": [{"name": "a", "work": 2}, {"name": "b", "work": 1}, {"name": "c", "work": 1}],
        "edges": [{"src": "a", "dst": "b", "size": 2}]})
    # b (remote input, ready at 2 + 2 + 1 = 5) has top priority, c is ready at 0: c runs first.
    assert simulate(p, [0, 1, 1], [0.0, 10.0, 1.0]) == [0.0, 5.0, 0.0]


def test_zero_durations_and_sizes():
    p = Problem.from_dict({
        "devices": [{"name": "u"}, {"name": "v"}],
        "links": [{"src": "u", "dst": "v", "bandwidth": 1}],
        "tasks": [{"name": "a", "work": 0}, {"name": "b", "work": 0}, {"name": "c", "work": 1}],
        "edges": [{"src": "a", "dst": "b", "size": 0}, {"src": "b", "dst": "c", "size": 2}]})
    start = simulate(p, [0, 1, 0])
    assert start == [0.0, 0.0, 2.0]
    to_schedule(p, [0, 1, 0], start, "sim").validate(p)


def test_dynamic_priority_sees_state(tiny):
    seen = []

    def rule(i, state):
        assert isinstance(state, SimState)
        seen.append((state.time, i, state.idle(1)))
        return -i

    device_of = [0, 0, 0, 0, 0, 1]
    start = simulate(tiny, device_of, rule)
    assert start == simulate(tiny, device_of, [-float(i) for i in range(6)])
    assert (0.4, 1, True) in seen and (0.4, 2, True) in seen     # attn and mlp compared at 0.4


def test_dynamic_and_static_agree_on_generated_graph():
    p = Problem.from_dict(layered(6, 8, 0.3, 0.2, devices=4, seed=3))
    device_of = [i % 4 for i in range(len(p.tasks))]
    prio = [((i * 7919) % 101) / 7.0 for i in range(len(p.tasks))]
    assert simulate(p, device_of, prio) == simulate(p, device_of, lambda i, s: prio[i])


def test_state_counts_unstarted_predecessors():
    p = Problem.from_dict({"devices": [{"name": "d"}],
                           "tasks": [{"name": n, "work": 1} for n in "abc"],
                           "edges": [{"src": "a", "dst": "c"}, {"src": "b", "dst": "c"}]})
    log = {}

    def rule(i, state):
        log[(state.time, i)] = list(state.unstarted_preds)
        return 0.0

    simulate(p, [0, 0, 0], rule)
    assert log[(0.0, 0)] == [0, 0, 2]
    assert log[(1.0, 1)] == [0, 0, 1]       # a started, b not yet


def test_mapping_errors(tiny):
    with pytest.raises(ProblemError, match="6 tasks"):
        simulate(tiny, [0, 0])
    with pytest.raises(ProblemError, match="task 'sample' cannot run on device gpu0"):
        simulate(tiny, [0] * 6)
    with pytest.raises(ProblemError, match="unknown device 7"):
        check_mapping(tiny, [0, 0, 0, 0, 0, 7])
    with pytest.raises(ProblemError, match="priority has 2 entries"):
        simulate(tiny, [0, 0, 0, 0, 0, 1], [1.0, 2.0])
    mem = Problem.from_dict({"devices": [{"name": "a", "memory": 3}, {"name": "b"}],
                             "tasks": [{"name": "x", "work": 1, "memory": 2},
                                       {"name": "y", "work": 1, "memory": 2}]})
    with pytest.raises(ProblemError, match="device a: .* need 4 of memory, capacity 3"):
        simulate(mem, [0, 0])
    group = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                               "tasks": [{"name": "x", "work": 1, "colocate": "g"},
                                         {"name": "y", "work": 1, "colocate": "g"}]})
    with pytest.raises(ProblemError, match="collocation group 'g' is split over a, b"):
        simulate(group, [0, 1])
    islands = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                                 "tasks": [{"name": "x", "work": 1}, {"name": "y", "work": 1}],
                                 "edges": [{"src": "x", "dst": "y", "size": 1}]})
    with pytest.raises(ProblemError, match="edge x->y: no link path from a to b"):
        simulate(islands, [0, 1])
    assert simulate(islands, [1, 1]) == [0.0, 1.0]


@st.composite
def mapped_problem(draw):
    seed = draw(st.integers(0, 10_000))
    if draw(st.booleans()):
        data = erdos_renyi(draw(st.integers(1, 25)), draw(st.sampled_from([0.1, 0.3, 0.6])),
                           devices=draw(st.integers(1, 4)), seed=seed)
    else:
        data = layered(draw(st.integers(1, 5)), draw(st.integers(1, 5)), 0.5, 0.3,
                       devices=draw(st.integers(1, 4)), seed=seed)
    p = Problem.from_dict(data)
    device_of = [draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
    kind = draw(st.sampled_from(["fifo", "static", "dynamic"]))
    prio = [draw(st.sampled_from([0.0, 1.0, 2.0])) for _ in p.tasks]
    priority = {"fifo": None, "static": prio, "dynamic": lambda i, s: prio[i]}[kind]
    return p, device_of, priority, kind, prio


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mapped_problem())
def test_random_simulations_are_valid_non_delay_and_follow_priority(case):
    p, device_of, priority, kind, prio = case
    start = simulate(p, device_of, priority)
    assert start == simulate(p, device_of, priority)           # deterministic
    to_schedule(p, device_of, start, "sim").validate(p)
    end = ends(p, device_of, start)
    ready = [max((end[q] + p.comm_time(s, device_of[q], device_of[i]) for q, s in p.preds[i]),
                 default=0.0) for i in range(len(p.tasks))]
    tol = 1e-9
    for i in range(len(p.tasks)):
        d = device_of[i]
        same = [j for j in range(len(p.tasks)) if device_of[j] == d and j != i]
        # Non-delay: between i's readiness and its start, the device is always busy.
        if start[i] > ready[i] + tol:
            t = ready[i]
            for j in sorted(same, key=lambda k: start[k]):
                if start[j] <= t + tol and end[j] > t:
                    t = end[j]
            assert t >= start[i] - tol
        # The device chose i over every task that was ready and waiting at that moment.
        if kind != "fifo":
            for j in same:
                if ready[j] <= start[i] + tol and start[j] > start[i] + tol:
                    assert (prio[i], -i) >= (prio[j], -j)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mapped_problem())
def test_inputs_arrive_by_the_one_transfer_rule(case):
    # Exact, no tolerance: a task starts when its last input arrives (arrival()) or when
    # its device becomes free, never earlier.
    p, device_of, priority, _, _ = case
    start = simulate(p, device_of, priority)
    end = ends(p, device_of, start)
    for i in range(len(p.tasks)):
        d = device_of[i]
        ready = max((arrival(p, end[q], size, device_of[q], d) for q, size in p.preds[i]),
                    default=0.0)
        assert start[i] >= ready
        assert start[i] == ready or any(end[j] == start[i] for j in range(len(p.tasks))
                                        if j != i and device_of[j] == d)
