"""Problem.edges, preds and succs of a bulk-loaded problem: built on first read, equal to the
eager lists of the same data loaded row by row, and never built by HEFT and its checks."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedkit import Problem, solve
from schedkit.generators import layered
from schedkit.problem import bulk
from schedkit.problem.edge_table import EdgeTable, largest_only
from schedkit.validate import violations

LISTS = ("edges", "preds", "succs")


@st.composite
def layered_data(draw):
    """A layered graph (two levels at least: the bulk path takes edges), its edges in a drawn order, some without a size (their source's
    ``output_size``), some of size 0."""
    data = layered(draw(st.integers(2, 6)), draw(st.integers(1, 5)), draw(st.sampled_from([0.2, 0.6, 1.0])),
                   draw(st.sampled_from([0.0, 0.5])), draw(st.integers(1, 4)), seed=draw(st.integers(0, 10**6)))
    edges = draw(st.permutations(data["edges"]))
    sizes = st.sampled_from(["keep", "drop", 0.0, 0.1, 7])
    data["edges"] = [{k: v for k, v in e.items() if k != "size"} if (s := draw(sizes)) == "drop"
                     else e if s == "keep" else {**e, "size": s} for e in edges]
    return data


def _bulk(data) -> Problem:
    spec = bulk.fast_spec(data, least=0)
    assert spec is not None and isinstance(spec.edges, EdgeTable)
    return Problem(spec)


def _typed(value):
    """A list's values with the type of every number, so that 2 and 2.0 differ."""
    if isinstance(value, (list, tuple)):
        return [_typed(v) for v in value]
    return type(value).__name__, value


def _dump(schedule) -> dict:
    data = schedule.model_dump(mode="json")
    data.pop("solve_seconds", None)
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layered_data())
def test_lazy_lists_equal_the_eager_ones(data):
    lazy, eager = _bulk(data), Problem.from_dict(data)
    assert all(name in vars(eager) for name in LISTS)  # a list of EdgeSpec: built on load
    assert not any(name in vars(lazy) for name in LISTS)
    assert largest_only(lazy).edges == ([max(eager.edges, key=lambda e: e[2])] if eager.edges else [])
    assert not any(name in vars(lazy) for name in LISTS)  # (the load's check read the columns)
    for name in LISTS:
        assert _typed(getattr(lazy, name)) == _typed(getattr(eager, name))
    assert all(name in vars(lazy) for name in LISTS)  # built once, all three
    # The arrays read from the columns hold what the lists give.
    for column in ("pred_ptr", "pred_src", "pred_size", "succ_ptr", "succ_dst", "succ_size",
                   "edge_src", "edge_dst", "edge_size"):
        assert getattr(_bulk(data).arrays, column).tolist() == getattr(eager.arrays, column).tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layered_data())
def test_heft_on_a_bulk_problem_never_builds_them_and_schedules_the_same(data):
    lazy, eager = _bulk(data), Problem.from_dict(data)
    schedule = solve(lazy, "heft")
    assert not any(name in vars(lazy) for name in LISTS)
    assert _dump(schedule) == _dump(solve(eager, "heft"))
    assert violations(lazy, schedule) == []
    assert not any(name in vars(lazy) for name in LISTS)
    assert repr(lazy) == repr(eager)


def test_a_late_consumer_is_named_from_the_lists_built_on_demand(tmp_path, monkeypatch):
    data = layered(4, 4, 0.5, 0.3, 3, seed=5)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(bulk, "BULK_FROM", 0)
    lazy, eager = Problem.load(path), Problem.from_dict(data)
    assert isinstance(lazy.spec.edges, EdgeTable)
    schedule = solve(lazy, "heft")
    early = schedule.model_copy(update={"tasks": [r.model_copy(update={"start": 0.0}) for r in schedule.tasks]})
    found = violations(lazy, early)
    assert "edges" in vars(lazy) and found == violations(eager, early)
    assert any("before" in message for message in found)
