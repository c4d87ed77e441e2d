"""Transfers on channel and port timelines: every timing engine books them so that no two
transfers hold one channel or port at once, each leaves after its source ends, lasts its
transfer time and arrives before its consumer starts (checked here by a reference written
from the semantics, not by the blocks)."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from helpers.transfer_reference import congestion_errors

from schedkit import Problem, ProblemError
from schedkit.numerics import time_tolerance
from schedkit.problem.mapping import is_feasible_mapping
from schedkit.testing.strategies import problems
from schedkit.timing import (OrderedTiming, TimingRules, Transfers, bfs_order, device_orders, fixed_order_times,
                             list_schedule, retime, simulate, to_schedule)

RESOURCES = ("channel", "port", "both")


def fork():
    """a on g0 feeds b and c on g1: both transfers leave g0 at once without congestion."""
    return Problem.from_dict({
        "devices": [{"name": "g0"}, {"name": "g1"}],
        "links": [{"src": "g0", "dst": "g1", "bandwidth": 1}],
        "tasks": [{"name": "a", "durations": {"g0": 1}}, {"name": "b", "durations": {"g1": 1}},
                  {"name": "c", "durations": {"g1": 1}}],
        "edges": [{"src": "a", "dst": "b", "size": 2}, {"src": "a", "dst": "c", "size": 3}]})


def test_without_congestion_both_transfers_leave_when_the_source_ends():
    p = fork()
    _, start = list_schedule(p, [3.0, 2.0, 1.0])
    s = to_schedule(p, [0, 1, 1], start, "free")
    assert [(t.start, t.end) for t in s.transfers] == [(1.0, 3.0), (1.0, 4.0)]
    assert congestion_errors(p, s, "port")           # the g0 send port is held twice


@pytest.mark.parametrize("resource", RESOURCES)
def test_list_scheduling_serialises_the_transfers(resource):
    p = fork()
    moves = Transfers(p, resource)
    device_of, start = list_schedule(p, [3.0, 2.0, 1.0], transfers=moves)
    s = to_schedule(p, device_of, start, "congested", moves)
    assert [(t.start, t.end) for t in s.transfers] == [(1.0, 3.0), (3.0, 6.0)]
    assert start == [0.0, 3.0, 6.0] and s.makespan == 7.0
    assert congestion_errors(p, s, resource) == []


def test_separate_channels_do_not_congest_but_a_shared_one_does():
    data = {"devices": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "links": [{"src": "a", "dst": "b", "bandwidth": 1}, {"src": "a", "dst": "c", "bandwidth": 1}],
            "tasks": [{"name": "s", "durations": {"a": 1}}, {"name": "x", "durations": {"b": 1}},
                      {"name": "y", "durations": {"c": 1}}],
            "edges": [{"src": "s", "dst": "x", "size": 2}, {"src": "s", "dst": "y", "size": 2}]}
    p = Problem.from_dict(data)
    for resource, second in (("channel", (1.0, 3.0)), ("port", (3.0, 5.0))):
        moves = Transfers(p, resource)
        list_schedule(p, [3.0, 2.0, 1.0], transfers=moves)
        assert moves.booked[0, 2] == second        # the a->c channel is its own; the a port is not
    for link in data["links"]:
        link["channel"] = "nic"
    shared = Problem.from_dict(data)
    moves = Transfers(shared, "channel")
    list_schedule(shared, [3.0, 2.0, 1.0], transfers=moves)
    assert moves.booked[0, 2] == (3.0, 5.0)


def test_a_transfer_fills_an_earlier_gap_on_its_resources():
    p = fork()
    moves = Transfers(p, "port")
    assert moves.book(0, 2, 3.0, 0, 1, 5.0) == (5.0, 8.0)
    assert moves.book(0, 1, 2.0, 0, 1, 1.0) == (1.0, 3.0)    # before the other, in the gap
    assert moves.book(9, 9, 2.0, 0, 1, 4.0) == (8.0, 10.0)   # the gap [3, 5) is too short


def test_fixed_orders_keep_the_solvers_transfer_order():
    p = fork()
    orders = [[0], [2, 1]]
    moves = Transfers(p, "port")
    start = fixed_order_times(p, [0, 1, 1], orders, moves, {(0, 2): 0.5, (0, 1): 2.0})
    assert moves.booked == {(0, 2): (1.0, 4.0), (0, 1): (4.0, 6.0)}
    assert start == [0.0, 6.0, 4.0]
    booked = Transfers(p, "port")                                  # no solver order: book as timed
    start = fixed_order_times(p, [0, 1, 1], orders, booked)
    assert start[2] == 4.0 and booked.booked[0, 1] == (4.0, 6.0)


def test_retime_keeps_orders_and_left_shifts():
    p = fork()
    moves = Transfers(p, "both")
    _, start = list_schedule(p, [3.0, 1.0, 2.0], transfers=moves)   # c before b
    s = to_schedule(p, [0, 1, 1], [t + 5 for t in start], "late", moves)
    again = retime(p, s, "again", TimingRules(congestion="both"))
    assert congestion_errors(p, again, "both") == []
    assert again.makespan == 7.0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=9, max_devices=4, channels=True, transfer_times=True),
       st.sampled_from(RESOURCES), st.booleans())
def test_every_engine_books_valid_transfers(data, resource, insertion):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    moves = Transfers(p, resource)
    try:
        device_of, start = list_schedule(p, [float(-i) for i in range(len(p.tasks))],
                                         insertion=insertion, transfers=moves)
    except ProblemError:  # memory or collocation left a task no device
        assume(False)
    listed = to_schedule(p, device_of, start, "list", moves)
    assert congestion_errors(p, listed, resource) == []
    assert listed.validate(p)                             # the problem's own semantics hold too
    simulated = Transfers(p, resource)
    started = simulate(p, device_of, transfers=simulated)
    assert congestion_errors(p, to_schedule(p, device_of, started, "sim", simulated), resource) == []
    kept = Transfers(p, resource)
    order = device_orders(p, device_of, start)
    starts = {key: span[0] for key, span in moves.booked.items()}
    exact = fixed_order_times(p, device_of, order, kept, starts)
    again = to_schedule(p, device_of, exact, "fixed", kept)
    assert congestion_errors(p, again, resource) == []
    assert again.makespan <= listed.makespan + time_tolerance(listed.makespan)
    if is_feasible_mapping(p, device_of):
        timing = OrderedTiming(p, bfs_order(p), insertion=insertion, rules=TimingRules(congestion=resource))
        assert timing(device_of) == pytest.approx(max(r.end for r in to_schedule(
            p, device_of, timing.start, "ordered").tasks))
