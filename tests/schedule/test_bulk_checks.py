"""The array pass over transfer rows says "all pass" exactly when the scalar checks say nothing."""

from unittest import mock

import numpy as np

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError, SchedkitError
from schedkit.schedule import bulk_checks, checks
from schedkit.schedule.bulk_checks import transfers_pass
from schedkit.testing.strategies import problems as problem_data
from schedkit.timing import to_schedule

EDITS = st.lists(st.tuples(st.sampled_from(["end", "start", "from", "drop", "twice", "swap", "none"]),
                           st.integers(0, 50), st.sampled_from([-1.0, -1e-9, -1e-13, 1e-13, 0.5])),
                 max_size=3)


def scalar(p, s):
    with mock.patch.object(checks, "transfers_pass", lambda *args: False):
        return checks.consistency_violations(p, s)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=4, transfer_times=True, channels=True), st.data(), EDITS)
def test_the_array_pass_agrees_with_the_scalar_checks(data, draw, edits):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    device_of = [draw.draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
    start = [draw.draw(st.sampled_from([0.0, 0.1, 1 / 3, 2.0])) for _ in p.tasks]
    s = to_schedule(p, device_of, start, "x")
    rows = list(s.transfers)
    for kind, k, delta in edits:
        if not rows:
            break
        k %= len(rows)
        t = rows[k]
        if kind == "end":
            rows[k] = t.model_copy(update={"end": t.end + delta})
        elif kind == "start":
            rows[k] = t.model_copy(update={"start": t.start + delta})
        elif kind == "from":
            rows[k] = t.model_copy(update={"from_": p.devices[(p.device_index[t.from_] + 1) % len(p.devices)]})
        elif kind == "drop":
            del rows[k]
        elif kind == "twice":
            rows.append(t)
        elif kind == "swap":
            rows[k] = t.model_copy(update={"src": t.dst, "dst": t.src})
    s = s.model_copy(update={"transfers": rows})
    expected = scalar(p, s)
    assert checks.consistency_violations(p, s) == expected
    seen = {r.task: r for r in s.tasks}
    tol = checks.time_tolerance(s.makespan)
    transfer_lines = [line for line in expected if line.startswith("transfer ")]
    assert transfers_pass(p, s, seen, tol) == (not transfer_lines)


def test_rows_are_read_once_per_verdict_and_again_for_the_next():
    # Within one verdict the checks share what they read of the rows; a row changed in
    # place after it is read afresh by the next verdict.
    from schedkit import solve
    from schedkit.validate import violations

    p = Problem.load("examples/tiny.yaml")
    s = solve(p, "heft")
    # (an engine's rows are a TransferTable, immutable: a list of them can be changed in place)
    s = s.model_copy(update={"transfers": list(s.transfers)})
    assert s.transfers and violations(p, s) == []
    s.transfers[0].end += 5.0
    found = violations(p, s)
    assert any("the transfer ends at" in line for line in found), found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=3), st.data(),
       st.lists(st.tuples(st.integers(0, 50), st.sampled_from([-1.0, -1e-6, -1e-9, 0.0, 1e-9, 1e-6])), max_size=4))
def test_the_device_pass_agrees_with_the_no_overlap_check(data, draw, shifts):
    # Rows back to back (HEFT), at random starts, or nudged by about the tolerance; zero-length rows.
    from schedkit import solve
    from schedkit.blocks import NoOverlap, no_overlap

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    if draw.draw(st.booleans()):
        try:
            s = solve(p, "heft")
        except SchedkitError:
            assume(False)
    else:
        device_of = [draw.draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
        start = [draw.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for _ in p.tasks]
        s = to_schedule(p, device_of, start, "x")
    tasks = list(s.tasks)
    for k, delta in shifts:
        row = tasks[k % len(tasks)]
        moved = max(0.0, row.start + delta * max(1.0, s.makespan or 0.0))
        tasks[k % len(tasks)] = row.model_copy(update={"start": moved, "end": moved + row.end - row.start})
    s = s.model_copy(update={"tasks": tasks})
    with mock.patch.object(no_overlap, "devices_apart", lambda *args: False):
        expected = NoOverlap().violations(p, s)
    assert NoOverlap().violations(p, s) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=4, transfer_times=True, channels=True), st.data(), EDITS)
def test_a_table_is_judged_from_its_columns_as_its_rows_are(data, draw, edits):
    # Edits on the columns, the engine's edge hint kept as it was: the checks must not trust it.
    from schedkit.schedule import TransferTable
    from schedkit.validate import violations

    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    device_of = [draw.draw(st.sampled_from(p.allowed[i])) for i in range(len(p.tasks))]
    s = to_schedule(p, device_of, [draw.draw(st.sampled_from([0.0, 1 / 3, 2.0])) for _ in p.tasks], "x")
    assume(isinstance(s.transfers, TransferTable) and len(s.transfers))
    t = s.transfers
    cols = {c: getattr(t, c).copy() for c in ("src", "dst", "from_", "to", "start", "end", "edge")}
    for kind, k, delta in edits:
        k %= len(cols["src"])
        if kind in ("end", "start"):
            cols[kind][k] += delta
        elif kind == "from":
            cols["from_"][k] = (cols["from_"][k] + 1) % len(p.devices)
        elif kind == "swap":
            cols["src"][k], cols["dst"][k] = cols["dst"][k], cols["src"][k]
        elif kind in ("twice", "drop") and len(cols["src"]) > 1:
            for c, column in cols.items():
                cols[c] = np.append(column, column[k]) if kind == "twice" else np.delete(column, k)
    table = TransferTable(**{c: cols[c] for c in ("src", "dst", "from_", "to", "start", "end")}, tasks=p.tasks,
                          devices=p.devices, edge=cols["edge"],
                          routes={(u, v): list(p.route[u][v] or ()) for u in range(len(p.devices))
                                  for v in range(len(p.devices))})
    edited, rows = s.model_copy(update={"transfers": table}), s.model_copy(update={"transfers": list(table)})
    seen, tol = {r.task: r for r in s.tasks}, checks.time_tolerance(s.makespan)
    verdict = transfers_pass(p, rows, seen, tol)
    assert transfers_pass(p, edited, seen, tol) == verdict
    with mock.patch.object(bulk_checks, "BLOCK", 2):  # (blocks of rows: their seams too)
        assert transfers_pass(p, edited, seen, tol) == verdict == transfers_pass(p, rows, seen, tol)
    assert violations(p, edited) == violations(p, rows)
