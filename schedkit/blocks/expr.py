"""``Expr``: one linear expression over model columns, the only shape a MILP row takes.

A block writes a row as arithmetic on the expressions its variable families hand out
(``x(i, d)``, ``start(i)``, ``end(i)``, a transfer's presence, a batch slot's end) and gives
the result to its row sink: ``rows.add("delay", key, start_j - end_i >= c)``. A variable
that the instance fixes (the ``x`` of a task with one allowed device) is an ``Expr`` with
no column, so it folds into the constant by itself: no block tests for ``None``.

The expression lives here, beside the block base class, because blocks build with it and
must not import the MILP layer; the MILP layer receives it from its families and its sink.

It is three fields (a constant, a list of columns, a list of coefficients) with
``__slots__``: a row is built from a handful of terms, millions of times in a large build,
and lists concatenated in order cost less than a dict per row and keep each row's
coefficient order that of its terms (which LP files show). A column that appears twice is
kept twice until the sink merges it (:meth:`Expr.merged`), so the common case, where every
column appears once, pays nothing for the rare one.

Examples
--------
>>> x = Expr.term(0)                  # column 0
>>> e = 2 * x - Expr.term(3, 0.5) + 1
>>> e.const, e.cols, e.coefs
(1.0, [0, 3], [2.0, -0.5])
>>> row = e >= 4                      # 2 x0 - 0.5 x3 >= 3
>>> row.expr.cols, row.lower, row.upper
([0, 3], 3.0, inf)
>>> (x + x - 1).merged().coefs        # a column met twice is summed where the row is written
[2.0]
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence, Union

INF = math.inf

Number = Union[int, float]


class Expr:
    """A linear expression ``const + sum(coef * column)``.

    ``+`` and ``-`` take expressions and numbers, ``*`` a number, and ``<=``, ``>=`` and
    ``==`` give a :class:`Row` for a row sink. The operators return new expressions;
    :meth:`add` adds in place, for sums built in a loop.

    Parameters
    ----------
    const : float
        The constant.
    cols : sequence of int
        Column indices of the model.
    coefs : sequence of float
        One coefficient per column.

    Examples
    --------
    >>> Expr(1.0)                               # a fixed variable, folded into a constant
    Expr(1.0)
    >>> Expr.term(4, 2.5) - Expr(1.0, [4, 7], [1.0, 3.0])
    Expr(-1.0 + 2.5 c4 - 1.0 c4 - 3.0 c7)
    """

    __slots__ = ("const", "cols", "coefs")

    def __init__(self, const: Number = 0.0, cols: Sequence[int] = (), coefs: Sequence[float] = ()):
        self.const = float(const)
        self.cols = list(cols)
        self.coefs = list(coefs)

    @classmethod
    def term(cls, col: int, coef: float = 1.0) -> Expr:
        """``coef * column``: one term and no constant (the fast constructor).

        ``FrozenExpr.term(col)`` makes a family's shared variable in one object (rather
        than a term and its frozen copy).

        Examples
        --------
        >>> Expr.term(2).cols, Expr.term(2, -1.0).coefs
        ([2], [-1.0])
        >>> type(FrozenExpr.term(2)).__name__
        'FrozenExpr'
        """
        e = _new(cls)
        e.const, e.cols, e.coefs = 0.0, [col], [coef]
        return e

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other) -> Expr:
        e = _new(Expr)
        if isinstance(other, Expr):
            e.const = self.const + other.const
            e.cols = self.cols + other.cols
            e.coefs = self.coefs + other.coefs
        else:
            e.const = self.const + other
            e.cols, e.coefs = self.cols[:], self.coefs[:]
        return e

    def __radd__(self, other) -> Expr:    # number + expr (and sum(), which starts at 0)
        e = _new(Expr)
        e.const = other + self.const
        e.cols, e.coefs = self.cols[:], self.coefs[:]
        return e

    def __sub__(self, other) -> Expr:
        e = _new(Expr)
        if isinstance(other, Expr):
            coefs = other.coefs
            e.const = self.const - other.const
            e.cols = self.cols + other.cols
            e.coefs = self.coefs + ([-coefs[0]] if len(coefs) == 1 else [-a for a in coefs])
        else:
            e.const = self.const - other
            e.cols, e.coefs = self.cols[:], self.coefs[:]
        return e

    def __rsub__(self, other) -> Expr:    # number - expr
        e = _new(Expr)
        coefs = self.coefs
        e.const, e.cols = other - self.const, self.cols[:]
        e.coefs = [-coefs[0]] if len(coefs) == 1 else [-a for a in coefs]
        return e

    def __neg__(self) -> Expr:
        e = _new(Expr)
        e.const, e.cols, e.coefs = -self.const, self.cols[:], [-a for a in self.coefs]
        return e

    def __mul__(self, a) -> Expr:
        if isinstance(a, Expr):
            raise TypeError("an Expr is linear: it multiplies by a number only")
        e = _new(Expr)
        coefs = self.coefs
        e.const, e.cols = a * self.const, self.cols[:]
        e.coefs = [a * coefs[0]] if len(coefs) == 1 else [a * c for c in coefs]
        return e

    __rmul__ = __mul__

    def add(self, other, a: float = 1.0) -> Expr:
        """Add ``a * other`` (an expression or a number) in place; returns ``self``.

        Examples
        --------
        >>> total = Expr()
        >>> for col in (1, 2):
        ...     _ = total.add(Expr.term(col), 3.0)
        >>> total
        Expr(0.0 + 3.0 c1 + 3.0 c2)
        """
        try:
            coefs = other.coefs
        except AttributeError:  # a number (an exception costs nothing when none is raised)
            self.const += a * other
            return self
        self.const += a * other.const
        if len(coefs) == 1:
            self.cols.append(other.cols[0])
            self.coefs.append(a * coefs[0])
        else:
            self.cols += other.cols
            self.coefs += [a * c for c in coefs]
        return self

    def add_terms(self, pairs) -> Expr:
        """Add ``sum(a * e for e, a in pairs)`` in place, term by term; returns ``self``.

        The same floats as :meth:`add` once per pair, in one call: long sums (a load row over
        every task of a device) spend most of their time in calls otherwise.

        Examples
        --------
        >>> Expr(1.0).add_terms([(Expr.term(4), 2.0), (Expr(1.0), -3.0)])
        Expr(-2.0 + 2.0 c4)
        """
        self.const = sum_into(self.const, self.cols, self.coefs, pairs)
        return self

    def frozen(self) -> FrozenExpr:
        """This expression as one that many rows may share: :meth:`add` refuses to change it.

        Families hand out their variables frozen, made once: the operators never change
        their operands, and a sum built in place starts from a :meth:`copy`.
        """
        e = _new(FrozenExpr)
        e.const, e.cols, e.coefs = self.const, self.cols[:], self.coefs[:]
        return e

    def copy(self) -> Expr:
        """An independent copy (for :meth:`add` on an expression kept elsewhere)."""
        e = _new(Expr)
        e.const, e.cols, e.coefs = self.const, self.cols[:], self.coefs[:]
        return e

    # ------------------------------------------------------------------ rows
    # (``0.0 - const`` rather than ``-const``: the side of ``e >= 0`` is never ``-0.0``)
    def __ge__(self, other) -> Row:
        if isinstance(other, Expr):
            body = self - other
            return _row(Row, (body, 0.0 - body.const, INF))
        return _row(Row, (self, other - self.const, INF))

    def __le__(self, other) -> Row:
        if isinstance(other, Expr):
            body = self - other
            return _row(Row, (body, -INF, 0.0 - body.const))
        return _row(Row, (self, -INF, other - self.const))

    def __eq__(self, other) -> Row:  # type: ignore[override]
        if isinstance(other, Expr):
            body = self - other
            side = 0.0 - body.const
        else:
            body, side = self, other - self.const
        return _row(Row, (body, side, side))

    __hash__ = None  # type: ignore[assignment]  (== builds a row, so an Expr is no dict key)

    # ------------------------------------------------------------------ inspection
    @property
    def is_constant(self) -> bool:
        """Whether no column has a nonzero coefficient (every variable in it is fixed, or
        the terms of each column cancel)."""
        return not any(self.merged().coefs)

    def merged(self, drop_zeros: bool = False) -> Expr:
        """The same expression with one term per column, where each column first appears.

        ``drop_zeros`` also drops the terms whose coefficient is zero (terms that cancel).

        Examples
        --------
        >>> e = Expr(0.0, [5, 6, 5], [1.0, 2.0, -1.0])
        >>> e.merged().coefs, e.merged(drop_zeros=True).cols
        ([0.0, 2.0], [6])
        """
        cols = self.cols
        if not drop_zeros and len(set(cols)) == len(cols):
            return self
        terms: dict[int, float] = {}
        for c, a in zip(cols, self.coefs):
            terms[c] = terms.get(c, 0.0) + a
        e = _new(Expr)
        e.const = self.const
        e.cols = [c for c, a in terms.items() if a or not drop_zeros]
        e.coefs = [terms[c] for c in e.cols]
        return e

    def bounds(self, lower: Sequence[float], upper: Sequence[float]) -> tuple[float, float]:
        """Least and greatest value over the column bounds ``lower`` and ``upper``.

        Examples
        --------
        >>> (2 * Expr.term(0) - Expr.term(1)).bounds([0.0, 0.0], [1.0, 3.0])
        (-3.0, 2.0)
        """
        low = high = self.const
        for col, a in zip(self.cols, self.coefs):
            lo, hi = lower[col], upper[col]
            low += a * (lo if a > 0 else hi)
            high += a * (hi if a > 0 else lo)
        return low, high

    def renumbered(self, where: dict[int, int]) -> Expr:
        """The expression over other column indices: column ``c`` becomes ``where[c]``."""
        e = _new(Expr)
        e.const, e.cols, e.coefs = self.const, [where[c] for c in self.cols], self.coefs[:]
        return e

    def __repr__(self) -> str:
        terms = "".join(f" {'-' if a < 0 else '+'} {abs(a)!r} c{c}" for c, a in zip(self.cols, self.coefs))
        return f"Expr({self.const!r}{terms})"


class FrozenExpr(Expr):
    """An expression that many rows share (a family's variable): :meth:`add` refuses it.

    Examples
    --------
    >>> x = Expr.term(0).frozen()
    >>> (x + 1).const, x.const
    (1.0, 0.0)
    >>> x.add(1)
    Traceback (most recent call last):
    ...
    TypeError: this expression is shared by many rows: add() to a copy() of it
    """

    __slots__ = ()

    def add(self, other, a: float = 1.0) -> Expr:
        raise TypeError("this expression is shared by many rows: add() to a copy() of it")

    def add_terms(self, pairs) -> Expr:
        raise TypeError("this expression is shared by many rows: add_terms() to a copy() of it")


def sum_into(const: float, cols: list[int], coefs: list[float], pairs) -> float:
    """Append the terms of ``sum(a * e for e, a in pairs)`` to ``cols`` and ``coefs``; return
    ``const`` plus its constant, added pair by pair (:meth:`Expr.add_terms`, and a row sink
    that writes a row's terms straight into its arrays).

    Examples
    --------
    >>> cols, coefs = [0], [1.0]
    >>> sum_into(2.0, cols, coefs, [(Expr.term(4), 3.0), (1 - Expr.term(5), 2.0)]), cols, coefs
    (4.0, [0, 4, 5], [1.0, 3.0, -2.0])
    """
    for e, a in pairs:
        const += a * e.const
        ec = e.coefs
        if len(ec) == 1:
            cols.append(e.cols[0])
            coefs.append(a * ec[0])
        else:
            cols += e.cols
            coefs += [a * c for c in ec]
    return const


#: ``_row(Row, (expr, lower, upper))``: a row without the named tuple's keyword handling.
_row = tuple.__new__

#: ``_new(Expr)``: an expression whose fields the caller sets (skips ``__init__``'s
#: conversions, which the operators do not need: a row is built from many of them).
_new = object.__new__


class Row(NamedTuple):
    """A comparison of expressions, ready for a row sink: ``lower <= expr body <= upper``.

    The body keeps no constant's meaning: the sides already carry it (``lower`` and
    ``upper`` are the comparison's sides minus the body's constant).
    """

    expr: Expr
    lower: float
    upper: float
