"""The array pass over edges (blocks/edge_checks.py) leaves the ``precedence`` block's verdict as
the scalar check gives it: the same violations, in the same order, on valid schedules and on
corrupted ones, up to the last float of the tolerances."""

import math
from unittest import mock

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Problem, ProblemError
from schedkit.blocks import Precedence, edge_checks, precedence
from schedkit.numerics import time_tolerance
from schedkit.testing.strategies import problems as problem_data
from schedkit.timing import to_schedule

#: Moves worth trying: far, a tolerance's width, one float, none.
DELTAS = [-1.0, -1e-6, -1e-12, 0.0, 1e-12, 0.5]
EDITS = st.lists(st.tuples(st.sampled_from(["shift", "shrink", "device", "drop", "twice", "late", "swap",
                                            "stranger", "edge", "arrival"]),
                           st.integers(0, 60), st.sampled_from(DELTAS), st.sampled_from([-1, 0, 1])),
                 max_size=4)
#: The four messages of the check, by a few of their words.
KINDS = [("no link path", "unlinked"), ("the transfer ends", "late row"), ("no transfer row", "no row"),
         ("' starts at", "early")]


def scalar(block, p, s):
    """The block's verdict with the array pass switched off: every edge judged one by one."""
    with mock.patch.object(precedence, "suspect_edges", lambda *args: None):
        return block.violations(p, s)


def _nudged(value, ulps):
    """``value`` moved by ``ulps`` floats (up when positive)."""
    for _ in range(abs(ulps)):
        value = math.nextafter(value, math.copysign(math.inf, ulps))
    return value


def _threshold_edit(p, s, block, kind, k, ulps, tasks, moved):
    """Put a consumer's start (``edge``) or a transfer's end (``arrival``) on the very float
    where the scalar check turns, or ``ulps`` floats beside it."""
    if not p.edges:
        return
    i, j, size = p.edges[k % len(p.edges)]
    rows = {r.task: n for n, r in enumerate(tasks)}
    a, b = tasks[rows[p.tasks[i]]], tasks[rows[p.tasks[j]]]
    u, v = p.device_index[a.device], p.device_index[b.device]
    if not p.pair_allowed(size, u, v):
        return
    tol = time_tolerance(s.makespan)
    if kind == "edge":
        delay = p.comm_time(size, u, v) if block.communication else 0.0
        start = _nudged(a.end + delay - tol, ulps)
        if start >= 0:
            tasks[rows[b.task]] = b.model_copy(update={"start": start, "end": start + (b.end - b.start)})
        return
    for n, t in enumerate(moved):
        if (t.src, t.dst) == (a.task, b.task):
            moved[n] = t.model_copy(update={"end": _nudged(b.start + tol, ulps)})


def corrupted(p, s, block, edits):
    """``s`` with each edit of ``edits`` applied (rows copied, never changed in place)."""
    tasks, moved = list(s.tasks), list(s.transfers)
    for kind, k, delta, ulps in edits:
        row = tasks[k % len(tasks)]
        if kind == "shift":                            # earlier or later, same duration
            tasks[k % len(tasks)] = row.model_copy(update={"start": max(0.0, row.start + delta),
                                                           "end": max(0.0, row.start + delta) + row.end - row.start})
        elif kind == "shrink":
            tasks[k % len(tasks)] = row.model_copy(update={"end": max(row.start, row.end + delta)})
        elif kind == "device":                         # any device, allowed or not
            d = (p.device_index[row.device] + 1 + k) % len(p.devices)
            tasks[k % len(tasks)] = row.model_copy(update={"device": p.devices[d]})
        elif kind in ("edge", "arrival"):
            _threshold_edit(p, s, block, kind, k, ulps, tasks, moved)
        elif not moved:
            continue
        elif kind == "drop":
            del moved[k % len(moved)]
        elif kind == "twice":                          # listed twice: the last row counts
            t = moved[k % len(moved)]
            moved.append(t.model_copy(update={"end": t.end + delta}))
        elif kind == "late":
            t = moved[k % len(moved)]
            moved[k % len(moved)] = t.model_copy(update={"end": t.end + abs(delta)})
        elif kind == "swap":
            t = moved[k % len(moved)]
            moved[k % len(moved)] = t.model_copy(update={"src": t.dst, "dst": t.src})
        elif kind == "stranger":                       # a row for no task of the problem
            t = moved[k % len(moved)]
            moved[k % len(moved)] = t.model_copy(update={"src": "nobody"})
    return s.model_copy(update={"tasks": tasks, "transfers": moved})


def tight(p, device_of, scale):
    """Start times at which every consumer starts the moment its last input arrives (on a
    device pair without a link path, when its source ends): each edge on its threshold."""
    durations = p.durations
    start, end = [0.0] * len(p.tasks), [0.0] * len(p.tasks)
    for j in p.topological_order:
        for i, size in p.preds[j]:
            u, v = device_of[i], device_of[j]
            arrival = end[i] + p.comm_time(size, u, v) if p.pair_allowed(size, u, v) else end[i]
            start[j] = max(start[j], arrival)
        start[j] = max(start[j], scale)
        end[j] = start[j] + durations[j][device_of[j]]
    return start


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, min_devices=2, max_devices=4, transfer_times=True, channels=True), st.data(),
       EDITS, st.sampled_from([True, True, False]), st.sampled_from(["heft", "tight", "tight", "any"]))
def test_the_array_pass_agrees_with_the_scalar_check(data, draw, edits, communication, base):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    block = Precedence(communication=communication)
    if base == "heft":  # a valid schedule, then broken
        try:
            s = schedkit.solve(p, "heft")
        except schedkit.SchedkitError:
            assume(False)
        assert block.violations(p, s) == [] == scalar(block, p, s)
    else:               # any mapping (colocated tasks, unlinked pairs), on the threshold or anywhere
        device_of = [draw.draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
        if base == "tight":
            start = tight(p, device_of, draw.draw(st.sampled_from([0.0, 1e-3, 1e6])))
        else:
            start = [draw.draw(st.sampled_from([0.0, 0.1, 1 / 3, 2.0, 7.0])) for _ in p.tasks]
        s = to_schedule(p, device_of, start, "x")
    s = corrupted(p, s, block, edits)
    found = scalar(block, p, s)
    for line in found:  # (what the examples break, for --hypothesis-show-statistics)
        event(next(kind for words, kind in KINDS if words in line))
    assert block.violations(p, s) == found
    with mock.patch.object(edge_checks, "BLOCK", 2):  # (edges judged a block at a time: their seams too)
        assert block.violations(p, s) == found


def test_every_edge_is_suspect_where_the_arrays_cannot_tell():
    p = Problem.load("examples/tiny.yaml")
    s = schedkit.solve(p, "heft")
    assert edge_checks.suspect_edges(p, s.model_copy(update={"tasks": s.tasks[1:]}), True, 0.0) is None
    stranger = s.tasks[0].model_copy(update={"device": "tpu"})
    assert edge_checks.suspect_edges(p, s.model_copy(update={"tasks": [stranger] + s.tasks[1:]}), True, 0.0) is None


def test_a_transfer_listed_twice_is_read_as_its_last_row():
    p = Problem.load("examples/tiny.yaml")
    s = schedkit.solve(p, "heft")
    timed = [t for t in s.transfers if t.end > t.start]
    assert timed
    t = timed[0]
    consumer = next(r for r in s.tasks if r.task == t.dst)
    late = t.model_copy(update={"end": consumer.start + 1.0})
    for rows, bad in (([late, t], False), ([t, late], True)):
        broken = s.model_copy(update={"transfers": s.transfers + rows})
        found = Precedence().violations(p, broken)
        assert found == scalar(Precedence(), p, broken)
        assert bool(found) == bad
