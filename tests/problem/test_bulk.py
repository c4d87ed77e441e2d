"""schedkit.problem.bulk: edges checked in bulk give the spec, the Problem and the errors of the full path."""

import json
import pickle

import pytest

from helpers.bad_inputs import CASES
from schedkit import Problem, ProblemError, load_spec
from schedkit.reductions.reduction import fingerprint
from schedkit.generators.random_dags import layered
from schedkit.problem import bulk
from schedkit.problem.edge_table import EdgeTable
from schedkit.problem.loading import parse_spec


def _load(path, fast: bool, monkeypatch):
    """load_spec with the bulk path for any number of edges (``fast``) or for none."""
    monkeypatch.setattr(bulk, "BULK_FROM", 0 if fast else 10**12)
    try:
        return load_spec(path)
    except ProblemError as exc:
        return str(exc)


def _both(tmp_path, monkeypatch, data, suffix=".json", text=None):
    path = tmp_path / f"p{suffix}"
    path.write_text(json.dumps(data) if text is None else text)
    return _load(path, True, monkeypatch), _load(path, False, monkeypatch)


def _problem(**changes):
    data = layered(6, 5, 0.5, 0.2, 3, seed=2)
    data.update(changes)
    return data


def _tables(p: Problem):
    return (p.tasks, p.devices, p.edges, p.preds, p.succs, p.durations, p.allowed, p.topological_order)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_bad_file_gets_the_same_error_either_way(tmp_path, monkeypatch, case):
    _, suffix, text, words = case
    fast, full = _both(tmp_path, monkeypatch, None, suffix, text)
    assert fast == full
    if isinstance(full, str) and "cycle" not in full:  # a Problem check may be the one that fails
        assert all(w in full for w in words)


def _edge_cases():
    good = _problem()
    edges = good["edges"]
    first = edges[0]
    return {
        "self_loop": edges + [{"src": "t3", "dst": "t3", "size": 1.0}],
        "duplicate": edges + [dict(first)],
        "unknown_src": edges + [{"src": "ghost", "dst": "t3", "size": 1.0}],
        "empty_name": edges + [{"src": "", "dst": "t3", "size": 1.0}],
        "number_name": edges + [{"src": 3, "dst": "t3", "size": 1.0}],
        "negative": edges + [{"src": "t0", "dst": "t29", "size": -1.0}],
        "negative_int": edges + [{"src": "t0", "dst": "t29", "size": -1}],
        "nan": edges + [{"src": "t0", "dst": "t29", "size": float("nan")}],
        "infinite": edges + [{"src": "t0", "dst": "t29", "size": float("inf")}],
        "bool": edges + [{"src": "t0", "dst": "t29", "size": True}],
        "null": edges + [{"src": "t0", "dst": "t29", "size": None}],
        "string": edges + [{"src": "t0", "dst": "t29", "size": "4e5"}],
        "bad_string": edges + [{"src": "t0", "dst": "t29", "size": "big"}],
        "huge_int": edges + [{"src": "t0", "dst": "t29", "size": 10**400}],
        "just_past_float": edges + [{"src": "t0", "dst": "t29", "size": int(1.7976931348623157e308) + 1}],
        "big_int": edges + [{"src": "t0", "dst": "t29", "size": 2**60 + 1}],
        "extra_key": edges + [{"src": "t0", "dst": "t29", "size": 1.0, "colour": "red"}],
        "other_order": edges + [{"size": 2.0, "dst": "t29", "src": "t0"}],
        "no_size": edges + [{"src": "t0", "dst": "t29"}],
        "cycle": edges + [{"src": "t29", "dst": "t0", "size": 1.0}],
        "backwards": list(reversed(edges)),
        "transfer_times": edges + [{"src": "t0", "dst": "t29", "size": 1.0, "transfer_times": {"dev0->dev1": 2}}],
        "row_not_a_map": edges + [["t0", "t29", 1.0]],
        "edges_not_a_list": {"src": "t0", "dst": "t29", "size": 1.0},
    }


@pytest.mark.parametrize("name", sorted(_edge_cases()))
def test_unusual_edges_get_the_same_spec_or_error_either_way(tmp_path, monkeypatch, name):
    fast, full = _both(tmp_path, monkeypatch, _problem(edges=_edge_cases()[name]))
    assert fast == full
    if name in ("backwards", "big_int", "no_size", "other_order"):  # plain rows still
        assert isinstance(fast.edges, EdgeTable)
    if not isinstance(full, str):
        assert fast.model_dump() == full.model_dump()
        assert _tables(Problem(fast)) == _tables(Problem(full))


def test_edge_rows_anywhere_else_take_the_full_path(tmp_path, monkeypatch):
    # a link without a bandwidth looks like an edge row to the reader's hook
    data = _problem(links=[{"src": "dev0", "dst": "dev1"}])
    fast, full = _both(tmp_path, monkeypatch, data)
    assert fast == full and "bandwidth" in full
    text = json.dumps(_problem()).replace('"output_size": ', '"output_size": {"src": "a", "dst": "b"} and ', 1)
    assert len(set(_both(tmp_path, monkeypatch, None, text=text))) == 1
    data = _problem()
    data["tasks"][0]["durations"] = {"dev0": {"src": "t1", "dst": "t2", "size": 1.0}}
    del data["tasks"][0]["work"]
    fast, full = _both(tmp_path, monkeypatch, data)
    assert fast == full and "task 't0'" in full


def test_a_duplicate_key_in_an_edge_row_is_named(tmp_path, monkeypatch):
    text = json.dumps(_problem()).replace('{"src": "t1", "dst"', '{"src": "t1", "src": "t1", "dst"', 1)
    fast, full = _both(tmp_path, monkeypatch, None, text=text)
    assert fast == full and "duplicate key 'src'" in full


@pytest.mark.parametrize("seed", range(4))
def test_valid_files_give_equal_specs_and_problems(tmp_path, monkeypatch, seed):
    data = layered(20, 10, 0.3, 0.1, 4, seed=seed, types=2 if seed % 2 else None)
    for k, edge in enumerate(data["edges"]):  # sizes given and not, ints and floats
        if k % 3 == 0:
            del edge["size"]
        elif k % 3 == 1:
            edge["size"] = int(edge["size"])
    if seed >= 2:  # edges against task order: the cycle check walks the graph
        data["edges"].reverse()
    fast, full = _both(tmp_path, monkeypatch, data)
    assert isinstance(fast.edges, EdgeTable) and isinstance(full.edges, list)
    assert fast == full and full == fast
    assert fast.model_dump(exclude_unset=True) == full.model_dump(exclude_unset=True)
    assert fast.model_dump_json() == full.model_dump_json()
    assert fingerprint(fast) == fingerprint(full)
    assert [e.model_fields_set for e in fast.edges] == [e.model_fields_set for e in full.edges]
    assert _tables(Problem(fast)) == _tables(Problem(full))
    assert pickle.loads(pickle.dumps(fast)) == full
    assert parse_spec(fast.model_dump()) == full


def test_python_data_is_checked_in_bulk_too(monkeypatch):
    data = _problem()
    monkeypatch.setattr(bulk, "BULK_FROM", 0)
    assert isinstance(parse_spec(data).edges, EdgeTable)
    # a caller's own tuples are no rows of a file: refused as before
    with pytest.raises(ProblemError, match="edge #0: Input should be a valid dictionary"):
        parse_spec({**data, "edges": [tuple(e.values()) for e in data["edges"]]})


def test_the_reader_keeps_plain_rows_only():
    data, rows = bulk.read_json('{"edges": [{"src": "a", "dst": "b", "size": 1}, {"src": "a", "dst": "c"},'
                                ' {"src": "a", "dst": "b", "size": null}, {"dst": "a", "src": "b"},'
                                ' {"src": "a", "dst": "b", "size": NaN}, {"src": "a", "dst": "b", "size": 1e400},'
                                ' {"src": "a", "dst": "b", "size": 9007199254740993}]}')
    assert data["edges"][:2] == [bulk.ROW, bulk.ROW] and len(rows) == 3
    assert [type(r).__name__ for r in data["edges"][2:]] == ["dict", "dict", "dict", "_Row", "dict"]
    assert rows.names == {"a": 0, "b": 1, "c": 2}
    assert rows.src.tolist() == [0, 0, 0] and rows.dst.tolist() == [1, 2, 1]
    assert rows.size.tolist()[0] == 1.0 and rows.size.tolist()[2] == float("inf")
    with pytest.raises(ValueError):
        bulk.read_json('{"a": 1, "a": 2}')


def test_an_edge_table_under_other_tasks_is_read_by_name(monkeypatch):
    data = _problem()
    monkeypatch.setattr(bulk, "BULK_FROM", 0)
    spec = parse_spec(data)
    tasks = list(reversed(spec.tasks))  # the same names, numbered the other way
    moved, plain = spec.model_copy(update={"tasks": tasks}), spec.model_copy(update={"tasks": tasks,
                                                                                       "edges": list(spec.edges)})
    assert _tables(Problem(moved)) == _tables(Problem(plain))
