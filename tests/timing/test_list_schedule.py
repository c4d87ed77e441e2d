"""Timelines and the list-scheduling engine: the fast paths equal their references, float for float.

The gap index of :class:`~schedkit.timing.Timeline` must place every interval where the
linear scan :func:`~schedkit.timing.resources.first_fit_scan` does, and
:func:`~schedkit.timing.list_schedule` must choose, with a
:class:`~schedkit.timing.list_schedule.FinishRule`, what the same rule chooses when it
sees every candidate's exact start (its path for any other rule).
"""

from contextlib import contextmanager

import networkx as nx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError
from schedkit.generators import erdos_renyi, layered
from schedkit.numerics import GAP_SLACK
from schedkit.heuristics.components import fastest_device_rule, upward_rank_priority
from schedkit.testing.strategies import problems as problem_data
from schedkit.timing import Timeline, earliest_finish, list_schedule, resources, to_schedule
from schedkit.timing.list_schedule import FinishRule
from schedkit.timing.resources import first_fit_scan

# Where rounding bites: decimals that are not binary fractions, zero lengths, lengths
# below the gap slack (they fit "into" the start of the next interval), random floats.
TIMES = st.one_of(st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.7, 1.0, 1 / 3, 2.5, 10.0]),
                  st.floats(0.0, 50.0))
LENGTHS = st.one_of(st.sampled_from([0.0, 1e-13, 0.1, 0.2, 0.3, 1 / 3, 1.0, 2.0]),
                    st.floats(0.0, 5.0))
# Mostly what list scheduling does (add where ``earliest`` says), sometimes any interval.
OPERATIONS = st.lists(st.tuples(st.sampled_from(["fit", "fit", "fit", "add"]), TIMES, LENGTHS,
                                st.booleans()), max_size=250)


@contextmanager
def fanout(entries):
    """Nodes of at most ``entries`` entries: deep gap indexes from a few intervals."""
    saved = resources._FANOUT
    resources._FANOUT = entries
    try:
        yield
    finally:
        resources._FANOUT = saved


@settings(max_examples=150, deadline=None)
@given(OPERATIONS, st.sampled_from([3, 4, 64]))
def test_gap_index_equals_the_scan(operations, entries):
    with fanout(entries):
        index, plain = Timeline(), Timeline(index=False)
        for kind, time, length, insertion in operations:
            if kind == "fit":
                starts, ends = plain.starts, plain.ends
                expected = (first_fit_scan(starts, ends, time, length) if insertion
                            else max(time, plain.last_end) if starts else time)
                t = index.earliest(time, length, insertion)
                assert t == expected == plain.earliest(time, length, insertion)
                if insertion and time >= index.first_start and length > index.widest:
                    assert t == max(time, index.last_end)  # what the engine's bound assumes
                time = t
            index.add(time, time + length)
            plain.add(time, time + length)
            assert (index.count, index.last_start, index.last_end, index.max_end) == \
                (plain.count, plain.last_start, plain.last_end, plain.max_end)
        assert index.starts == plain.starts and index.ends == plain.ends
        assert index.first_start == (plain.starts[0] if plain.count else float("inf"))


def test_gap_index_on_a_packed_timeline():
    line = Timeline()
    for k in range(5000):
        line.add(float(k), k + 1.0)  # no gap at all
    line.add(6000.0, 6001.0)         # one gap, [5000, 6000)
    assert line.widest >= 1000.0 and line.earliest(10.0, 2.0, True) == 5000.0
    assert line.earliest(10.0, 1000.5, True) == 6001.0
    line.add(5000.0, 5999.5)
    assert line.widest < 1.0 and line.earliest(0.0, 0.5, True) == 5999.5


@pytest.mark.parametrize("end, length", [(52.8, 9.4), (29.666666666666668, 7.333333333333333),
                                         (3.0589983033553536, 3.8120423768821246)])
def test_gap_index_keeps_the_gaps_the_slack_just_fits(end, length):
    # ``end + length <= next + slack`` holds, yet ``next + slack - end`` rounds below ``length``.
    line = Timeline()
    following = (end + length) - GAP_SLACK
    line.add(0.0, end)
    line.add(following, following + 5.0)
    assert line.earliest(1.0, length, True) == first_fit_scan(line.starts, line.ends, 1.0, length) == end
    assert length <= line.widest


def reference(rule):
    """The same choice through the general path (any rule that is not a FinishRule)."""
    return lambda i, options: rule(i, options)


def outcome(p, priority, rule, insertion):
    try:
        return list_schedule(p, priority, rule=rule, insertion=insertion)
    except ProblemError as exc:
        return str(exc)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=14, max_devices=4), st.booleans(), st.booleans(),
       st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.0, 3.5]), min_size=14, max_size=14),
       st.sampled_from([3, 64]))
def test_finish_rules_equal_their_reference(data, met, insertion, priority, entries):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    rule = fastest_device_rule(p) if met else earliest_finish
    with fanout(entries):
        fast = outcome(p, priority, rule, insertion)
        assert fast == outcome(p, priority, reference(rule), insertion)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=5, transfer_times=True, channels=True), st.booleans(),
       st.booleans(), st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=12, max_size=12))
def test_finish_rules_equal_their_reference_with_own_transfer_times(data, met, insertion, priority):
    # The array engine times edges with their own transfer times one by one: same choice.
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    rule = fastest_device_rule(p) if met else earliest_finish
    assert outcome(p, priority, rule, insertion) == outcome(p, priority, reference(rule), insertion)


def reference_transfers(p, device_of, end):
    """The transfer rows by the scalar rule: every edge that moves, leaving when its source ends."""
    return [(p.tasks[i], p.tasks[j], p.devices[device_of[i]], p.devices[device_of[j]], end[i],
             resources.arrival(p, end[i], size, device_of[i], device_of[j]), list(p.route[device_of[i]][device_of[j]]))
            for i, j, size in p.edges if p.moves(size, device_of[i], device_of[j])]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=5, transfer_times=True, channels=True), st.data())
def test_transfer_rows_on_arrays_equal_the_scalar_rule(data, draw):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    device_of = [draw.draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
    start = [draw.draw(st.sampled_from([0.0, 0.1, 1 / 3, 2.0])) for _ in p.tasks]
    s = to_schedule(p, device_of, start, "x")
    end = [r.end for r in s.tasks]
    rows = [(t.src, t.dst, t.from_, t.to, t.start, t.end, t.route) for t in s.transfers]
    assert rows == reference_transfers(p, device_of, end)


@st.composite
def tied_problems(draw):
    """Problems whose finishes tie often: two task lengths, unit transfers, up to 6 devices."""
    n, m = draw(st.integers(2, 12)), draw(st.integers(2, 6))
    devices = [{"name": f"d{k}", "speed": draw(st.sampled_from([1.0, 2.0]))} for k in range(m)]
    links = [{"src": f"d{u}", "dst": f"d{v}", "bandwidth": 1.0}
             for u in range(m) for v in range(u + 1, m)]
    tasks = [{"name": f"t{i}", "work": draw(st.sampled_from([1.0, 2.0])), "output_size": 1.0}
             for i in range(n)]
    edges = [{"src": f"t{i}", "dst": f"t{j}", "size": draw(st.sampled_from([0.0, 1.0]))}
             for j in range(n) for i in range(j) if draw(st.integers(0, 3)) == 0]
    return {"devices": devices, "links": links, "tasks": tasks, "edges": edges}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_problems(), st.booleans(), st.booleans(),
       st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=12, max_size=12))
def test_finish_rules_break_ties_like_their_reference(data, met, insertion, priority):
    p = Problem.from_dict(data)
    rule = fastest_device_rule(p) if met else earliest_finish
    assert outcome(p, priority, rule, insertion) == outcome(p, priority, reference(rule), insertion)


@pytest.mark.parametrize("data", [
    layered(12, 25, 0.2, 0.3, 6, seed=1),
    layered(10, 30, 0.1, 0.5, 4, seed=2, latency=0.5, memory_slack=3.0),
    erdos_renyi(200, 0.03, 5, seed=3),
    erdos_renyi(150, 0.05, 3, seed=4, memory_slack=2.0),
], ids=["layered", "layered-memory", "er", "er-memory"])
@pytest.mark.parametrize("insertion", [True, False])
def test_finish_rules_equal_their_reference_on_larger_graphs(data, insertion):
    p = Problem.from_dict(data)
    rank = upward_rank_priority(p)
    with fanout(3):
        for rule in (earliest_finish, fastest_device_rule(p)):
            assert outcome(p, rank, rule, insertion) == outcome(p, rank, reference(rule), insertion)


def test_finish_rule_orders_by_preference_then_finish_then_device():
    options = [(0, 0.0, 3.0), (1, 1.0, 2.0), (2, 0.0, 2.0)]
    assert earliest_finish(0, options) == 1
    assert FinishRule([{0: 1.0, 1: 2.0, 2: 2.0}])(0, options) == 0
    assert FinishRule([{0: 2.0, 1: 1.0, 2: 1.0}])(0, options) == 1


@settings(max_examples=40, deadline=None)
@given(problem_data(max_tasks=12))
def test_topological_order_is_networkx_lexicographic(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    assert p.topological_order == list(nx.lexicographical_topological_sort(p.graph))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=12, max_devices=4, transfer_times=True), st.booleans(), st.booleans(),
       st.integers(0, 10**6))
def test_ordered_timing_with_and_without_tables_equals_list_schedule(data, insertion, tabled, seed):
    # Many distinct sizes leave the transfer tables out: the times are comm_time's all the same.
    import random

    from schedkit.timing import ordered
    from schedkit.timing.ordered import OrderedTiming, bfs_order

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    rng = random.Random(seed)
    order = bfs_order(p)
    saved = ordered._TABLED_FLOATS
    ordered._TABLED_FLOATS = saved if tabled else 0
    try:
        timing = OrderedTiming(p, order, insertion=insertion)
    finally:
        ordered._TABLED_FLOATS = saved
    assert timing._tabled == tabled or not p.edges
    for _ in range(4):
        string = [rng.choice(p.allowed[i]) for i in range(len(p.tasks))]
        try:
            device_of, start = list_schedule(p, [float(len(order) - timing.position[i]) for i in range(len(order))],
                                             device_of=string, insertion=insertion)
        except ProblemError:
            continue  # a placement the links forbid: OrderedTiming does not check it
        end = [start[i] + p.durations[i][d] for i, d in enumerate(device_of)]
        assert timing(string) == max(end) and timing.start == start


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=5, transfer_times=True), st.data())
def test_candidates_linked_to_the_inputs_as_pair_allowed_says(data, draw):
    from schedkit.timing.list_schedule import _candidates

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    device = [draw.draw(st.sampled_from(range(len(p.devices)))) for _ in p.tasks]
    for i in range(len(p.tasks)):
        expected = [d for d in p.allowed[i] if all(p.pair_allowed(size, device[q], d) for q, size in p.preds[i])]
        try:
            found = _candidates(p, i, device, list(p.device_memory), None, None, limited=False, connected=False)
        except ProblemError:
            found = []
        assert list(found) == expected
