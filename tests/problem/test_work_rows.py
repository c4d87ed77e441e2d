"""WorkRow: the durations of a task given by work on a large problem read as the dict they
stand for, float for float, and every method schedules the same on them."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError, solve
from schedkit.generators import layered
from schedkit.problem import durations
from schedkit.problem.durations import WorkRow


@st.composite
def work_data(draw):
    """A layered graph given by work, with memory capacities (several rooms) and some pins."""
    data = layered(draw(st.integers(2, 5)), draw(st.integers(1, 4)), 0.5, 0.3, draw(st.integers(1, 4)),
                   seed=draw(st.integers(0, 10**6)), memory_slack=draw(st.sampled_from([None, 1.5, 3.0])))
    names = [d["name"] for d in data["devices"]]
    for task in data["tasks"]:
        if draw(st.integers(0, 5)) == 0:
            task["pin"] = names[:draw(st.integers(1, len(names)))]
    return data


def _both(data, monkeypatch):
    try:
        dicts = Problem.from_dict(data)
    except ProblemError as exc:  # (pins that crowd one device's memory): rows refuse it alike
        monkeypatch.setattr(durations, "WORK_ROWS_FROM", 0)
        with pytest.raises(ProblemError) as same:
            Problem.from_dict(data)
        monkeypatch.undo()
        assert str(same.value) == str(exc)
        assume(False)
    monkeypatch.setattr(durations, "WORK_ROWS_FROM", 0)
    rows = Problem.from_dict(data)
    monkeypatch.undo()
    return dicts, rows


def _typed(table):
    return [(d, type(v).__name__, v) for d, v in dict(table).items()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(work_data())
def test_rows_read_as_the_dicts_float_for_float(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        dicts, rows = _both(data, monkeypatch)
    assert all(type(t) is dict for t in dicts.durations)
    for task, plain, row in zip(rows.spec.tasks, dicts.durations, rows.durations):
        assert type(row) is (dict if task.pin is not None else WorkRow)
        assert row == plain and plain == row and _typed(row) == _typed(plain)
        assert list(row) == list(plain) and list(row.values()) == list(plain.values())
        assert list(row.items()) == list(plain.items()) and len(row) == len(plain)
        for d in [*range(len(rows.devices)), -1, 99]:
            assert (d in row) == (d in plain) and row.get(d) == plain.get(d)
            if d in plain:
                assert row[d] == plain[d] and type(row[d]) is float
            else:
                with pytest.raises(KeyError):
                    row[d]
    assert rows.allowed == dicts.allowed and rows.min_duration == dicts.min_duration
    assert rows.arrays.type_durations.tolist() == dicts.arrays.type_durations.tolist()
    assert rows.arrays.device_type.tolist() == dicts.arrays.device_type.tolist()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(work_data(), st.sampled_from(["heft", "met", "greedy"]))
def test_list_methods_schedule_the_same_on_rows(data, method):
    with pytest.MonkeyPatch.context() as monkeypatch:
        dicts, rows = _both(data, monkeypatch)
    one, other = solve(dicts, method), solve(rows, method)
    assert [(r.task, r.device, r.start, r.end) for r in one.tasks] == \
        [(r.task, r.device, r.start, r.end) for r in other.tasks]
    assert one.makespan == other.makespan and one.bound == other.bound


def test_rows_from_the_threshold_of_tasks_times_devices(monkeypatch):
    data = layered(2, 3, 0.5, 0.0, 2, seed=1)  # 6 tasks x 2 devices
    assert all(type(t) is dict for t in Problem.from_dict(data).durations)  # the default: a million pairs
    monkeypatch.setattr(durations, "WORK_ROWS_FROM", 13)
    assert all(type(t) is dict for t in Problem.from_dict(data).durations)
    monkeypatch.setattr(durations, "WORK_ROWS_FROM", 12)
    p = Problem.from_dict(data)
    assert all(type(t) is WorkRow for t in p.durations)
    assert p.durations[3][1] == data["tasks"][3]["work"] / data["devices"][1]["speed"]
