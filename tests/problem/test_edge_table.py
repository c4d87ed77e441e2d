"""schedkit.problem.edge_table: a table of edges reads as the list of EdgeSpec it stands for."""

import pickle

import numpy as np
import pytest

from schedkit.problem.edge_table import EdgeTable
from schedkit.problem.spec import EdgeSpec

NAMES = ["a", "b", "c"]


def _table():
    return EdgeTable(NAMES, np.array([0, 1, 0], dtype=np.int32), np.array([1, 2, 2], dtype=np.int32),
                     np.array([1.5, np.nan, 0.0]))


def _list():
    return [EdgeSpec(src="a", dst="b", size=1.5), EdgeSpec(src="b", dst="c"), EdgeSpec(src="a", dst="c", size=0)]


def test_it_reads_as_its_list():
    table, edges = _table(), _list()
    assert len(table) == 3 and list(table) == edges and table == edges and edges == table
    assert table[-1] == edges[-1] and table[1:] == edges[1:] and table[::-1] == edges[::-1]
    assert [e.model_fields_set for e in table] == [e.model_fields_set for e in edges]
    assert repr(table) == repr(edges)
    with pytest.raises(IndexError):
        table[3]
    assert table != edges[:2] and table != _table()[:2]


def test_it_pickles_and_is_not_hashable():
    table = _table()
    assert pickle.loads(pickle.dumps(table)) == table
    with pytest.raises(TypeError):
        hash(table)
