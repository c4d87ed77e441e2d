"""A TransferTable is the list of Transfer rows it stands for: equal, indexed, dumped and
written alike (byte for byte), and judged alike by the validator."""

import copy
import json
import pickle
from unittest import mock

import numpy as np

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedkit import Problem, ProblemError
from schedkit.schedule import Schedule, TaskRun, Transfer
from schedkit.schedule.rows_json import encoded, text_chunks
from schedkit.schedule.transfer_table import TransferTable
from schedkit.testing.strategies import mappings, problems as problem_data
from schedkit.timing import assemble, to_schedule
from schedkit.validate import violations

NAMES = st.lists(st.text(max_size=4), min_size=1, max_size=4)
TIMES = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 1 / 3, 1e300]),
                  st.sampled_from([float("inf"), float("nan")]))


@st.composite
def tables(draw):
    tasks, devices = draw(NAMES), draw(NAMES)
    n = draw(st.integers(0, 7))
    index = st.integers(0, len(tasks) - 1)
    on = st.integers(0, len(devices) - 1)
    columns = [draw(st.lists(index, min_size=n, max_size=n)) for _ in range(2)]
    columns += [draw(st.lists(on, min_size=n, max_size=n)) for _ in range(2)]
    columns += [draw(st.lists(TIMES, min_size=n, max_size=n)) for _ in range(2)]
    routes = None
    if draw(st.booleans()):
        routes = {(u, v): draw(st.lists(st.text(max_size=3), max_size=2))
                  for u in range(len(devices)) for v in range(len(devices))}
    return TransferTable(*columns, tasks, devices, routes)


def rows_of(t: TransferTable) -> list:
    """The rows ``t`` stands for, made one by one as any code would make them."""
    return [Transfer.model_construct(src=t.tasks[i], dst=t.tasks[j], from_=t.devices[u], to=t.devices[v],
                                     start=s, end=e, route=None if t.routes is None else t.routes[u, v])
            for i, j, u, v, s, e in zip(t.src.tolist(), t.dst.tolist(), t.from_.tolist(), t.to.tolist(),
                                        t.start.tolist(), t.end.tolist())]


def same(a: list, b: list) -> bool:
    """Row for row equal, NaN included (a NaN row equals no other)."""
    return [json.dumps(r.model_dump()) for r in a] == [json.dumps(r.model_dump()) for r in b]


@settings(max_examples=300, deadline=None)
@given(tables(), st.integers(-9, 9), st.integers(-9, 9), st.sampled_from([None, 1, 2, -1]))
def test_a_table_is_the_sequence_of_its_rows(table, k, lo, step):
    rows = rows_of(table)
    assert len(table) == len(rows) and same(list(table), rows) and same(table[lo::step], rows[lo::step])
    if -len(rows) <= k < len(rows):
        assert same([table[k]], [rows[k]])
    assert list(text_chunks(table, ",\n  ", size=3)) == list(text_chunks(rows, ",\n  ", size=3))
    assert ",\n".join(text_chunks(table, ",\n")) == ",\n".join(encoded(rows))
    assert same(pickle.loads(pickle.dumps(table)), rows) and copy.deepcopy(table) is table
    assert same(table + [], rows) and same([] + table, rows)


@settings(max_examples=200, deadline=None)
@given(tables())
def test_a_table_equals_its_rows_and_nothing_else(table):
    assume(all(x == x for x in table.start.tolist() + table.end.tolist()))  # (NaN equals nothing)
    rows = rows_of(table)
    assert table == rows and rows == table and table == TransferTable(
        table.src, table.dst, table.from_, table.to, table.start, table.end, list(table.tasks),
        list(table.devices), None if table.routes is None else dict(table.routes))
    if rows:
        assert table != rows[:-1] and table != rows[::-1] + [rows[0]]
        with np.errstate(over="ignore"):     # (the largest float's next is inf: said below)
            after = np.nextafter(table.end, np.inf)
        later = TransferTable(table.src, table.dst, table.from_, table.to, table.start,
                              after, table.tasks, table.devices, table.routes)
        assert later != table and later != rows or not np.isfinite(table.end).all()


@settings(max_examples=200, deadline=None)
@given(tables())
def test_a_schedule_of_a_table_is_written_and_dumped_as_of_its_rows(tmp_path_factory, table):
    assume(all(x - x == 0 for x in table.start.tolist() + table.end.tolist()))  # (a schedule's are finite)
    tasks = [TaskRun(task="a", device="d", start=0, end=1)]
    made = Schedule(problem="p", method="m", status="heuristic", tasks=tasks, transfers=table)
    rows = Schedule(problem="p", method="m", status="heuristic", tasks=tasks, transfers=rows_of(table))
    assert made.transfers is table and made == rows and made.makespan == rows.makespan
    for indent in (1, None):
        assert made.to_json(indent) == rows.to_json(indent)
    assert made.model_dump(by_alias=True, exclude_none=True) == rows.model_dump(by_alias=True, exclude_none=True)
    assert Schedule.from_json(made.to_json()) == made
    folder = tmp_path_factory.mktemp("w")
    for name in ("s.json", "s.yaml"):
        made.write(folder / f"table-{name}")
        rows.write(folder / f"rows-{name}")
        assert (folder / f"table-{name}").read_bytes() == (folder / f"rows-{name}").read_bytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_data(max_tasks=10, max_devices=4, transfer_times=True, channels=True), st.data())
def test_an_engines_table_is_judged_and_written_as_its_rows(data, draw):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    starts = st.lists(st.sampled_from([0.0, 0.1, 1 / 3, 2.0]), min_size=len(p.tasks), max_size=len(p.tasks))
    device_of, start = draw.draw(mappings(p)), draw.draw(starts)
    s = to_schedule(p, device_of, start, "x")
    assert isinstance(s.transfers, TransferTable) or not p.edges
    with mock.patch.object(assemble, "BLOCK", 2):  # (edges timed a block at a time: their seams too)
        again = to_schedule(p, device_of, start, "x")
    assert again == s and (not p.edges or list(again.transfers.edge) == list(s.transfers.edge))
    rows = s.model_copy(update={"transfers": list(s.transfers)})
    assert s == rows and s.to_json() == rows.to_json() and violations(p, s) == violations(p, rows)
