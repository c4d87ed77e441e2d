"""The names of a :class:`~schedkit.milp.linear.LinearModel`'s rows, made chunk by chunk.

:meth:`LinearModel.row_names() <schedkit.milp.linear.LinearModel.row_names>` makes every
name at once and keeps them, with a set of them all to make them unique: on a model of a
million rows that is a few hundred MB beside the model. The LP and MPS writers
(:mod:`schedkit.milp.lpfile`) instead name the rows of one chunk at a time and keep only
a 64-bit hash of each name. Names are unique in nearly every model (a row's key is unique
in its group); when two hashes agree, the writer rewrites its rows section with the
model's own names, which settle clashes (``_2``, ``_3``...). Either way the text is the
model's own naming, byte for byte.

Examples
--------
>>> from schedkit.blocks import Expr
>>> from schedkit.milp.linear import LinearModel
>>> lin = LinearModel("demo")
>>> x = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1)
>>> rows = lin.rows("demo")
>>> rows.add("pick", ("one",), Expr(0.0, x, [1.0, 1.0]) == 1)
>>> rows.add("pick", ("one!",), Expr.term(x[0]) <= 1)        # 'one!' is also written one_
>>> rows.add("pick", ("one_",), Expr.term(x[1]) <= 1)
>>> names = StreamNames(lin)
>>> names.columns, names.rows(0, 3), names.unique()
(['x(a)', 'x(b)'], ['demo.pick(one)', 'demo.pick(one_)', 'demo.pick(one_)'], False)
>>> names.settle(); names.rows(0, 3) == lin.row_names()
True
>>> lin.row_names()[2]
'demo.pick(one_)_2'
"""

from __future__ import annotations

import numpy as np

from schedkit.milp.linear import MAX_NAME, LinearModel, _name, _unique

__all__ = ["StreamNames", "column_names"]


def column_names(lin: LinearModel) -> list[str]:
    """The model's column names, exactly as it names them, without naming its rows.

    Columns are named before rows, so their names never depend on the rows'.

    Examples
    --------
    >>> from schedkit.milp.linear import LinearModel
    >>> lin = LinearModel()
    >>> _ = lin.add_columns("x", [("a b",), ("a_b",), ("objective",)], lower=0, upper=1)
    >>> column_names(lin)
    ['x(a_b)', 'x(a_b)_2', 'x(objective)']
    """
    if lin._names is not None:
        return lin._names[0]
    taken: set[str] = {"objective"}
    return [_unique(_name(g.label, g.keys[k]), taken) for g, k in lin._col_owner]


class StreamNames:
    """Column names (all, kept: every row names them) and row names per chunk of rows.

    Parameters
    ----------
    lin : LinearModel
        The model to name; its own names are used when it has made them already.
    """

    def __init__(self, lin: LinearModel):
        self.lin = lin
        self.columns = column_names(lin)
        self._exact: list[str] | None = lin._names[1] if lin._names is not None else None
        self._hashes: list[np.ndarray] = []
        groups = list(lin.row_groups.values())
        self._labels = [g.label for g in groups]
        self._keys = [g.keys for g in groups]
        # Each row's group and place in it, 8 bytes a row (the model keeps only the groups).
        self._group = np.zeros(lin.num_rows, dtype=np.int32)
        self._place = np.zeros(lin.num_rows, dtype=np.int32)
        for g, group in enumerate(groups):
            where = np.asarray(group.indices, dtype=np.int64)
            self._group[where] = g
            self._place[where] = np.arange(len(where), dtype=np.int32)

    def rows(self, first: int, stop: int) -> list[str]:
        """Names of rows ``first`` to ``stop - 1``: each row's own name, cut to the longest
        written, as the model names it when no other name is the same (see :meth:`unique`)."""
        if self._exact is not None:
            return self._exact[first:stop]
        labels, keys = self._labels, self._keys
        names = [_name(labels[g], keys[g][k])
                 for g, k in zip(self._group[first:stop].tolist(), self._place[first:stop].tolist())]
        names = [n if len(n) <= MAX_NAME else n[:MAX_NAME - 8] for n in names]
        self._hashes.append(np.fromiter(map(hash, names), dtype=np.int64, count=len(names)))
        return names

    def unique(self) -> bool:
        """Whether the row names made so far are all different, from each other, from the
        columns' and from ``objective`` (by hash: a rare false alarm only costs a rewrite)."""
        if self._exact is not None:
            return True
        every = np.concatenate(self._hashes + [np.fromiter(map(hash, self.columns + ["objective"]),
                                                           dtype=np.int64)])
        every.sort()
        return not bool((every[1:] == every[:-1]).any())

    def settle(self) -> None:
        """From now on, the model's own names (all made and kept: only after a clash)."""
        self._exact = self.lin.row_names()
        self._hashes = []
