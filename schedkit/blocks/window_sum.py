"""Window rows at array speed: ``sum(a_k * e_k for k in W if key_k >= r)`` for many ``r``.

The ``cuts`` rows sum one device's assignment terms ``-p[k,d] x[k,d]`` over a window of
tasks: those of a set ``W`` whose head (tail) is at least a value ``r``, for every value
(load rows) or a few values per task (chain rows). Added term by term, a large model's
windows are millions of terms (DenseNet-121: 4 million in 24,000 rows), so a device's terms
are laid out once in arrays (:class:`TermTable`) and each window selected at array speed
(:class:`WindowSum`). The expression is the same, to the bit, as adding the window's terms
one by one with :meth:`Expr.add_terms`: the same columns and coefficients in the terms'
order, and the constants of fixed variables added in that order too.

Examples
--------
>>> from schedkit.blocks.expr import Expr
>>> terms = [(Expr.term(7), -2.0), (Expr(1.0), -3.0), (Expr.term(9), -4.0)]   # x7, a fixed x, x9
>>> window = TermTable(terms).window([0, 1, 2], keys=[5.0, 1.0, 0.0])
>>> row = Expr.term(0)
>>> window.add_to(row, 1.0), row            # the terms with key >= 1
(1, Expr(-3.0 + 1.0 c0 - 2.0 c7))
>>> Expr.term(0).add_terms(terms[:2])       # the same, term by term
Expr(-3.0 + 1.0 c0 - 2.0 c7)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from schedkit.blocks.expr import Expr, FrozenExpr

__all__ = ["TermTable", "WindowSum"]


#: Windows of fewer terms are chosen in Python: an array operation costs about a microsecond
#: however short the array, more than a short window's terms take one by one.
SHORT = 48


class TermTable:
    """Terms ``a_k * e_k``, each ``e_k`` of at most one column (a family's variable, or the
    constant a fixed one folds into), laid out for :meth:`window`.

    Parameters
    ----------
    pairs : sequence of (Expr, float)
        ``(e_k, a_k)`` for ``k = 0, 1, ...``.

    Examples
    --------
    >>> from schedkit.blocks.expr import Expr
    >>> table = TermTable([(Expr.term(3), 2.0), (Expr.term(4), 1.0)])
    >>> table.window([1], keys=[4.0]).top
    4.0
    """

    __slots__ = ("col", "coef", "const", "_arrays")

    def __init__(self, pairs: Sequence[tuple[Expr, float]]):
        n = len(pairs)
        self.col, self.coef, self.const = [-1] * n, [0.0] * n, [0.0] * n
        for k, (e, a) in enumerate(pairs):
            if len(e.cols) > 1:
                raise ValueError("a window term is a variable of one column or a constant")
            if e.cols:
                self.col[k], self.coef[k] = e.cols[0], a * e.coefs[0]
            self.const[k] = a * e.const
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def window(self, index: Sequence[int], keys: Sequence[float]) -> WindowSum:
        """The terms ``index`` (in that order) with their ``keys``, for :meth:`WindowSum.add_to`."""
        if len(index) < SHORT:
            col, coef, const = self.col, self.coef, self.const
            terms = [(col[k], coef[k], key) for k, key in zip(index, keys) if col[k] >= 0]
            consts = [(key, const[k]) for k, key in zip(index, keys) if const[k]]
            return WindowSum(terms, consts)
        if self._arrays is None:
            self._arrays = (np.array(self.col, dtype=np.int64), np.array(self.coef), np.array(self.const))
        all_col, all_coef, all_const = self._arrays
        index, keys = np.asarray(index, dtype=np.int64), np.asarray(keys, dtype=float)
        col, const = all_col[index], all_const[index]
        free, fixed = col >= 0, const != 0
        return WindowSum((col[free], all_coef[index][free], keys[free]),
                         list(zip(keys[fixed].tolist(), const[fixed].tolist())))


class WindowSum:
    """The terms of a :meth:`TermTable.window`: those with a column, with their keys (as
    ``(col, coef, key)`` triples when few, else as three arrays), and the constants of fixed
    variables with theirs.

    Attributes
    ----------
    top : float
        The greatest key of a term with a column (``-inf`` when none has one): a window
        above it adds no column.
    """

    __slots__ = ("_terms", "_consts", "top")

    def __init__(self, terms: list[tuple[int, float, float]] | tuple[np.ndarray, np.ndarray, np.ndarray],
                 consts: list[tuple[float, float]]):
        self._terms, self._consts = terms, consts
        if type(terms) is tuple:
            self.top = float(terms[2].max()) if len(terms[2]) else -np.inf
        else:
            self.top = max((key for _, _, key in terms), default=-np.inf)

    def add_to(self, expr: Expr, value: float) -> int:
        """Add the terms whose key is at least ``value`` to ``expr`` in place; the number of
        columns added.

        Examples
        --------
        >>> from schedkit.blocks.expr import Expr
        >>> window = TermTable([(Expr.term(3), 2.0), (Expr(1.0), 5.0)]).window([0, 1], [0.0, 2.0])
        >>> row = Expr()
        >>> window.add_to(row, 0.0), row
        (1, Expr(5.0 + 2.0 c3))
        """
        if type(expr) is FrozenExpr:
            raise TypeError("this expression is shared by many rows: add to a copy() of it")
        terms = self._terms
        if type(terms) is tuple:
            cols, coefs, keys = terms
            chosen = keys >= value
            added = cols[chosen].tolist()
            expr.cols += added
            expr.coefs += coefs[chosen].tolist()
        else:
            before = len(expr.cols)
            expr_cols, expr_coefs = expr.cols, expr.coefs
            for col, coef, key in terms:
                if key >= value:
                    expr_cols.append(col)
                    expr_coefs.append(coef)
            added = expr_cols[before:]
        for key, const in self._consts:
            if key >= value:
                expr.const += const
        return len(added)
