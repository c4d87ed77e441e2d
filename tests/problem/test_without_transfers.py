"""The problem whose edges carry no data (schedkit.problem.without_transfers)."""

import json

import numpy as np

from schedkit import Problem
from schedkit.generators import layered
from schedkit.problem import bulk
from schedkit.problem.edge_table import EdgeTable
from schedkit.problem.without_transfers import carries_data, without_transfers


def test_every_edge_loses_its_data_and_its_own_transfer_times():
    p = Problem.load("examples/googlenet_moirai.json")    # (edges with transfer times of their own)
    assert carries_data(p) and any(getattr(size, "times", None) for _, _, size in p.edges)
    q = without_transfers(p)
    assert not carries_data(q)
    assert q.tasks == p.tasks and q.devices == p.devices and q.durations == p.durations
    assert [(i, j) for i, j, _ in q.edges] == [(i, j) for i, j, _ in p.edges]
    assert all(q.comm_time(size, 0, 1) == 0.0 for _, _, size in q.edges)


def test_edges_loaded_in_bulk_stay_columns(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(layered(6, 5, 0.5, 0.2, 3, seed=1)))
    monkeypatch.setattr(bulk, "BULK_FROM", 0)
    p = Problem.load(path)
    assert isinstance(p.spec.edges, EdgeTable) and carries_data(p)
    q = without_transfers(p)
    assert isinstance(q.spec.edges, EdgeTable) and np.all(q.spec.edges.size == 0)
    assert not carries_data(q)


def test_a_problem_without_data_is_returned_as_it_is():
    p = Problem.load("examples/ft06.json")
    assert not carries_data(p) and without_transfers(p) is p


def test_where_devices_lack_a_link_path_data_keeps_its_size_and_moves_in_no_time():
    p = Problem.from_dict({
        "devices": [{"name": "g"}, {"name": "c"}, {"name": "t"}],
        "links": [{"src": "g", "dst": "c", "bandwidth": 1}],            # t is reached by nothing
        "tasks": [{"name": "a", "work": 1, "output_size": 5}, {"name": "b", "work": 1}],
        "edges": [{"src": "a", "dst": "b"}]})
    q = without_transfers(p)
    (_, _, size), = q.edges
    assert float(size) == 5 and q.comm_time(size, 0, 1) == 0.0 and q.comm_time(size, 1, 0) == 0.0
    assert not q.pair_allowed(size, 0, 2) and not q.moves(size, 0, 1)
