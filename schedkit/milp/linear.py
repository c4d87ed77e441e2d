"""The sparse MILP every formulation builds into: named column families and row groups.

Blocks add rows, comparisons of :class:`~schedkit.blocks.expr.Expr` values, through a
:class:`RowBlock` to a group of their own (``precedence.delay``,
``no_overlap.disjunct``), which stores them as columns and coefficients; the build context owns the shared
column families (``x``, ``start``, ``end``, ``order``, ``makespan``). From this one
store come the LP and MPS files (:mod:`schedkit.milp.lpfile`), the embedded HiGHS solve
(arrays passed to highspy) and, only when asked for, a Pyomo model with one
``pyo.Block`` per constraint block (:func:`schedkit.milp.pyomo_model.to_pyomo`).

Python lists rather than Pyomo components keep a build of ~30k rows well under a
second: a Pyomo constraint costs tens of microseconds to construct and as much to write.

Examples
--------
>>> lin = LinearModel("demo")
>>> x = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1, integer=True)
>>> lin.rows("demo").add("pick", ("one",), Expr(0.0, x, [1.0, 1.0]) == 1)
>>> lin.set_objective(x[0])
>>> lin.num_cols, lin.num_rows, lin.row_name(0), lin.column_names()
(2, 1, 'demo.pick(one)', ['x(a)', 'x(b)'])
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from schedkit.blocks.expr import Expr, Row, sum_into
from schedkit.errors import FormulationError

INF = math.inf
#: Characters kept in LP/MPS names; any other becomes ``_`` (CPLEX LP rules, no spaces for MPS).
_UNSAFE = re.compile(r"[^A-Za-z0-9_.()]")
#: Longest name written (CPLEX LP limit 255); longer ones are cut and made unique.
MAX_NAME = 255


@dataclass
class Group:
    """A named family of columns or rows: ``block.name(key)`` for each of its keys."""

    block: str | None
    name: str
    keys: list[tuple] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.block}.{self.name}" if self.block else self.name


class LinearModel:
    """A minimisation MILP as sparse rows with named, grouped columns and rows.

    Parameters
    ----------
    name : str
        The model's name (written in LP and MPS headers).
    """

    def __init__(self, name: str = "schedkit"):
        self.name = name
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.col_groups: dict[tuple, Group] = {}
        self._col_owner: list[tuple[Group, int]] = []
        # (the row arrays grow in place and are never replaced: row sinks hold them)
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []
        self.row_start: list[int] = [0]
        self.row_index: list[int] = []
        self.row_value: list[float] = []
        self.row_groups: dict[tuple, Group] = {}
        self.objective: dict[int, float] = {}
        self._names: tuple[list[str], list[str]] | None = None

    # ------------------------------------------------------------------ columns
    @property
    def num_cols(self) -> int:
        return len(self.lower)

    @property
    def num_rows(self) -> int:
        return len(self.row_lower)

    @property
    def num_nonzeros(self) -> int:
        return len(self.row_index)

    def add_columns(self, name: str, keys: Sequence[tuple], lower, upper, integer: bool = False,
                    block: str | None = None) -> list[int]:
        """Add one column per key to the family ``name``; return their indices.

        ``lower`` and ``upper`` are numbers or sequences (one per key).
        """
        group = self.col_groups.get((block, name))
        if group is None:
            group = self.col_groups[block, name] = Group(block, name)
        first = self.num_cols
        count = len(keys)
        lows = list(lower) if isinstance(lower, Sequence) else [float(lower)] * count
        highs = list(upper) if isinstance(upper, Sequence) else [float(upper)] * count
        for k, key in enumerate(keys):
            if lows[k] > highs[k]:
                raise FormulationError(f"column {group.label}{_key_text(key)}: lower bound "
                                       f"{lows[k]:g} exceeds upper bound {highs[k]:g}")
            self._col_owner.append((group, len(group.keys)))
            group.keys.append(_as_key(key))
            group.indices.append(first + k)
        self.lower += lows
        self.upper += highs
        self.integer += [integer] * count
        self._names = None
        return list(range(first, first + count))

    # ------------------------------------------------------------------ rows
    def add_row(self, block: str | None, name: str, key, cols: Sequence[int], coefs: Sequence[float],
                lower: float = -INF, upper: float = INF) -> None:
        """Add ``lower <= sum(coefs * x[cols]) <= upper`` as row ``block.name(key)``."""
        if len(cols) != len(coefs):
            raise FormulationError(f"row {block}.{name}: {len(cols)} columns but {len(coefs)} coefficients")
        RowBlock(self, block).add(name, key, Expr(0.0, cols, coefs), lower=lower, upper=upper)

    def rows(self, kind: str | None) -> RowBlock:
        """A row sink for the block ``kind`` (``None``: a family's defining rows)."""
        return RowBlock(self, kind)

    def row(self, r: int) -> tuple[list[int], list[float]]:
        """Columns and coefficients of row ``r``."""
        a, b = self.row_start[r], self.row_start[r + 1]
        return self.row_index[a:b], self.row_value[a:b]

    def set_objective(self, col: int, coef: float = 1.0) -> None:
        """Minimise ``coef * x[col]`` (the makespan)."""
        self.objective = {col: coef}

    # ------------------------------------------------------------------ names
    def _build_names(self) -> tuple[list[str], list[str]]:
        if self._names is None:
            taken: set[str] = {"objective"}
            cols = [_unique(_name(g.label, g.keys[k]), taken) for g, k in self._col_owner]
            rows = [_unique(_name(g.label, g.keys[k]), taken) for g, k in self._row_owners()]
            self._names = (cols, rows)
        return self._names

    def _row_owners(self) -> list[tuple[Group, int]]:
        """The group of every row and its place there (made when asked, not kept per row)."""
        owners: list = [None] * self.num_rows
        for group in self.row_groups.values():
            for k, r in enumerate(group.indices):
                owners[r] = (group, k)
        return owners

    def column_names(self) -> list[str]:
        """LP/MPS-safe unique column names: ``x(attn_gpu0)``, ``start(attn)``, ``makespan``."""
        return self._build_names()[0]

    def row_names(self) -> list[str]:
        """LP/MPS-safe unique row names, block first: ``precedence.delay(a_b_data)``."""
        return self._build_names()[1]

    def column_name(self, col: int) -> str:
        return self.column_names()[col]

    def row_name(self, r: int) -> str:
        return self.row_names()[r]

    # ------------------------------------------------------------------ relaxation
    def restrict(self, keep: Sequence[int]) -> tuple[LinearModel, dict[int, int]]:
        """A relaxation on the columns ``keep`` alone: the others projected out of every row.

        In a row, a dropped column ``c`` with coefficient ``a`` contributes a value
        between ``min(a l_c, a u_c)`` and ``max(a l_c, a u_c)``; widening the row's sides
        by that range gives a row that every solution of this model, restricted to
        ``keep``, still satisfies. The restricted model is therefore a relaxation: its
        optimum is a lower bound on this model's. Rows left with no column or no finite
        side are dropped; names and groups are kept.

        Returns
        -------
        (LinearModel, dict)
            The restricted model and the new index of every kept column.

        Examples
        --------
        >>> lin = LinearModel("demo")
        >>> x, y = lin.add_columns("v", [("x",), ("y",)], lower=0, upper=[1, 3])
        >>> lin.rows(None).add("sum", (), Expr.term(x) + Expr.term(y) >= 2)
        >>> lin.set_objective(x)
        >>> small, where = lin.restrict([x])
        >>> small.row(0), small.row_lower, small.column_names()
        (([0], [1.0]), [-1.0], ['v(x)'])
        """
        where = {c: k for k, c in enumerate(keep)}
        if any(c not in where for c in self.objective):
            raise FormulationError("restrict: the objective's columns must be kept")
        out = LinearModel(self.name)
        for c in keep:
            group, k = self._col_owner[c]
            out.add_columns(group.name, [group.keys[k]], lower=self.lower[c], upper=self.upper[c],
                            integer=self.integer[c], block=group.block)
        lower, upper, index, value = self.lower, self.upper, self.row_index, self.row_value
        owners = self._row_owners()
        sinks: dict[str | None, RowBlock] = {}
        for r in range(self.num_rows):
            lo, hi = self.row_lower[r], self.row_upper[r]
            cols, coefs = [], []
            for q in range(self.row_start[r], self.row_start[r + 1]):
                c, a = index[q], value[q]
                k = where.get(c)
                if k is not None:
                    cols.append(k)
                    coefs.append(a)
                elif a:
                    least, most = sorted((a * lower[c], a * upper[c]))
                    lo, hi = lo - most, hi - least
            if cols and (lo > -INF or hi < INF):
                group, k = owners[r]
                sink = sinks.get(group.block)
                if sink is None:
                    sink = sinks[group.block] = out.rows(group.block)
                sink.add(group.name, group.keys[k], Expr(0.0, cols, coefs), lower=lo, upper=hi)
        out.objective = {where[c]: a for c, a in self.objective.items()}
        return out, where

    # ------------------------------------------------------------------ checks
    def violated_rows(self, values: Sequence[float | None], tol: float = 1e-6) -> list[str]:
        """Names of rows and column bounds that ``values`` breaks (a solution check).

        A ``None`` value is unknown: its bounds and the rows it appears in are not checked.
        """
        out = []
        for c, v in enumerate(values):
            if v is None:
                continue
            slack = tol * max(1.0, abs(v))
            if v < self.lower[c] - slack or v > self.upper[c] + slack:
                out.append(self.column_name(c))
            elif self.integer[c] and abs(v - round(v)) > tol:
                out.append(self.column_name(c))
        for r in range(self.num_rows):
            cols, coefs = self.row(r)
            if any(values[c] is None for c in cols):
                continue
            activity = sum(a * values[c] for c, a in zip(cols, coefs))
            slack = tol * max(1.0, abs(activity), *(abs(a * values[c]) for c, a in zip(cols, coefs)))
            if activity < self.row_lower[r] - slack or activity > self.row_upper[r] + slack:
                out.append(self.row_name(r))
        return out


class RowBlock:
    """Where one constraint block writes its rows: groups named ``KIND.NAME(key)``.

    Examples
    --------
    >>> lin = LinearModel()
    >>> start = [Expr.term(c) for c in lin.add_columns("start", [("a",), ("b",)], lower=0, upper=10)]
    >>> rows = RowBlock(lin, "precedence")
    >>> rows.add("delay", ("a", "b"), start[1] >= start[0] + 2)
    >>> rows.add("late", ("b",), start[1] - 1, upper=6)       # a bare expression: its sides
    >>> lin.row_name(0), lin.row(0), lin.row_lower[0], lin.row_upper[1]
    ('precedence.delay(a_b)', ([1, 0], [1.0, -1.0]), 2.0, 7.0)
    """

    __slots__ = ("lin", "kind", "_groups", "_lower", "_upper", "_index", "_value", "_start")

    def __init__(self, lin: LinearModel, kind: str | None):
        self.lin = lin
        self.kind = kind
        self._groups: dict[str, Group] = {}
        # The model's row arrays, bound once: they grow in place and are never replaced.
        self._lower, self._upper = lin.row_lower, lin.row_upper
        self._index, self._value, self._start = lin.row_index, lin.row_value, lin.row_start

    def add(self, name: str, key, row, *before, lower: float = -INF, upper: float = INF,
            distinct: bool = False) -> None:
        """Add ``lower <= row <= upper`` as row ``KIND.name(key)``.

        ``row`` is a :class:`~schedkit.blocks.expr.Row` (a comparison, which carries its
        sides) or an :class:`~schedkit.blocks.expr.Expr` with ``lower`` and ``upper``, from
        which its constant is taken. A column met twice in it is summed once (so in
        :meth:`add_sum`), unless the caller says that none is (``distinct``, as in
        :meth:`add_sum`: long cut rows). The form of the blocks before ``Expr``,
        ``add(name, key, cols, coefs, lower, upper)``, still works.
        """
        if type(row) is Row:
            expr, lower, upper = row
        elif isinstance(row, Expr):
            expr = row
            if expr.const:
                lower, upper = lower - expr.const, upper - expr.const
        else:
            expr, lower, upper = _columns_form(row, before, lower, upper)
        cols = expr.cols
        n = len(cols)  # (a set per row is the dearest step of short rows: two are compared)
        if not distinct and n > 1 and (cols[0] == cols[1] if n == 2 else len(set(cols)) != n):
            expr = expr.merged()
            cols = expr.cols
        self._index += cols
        self._value += expr.coefs
        self._close(name, key, lower, upper)

    def add_sum(self, name: str, key, base: Expr, terms, *, const: float = 0.0, lower: float = -INF,
                upper: float = INF, distinct: bool = False) -> None:
        """Add ``lower <= base + const + sum(a * e for e, a in terms) <= upper`` as ``KIND.name(key)``.

        The floats of ``add(name, key, (base + const).add_terms(terms), lower=, upper=)``, with
        no expression or row made (the disjunctive rows: most rows of a build). ``distinct``:
        the caller knows that no column comes twice (columns of different tasks, devices or
        families), so the row is not searched for one; on the disjunctive rows that search
        was a tenth of the build.

        Examples
        --------
        >>> lin = LinearModel()
        >>> s, x = (Expr.term(c) for c in lin.add_columns("v", [("s",), ("x",)], lower=0, upper=9))
        >>> RowBlock(lin, "demo").add_sum("late", ("a",), s, [(1 - x, 4.0)], const=-2.0, lower=0.0)
        >>> lin.row(0), lin.row_lower[0]
        (([0, 1], [1.0, -4.0]), -2.0)
        """
        index, value = self._index, self._value
        first = len(index)
        index += base.cols
        value += base.coefs
        const = sum_into(base.const + const, index, value, terms)
        if not distinct:
            cols = index[first:]
            n = len(cols)
            if n > 1 and (cols[0] == cols[1] if n == 2 else len(set(cols)) != n):
                merged = Expr(0.0, cols, value[first:]).merged()
                index[first:], value[first:] = merged.cols, merged.coefs
        if const:
            lower, upper = lower - const, upper - const
        self._close(name, key, lower, upper)

    def _close(self, name: str, key, lower: float, upper: float) -> None:
        """End the row whose terms were just appended: its sides, its end, its group and key."""
        group = self._groups.get(name)
        if group is None:
            lin = self.lin
            group = lin.row_groups.get((self.kind, name))
            if group is None:
                group = lin.row_groups[self.kind, name] = Group(self.kind, name)
            self._groups[name] = group
        group.keys.append(key if type(key) is tuple else _as_key(key))
        row_lower = self._lower
        group.indices.append(len(row_lower))
        row_lower.append(float(lower))
        self._upper.append(float(upper))
        self._start.append(len(self._index))
        self.lin._names = None


def _columns_form(cols, before: tuple, lower: float, upper: float) -> tuple[Expr, float, float]:
    """``(cols, coefs[, lower[, upper]])`` as given to ``add`` before rows were expressions."""
    if not before:
        raise FormulationError("a row is an Expr or a comparison of Exprs; columns need coefficients")
    coefs, *sides = before
    if sides:
        lower = sides[0]
    if len(sides) > 1:
        upper = sides[1]
    if len(cols) != len(coefs):
        raise FormulationError(f"a row with {len(cols)} columns but {len(coefs)} coefficients")
    return Expr(0.0, cols, coefs), lower, upper


def _as_key(key) -> tuple:
    if isinstance(key, tuple):
        return key
    return (key,)


def _key_text(key) -> str:
    key = _as_key(key)
    return "(" + ",".join(str(k) for k in key) + ")" if key else ""


def _name(label: str, key: tuple) -> str:
    text = label + ("(" + "_".join(str(k) for k in key) + ")" if key else "")
    return _UNSAFE.sub("_", text)


def _unique(name: str, taken: set[str]) -> str:
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME - 8]
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate
