"""Schedule.to_json writes rows from their own fields: the text model_dump and json.dumps give."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit import Problem, solve
from schedkit.schedule import Schedule, TaskRun, Transfer
from schedkit.schedule.rows_json import encoded


def reference(schedule, indent=1):
    data = schedule.model_dump(by_alias=True, exclude_none=True)
    if indent is None:
        return json.dumps(data)
    pad = " " * indent

    def value(item):
        if isinstance(item, list) and item and all(isinstance(row, dict) for row in item):
            rows = f",\n{pad * 2}".join(json.dumps(row) for row in item)
            return f"[\n{pad * 2}{rows}\n{pad}]"
        return json.dumps(item)

    return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {value(v)}" for k, v in data.items()) + "\n}"


def test_rows_are_written_as_pydantic_dumps_them():
    rows = [TaskRun(task="é\"a", device="d", start=0, end=1.5, inputs=[0, 2]),
            TaskRun.model_construct(task="b", device="d", start=2, end=3, inputs=None)]
    moves = [Transfer(src="é\"a", dst="b", **{"from": "d"}, to="e", start=1.5, end=2.0, route=["d->e"]),
             Transfer.model_construct(src="a", dst="c", from_="d", to="e", start=0.1, end=1 / 3, route=None)]
    s = Schedule(problem="p", method="m", status="heuristic", tasks=rows, transfers=moves,
                 phases=[{"phase": "x", "seconds": 0.5}])
    for indent in (1, 2, None):
        assert s.to_json(indent) == reference(s, indent)
    empty = Schedule(problem="p", method="m", status="no_solution")
    assert empty.to_json() == reference(empty) and empty.to_json(None) == reference(empty, None)


def test_a_heuristic_schedule_is_written_as_before():
    s = solve(Problem.load("examples/tiny.yaml"), "heft")
    assert s.to_json() == reference(s) and Schedule.from_json(s.to_json()) == s


def test_a_written_file_is_the_json_text(tmp_path):
    rows = [TaskRun(task=f"t{k}", device="d", start=k, end=k + 1) for k in range(9000)]
    moves = [Transfer(src=f"t{k}", dst=f"t{k + 1}", **{"from": "d"}, to="e", start=k + 1, end=k + 1.5)
             for k in range(8999)]
    s = Schedule(problem="p", method="m", status="heuristic", tasks=rows, transfers=moves)
    s.write(tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == reference(s) + "\n"
    assert Schedule.load(tmp_path / "s.json") == s


NAMES = st.text(max_size=6)
TIMES = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 1 / 3, 1e300]),
                  st.integers(-3, 3), st.sampled_from([float("inf"), float("nan")]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.builds(lambda *v: TaskRun.model_construct(task=v[0], device=v[1], start=v[2], end=v[3], inputs=v[4]),
              NAMES, NAMES, TIMES, TIMES, st.one_of(st.none(), st.lists(st.integers(0, 5), max_size=3))),
    st.builds(lambda *v: Transfer.model_construct(src=v[0], dst=v[1], from_=v[2], to=v[3], start=v[4], end=v[5],
                                                  route=v[6]),
              NAMES, NAMES, NAMES, NAMES, TIMES, TIMES, st.one_of(st.none(), st.lists(NAMES, max_size=3)))),
    max_size=6))
def test_encoded_rows_are_json_dumps_of_their_dumps(rows):
    assert list(encoded(rows)) == [json.dumps(r.model_dump(by_alias=True, exclude_none=True)) for r in rows]
