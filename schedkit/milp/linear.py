"""The sparse MILP every formulation builds into: named column families and row groups.

Blocks add rows as ``(columns, coefficients, lower, upper)`` to a group of their own
(``precedence.delay``, ``no_overlap.disjunct``); the build context owns the shared
column families (``x``, ``start``, ``end``, ``order``, ``makespan``). From this one
store come the LP and MPS files (:mod:`schedkit.milp.lpfile`), the embedded HiGHS solve
(arrays passed to highspy) and, only when asked for, a Pyomo model with one
``pyo.Block`` per constraint block (:meth:`LinearModel.to_pyomo`).

Python lists rather than Pyomo components keep a build of ~30k rows well under a
second: a Pyomo constraint costs tens of microseconds to construct and as much to write.

Examples
--------
>>> lin = LinearModel("demo")
>>> x = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1, integer=True)
>>> lin.add_row("demo", "pick", ("one",), x, [1.0, 1.0], lower=1, upper=1)
>>> lin.set_objective(x[0])
>>> lin.num_cols, lin.num_rows, lin.row_name(0), lin.column_names()
(2, 1, 'demo.pick(one)', ['x(a)', 'x(b)'])
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

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
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []
        self.row_start: list[int] = [0]
        self.row_index: list[int] = []
        self.row_value: list[float] = []
        self.row_groups: dict[tuple, Group] = {}
        self._row_owner: list[tuple[Group, int]] = []
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
        group = self.row_groups.get((block, name))
        if group is None:
            group = self.row_groups[block, name] = Group(block, name)
        self._row_owner.append((group, len(group.keys)))
        group.keys.append(_as_key(key))
        group.indices.append(self.num_rows)
        self.row_lower.append(float(lower))
        self.row_upper.append(float(upper))
        self.row_index.extend(cols)
        self.row_value.extend(coefs)
        self.row_start.append(len(self.row_index))
        self._names = None

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
            rows = [_unique(_name(g.label, g.keys[k]), taken) for g, k in self._row_owner]
            self._names = (cols, rows)
        return self._names

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
        >>> lin.add_row(None, "sum", (), [x, y], [1.0, 1.0], lower=2)
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
                group, k = self._row_owner[r]
                out.add_row(group.block, group.name, group.keys[k], cols, coefs, lower=lo, upper=hi)
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

    # ------------------------------------------------------------------ Pyomo
    def to_pyomo(self):
        """A Pyomo model of the same MILP: one ``pyo.Block`` per constraint block.

        Returns
        -------
        (pyomo.environ.ConcreteModel, list)
            The model and its variable of every column, in column order.
        """
        import pyomo.environ as pyo
        from pyomo.core.expr.numeric_expr import LinearExpression

        model = pyo.ConcreteModel(name=self.name)
        variables: list = [None] * self.num_cols
        for group in self.col_groups.values():
            owner = _owner(model, group.block)
            index = group.indices
            domain = pyo.Binary if all(self.integer[c] and self.lower[c] >= 0 and self.upper[c] <= 1
                                       for c in index) else None
            if group.keys == [()]:
                var = pyo.Var(bounds=_bounds(self, index[0]),
                              domain=domain or _domain(self, index[0]))
                owner.add_component(group.name, var)
                variables[index[0]] = var
                continue
            keys = [_pyomo_key(k) for k in group.keys]
            position = dict(zip(keys, index))
            var = pyo.Var(keys, dense=True, bounds=lambda m, *k: _bounds(self, position[_pyomo_key(k)]),
                          domain=domain or (lambda m, *k: _domain(self, position[_pyomo_key(k)])))
            owner.add_component(group.name, var)
            for key, col in position.items():
                variables[col] = var[key]
        for group in self.row_groups.values():
            owner = _owner(model, group.block)
            keys = [_pyomo_key(k) for k in group.keys]
            rows = dict(zip(keys, group.indices))

            def rule(m, *key, rows=rows):
                r = rows[_pyomo_key(key)]
                cols, coefs = self.row(r)
                expr = LinearExpression(constant=0.0, linear_coefs=list(coefs),
                                        linear_vars=[variables[c] for c in cols])
                return (_finite_or_none(self.row_lower[r]), expr, _finite_or_none(self.row_upper[r]))

            if group.keys == [()]:
                owner.add_component(group.name, pyo.Constraint(rule=lambda m, rule=rule: rule(m)))
            else:
                owner.add_component(group.name, pyo.Constraint(keys, rule=rule))
        model.objective = pyo.Objective(
            expr=sum(coef * variables[c] for c, coef in self.objective.items()), sense=pyo.minimize)
        return model, variables


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


def _pyomo_key(key: tuple):
    return key[0] if len(key) == 1 else tuple(key)


def _owner(model, block: str | None):
    import pyomo.environ as pyo

    if block is None:
        return model
    owner = model.component(block)
    if owner is None:
        owner = pyo.Block(concrete=True)
        model.add_component(block, owner)
    return owner


def _finite_or_none(value: float):
    return value if math.isfinite(value) else None


def _bounds(lin: LinearModel, col: int):
    return (_finite_or_none(lin.lower[col]), _finite_or_none(lin.upper[col]))


def _domain(lin: LinearModel, col: int):
    import pyomo.environ as pyo

    return pyo.Integers if lin.integer[col] else pyo.Reals
