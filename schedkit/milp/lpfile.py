"""LP (CPLEX format) and free MPS writers for a :class:`~schedkit.milp.linear.LinearModel`.

Both write readable names: a row's block comes first (``precedence.delay(a_b_data)``),
columns read ``x(a_gpu0)``, ``start(a)``, ``order(a_b)``, ``makespan``. A row with
two different finite sides is written as two rows, ``NAME.lo`` and ``NAME.hi``, in
LP files (the format has no ranges) and as one ranged row in MPS files.

Examples
--------
>>> import io
>>> from schedkit.blocks import Expr
>>> from schedkit.milp.linear import LinearModel
>>> lin = LinearModel("demo")
>>> x = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1, integer=True)
>>> lin.rows("demo").add("pick", ("one",), Expr(0.0, x, [1.0, 1.0]) == 1)
>>> lin.set_objective(x[0])
>>> out = io.StringIO(); _ = write_lp(lin, out); print(out.getvalue().strip())
\\ schedkit model demo
minimize
 objective: +1 x(a)
subject to
 demo.pick(one): +1 x(a) +1 x(b) = 1
bounds
 0 <= x(a) <= 1
 0 <= x(b) <= 1
binary
 x(a)
 x(b)
end
"""

from __future__ import annotations

import bisect
import math
from typing import Callable, TextIO

import numpy as np

from schedkit.machine import paused_gc
from schedkit.milp.linear import _UNSAFE, LinearModel
from schedkit.milp.lpnames import StreamNames

#: Rows (or columns) named and written at a time, at most: a chunk's text is a few MB.
CHUNK = 1 << 14
#: Nonzeros written at a time, at most (unless one row or column has more): a cut row
#: may hold a term for every task, and 16,384 of them would make a chunk of 250 MB; 65,536
#: nonzeros are about 2 MB of LP.
CHUNK_NONZEROS = 1 << 16


def _num(value: float) -> str:
    """Shortest exact text of a number (``3``, ``2.5``, ``1e-09``)."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class _Numbers(dict):
    """Texts of numbers (:func:`_num`), made once each: coefficients repeat a lot."""

    def __missing__(self, a: float) -> str:
        text = self[a] = _num(a)
        return text


class _Coefficients(dict):
    """Signed coefficient texts (``+2.5 ``), made once each: big-M values repeat a lot."""

    def __missing__(self, a: float) -> str:
        text = self[a] = f"{'+' if a >= 0 else '-'}{_num(abs(a))} "
        return text


def _terms(cols, coefs, names, signed=None) -> str:
    signed = _Coefficients() if signed is None else signed
    return " ".join(signed[a] + names[c] for c, a in zip(cols, coefs))


def _sense(lo: float, hi: float) -> str | None:
    """``E`` (equal sides), ``R`` (two finite sides), ``G``, ``L`` or ``None``: a row free
    on both sides says nothing and is not written."""
    if lo == hi:
        return "E"
    if math.isfinite(lo):
        return "R" if math.isfinite(hi) else "G"
    return "L" if math.isfinite(hi) else None


def _spans(count: int, size: int = CHUNK):
    """``(first, stop)`` of consecutive chunks of ``size`` out of ``count``."""
    return ((first, min(first + size, count)) for first in range(0, count, size))


def _row_spans(lin: LinearModel):
    """``(first, stop)`` of consecutive chunks of rows, each of at most :data:`CHUNK` rows
    and :data:`CHUNK_NONZEROS` nonzeros (or one row)."""
    start, first = lin.row_start, 0
    while first < lin.num_rows:
        top = min(first + CHUNK + 1, len(start))
        stop = bisect.bisect_right(start, start[first] + CHUNK_NONZEROS, first + 1, top) - 1
        stop = max(stop, first + 1)
        yield first, stop
        first = stop


def _named_section(out: TextIO, names: StreamNames, section: Callable):
    """Write ``section()``, which names rows through ``names``; when two of its names
    clash, write it again with the model's own (unique) names. Return what it returns."""
    mark = out.tell() if out.seekable() else None
    if mark is None:
        names.settle()  # (no going back in this stream: the model's names first)
    result = section()
    if not names.unique():
        out.seek(mark)
        out.truncate()
        names.settle()
        result = section()
    return result


def write_lp(lin: LinearModel, out: TextIO) -> list[str]:
    """Write ``lin`` in CPLEX LP format to the text stream ``out``, a chunk of rows at a
    time (their names too); return the column names."""
    with paused_gc():  # (no cycles in the texts made, and full passes over the model are slow)
        names = StreamNames(lin)
        cols = names.columns
        write = out.write
        write(f"\\ schedkit model {_UNSAFE.sub('_', lin.name)}\nminimize\n objective: ")
        write(_terms(list(lin.objective), list(lin.objective.values()), cols) or "0 " + cols[0])
        write("\nsubject to\n")
        _named_section(out, names, lambda: _lp_rows(lin, names, out))
        write("bounds\n")
        lower, upper = lin.lower, lin.upper
        for first, stop in _spans(lin.num_cols):
            lines = []
            for c in range(first, stop):
                lo, hi, name = lower[c], upper[c], cols[c]
                if lo == hi:
                    lines.append(f" {name} = {_num(lo)}\n")
                elif math.isfinite(lo) and math.isfinite(hi):
                    lines.append(f" {_num(lo)} <= {name} <= {_num(hi)}\n")
                elif math.isfinite(hi):
                    lines.append(f" {'-inf' if lo == -math.inf else _num(lo)} <= {name} <= {_num(hi)}\n")
                elif lo == -math.inf:
                    lines.append(f" {name} free\n")
                elif lo != 0:
                    lines.append(f" {name} >= {_num(lo)}\n")
            write("".join(lines))
        integer = lin.integer
        binary = [n for c, n in enumerate(cols) if integer[c] and lower[c] >= 0 and upper[c] <= 1]
        general = [n for c, n in enumerate(cols) if integer[c] and not (lower[c] >= 0 and upper[c] <= 1)]
        if general:
            write("general\n" + "".join(f" {n}\n" for n in general))
        if binary:
            write("binary\n" + "".join(f" {n}\n" for n in binary))
        write("end\n")
    return cols


def _lp_rows(lin: LinearModel, names: StreamNames, out: TextIO) -> None:
    """The rows under ``subject to``, a chunk at a time."""
    cols, signed = names.columns, _Coefficients()
    index, value, start = lin.row_index, lin.row_value, lin.row_start
    empty = f"0 {cols[0]}" if cols else "0"
    for first, stop in _row_spans(lin):
        lines = []
        for r, row in zip(range(first, stop), names.rows(first, stop)):
            a, b = start[r], start[r + 1]
            body = " ".join([signed[x] + cols[c] for c, x in zip(index[a:b], value[a:b])]) or empty
            lo, hi = lin.row_lower[r], lin.row_upper[r]
            sense = _sense(lo, hi)
            if sense == "E":
                lines.append(f" {row}: {body} = {_num(lo)}\n")
            elif sense == "R":
                lines.append(f" {row}.lo: {body} >= {_num(lo)}\n {row}.hi: {body} <= {_num(hi)}\n")
            elif sense == "G":
                lines.append(f" {row}: {body} >= {_num(lo)}\n")
            elif sense == "L":
                lines.append(f" {row}: {body} <= {_num(hi)}\n")
        out.write("".join(lines))


class _RowTexts:
    """Every row's name in one string with offsets (about a byte per character, where a
    list of strings takes some 60 more per row): the MPS file names rows in three sections."""

    def __init__(self):
        self._parts: list[str] = []
        self._lengths: list[np.ndarray] = []

    def add(self, names: list[str]) -> None:
        self._parts.append("".join(names))
        self._lengths.append(np.fromiter(map(len, names), dtype=np.int64, count=len(names)))

    def close(self) -> _RowTexts:
        self.text = "".join(self._parts)
        self.offsets = np.concatenate([[0], np.cumsum(np.concatenate(self._lengths + [np.zeros(0, np.int64)]))])
        del self._parts, self._lengths
        return self

    def take(self, rows: np.ndarray) -> list[str]:
        text = self.text
        return [text[a:b] for a, b in zip(self.offsets[rows].tolist(), self.offsets[rows + 1].tolist())]


def write_mps(lin: LinearModel, out: TextIO) -> list[str]:
    """Write ``lin`` in free MPS format to the text stream ``out``, a chunk of rows (then of
    columns) at a time; return the column names.

    Examples
    --------
    >>> import io
    >>> from schedkit.blocks import Expr
    >>> lin = LinearModel("demo")
    >>> x = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1, integer=True)
    >>> lin.rows("demo").add("pick", ("one",), Expr(0.0, x, [1.0, 1.0]) == 1)
    >>> out = io.StringIO(); write_mps(lin, out)
    ['x(a)', 'x(b)']
    >>> print(out.getvalue().split("COLUMNS")[1].split("RHS")[0].strip())
    MARKER 'MARKER' 'INTORG'
        x(a) demo.pick(one) 1
        x(b) demo.pick(one) 1
        MARKER 'MARKER' 'INTEND'
    """
    with paused_gc():
        names = StreamNames(lin)
        cols = names.columns
        write = out.write
        write(f"NAME {_UNSAFE.sub('_', lin.name) or 'schedkit'}\nOBJSENSE\n    MIN\nROWS\n N  objective\n")
        lo = np.asarray(lin.row_lower, dtype=np.float64)
        hi = np.asarray(lin.row_upper, dtype=np.float64)
        kept = (lo == hi) | np.isfinite(lo) | np.isfinite(hi)
        rows = _named_section(out, names, lambda: _mps_rows(lin, names, out))
        write("COLUMNS\n")
        _mps_columns(lin, kept, rows, cols, out)
        write("RHS\n")
        rhs = np.where(np.isfinite(lo), lo, hi)
        where = np.flatnonzero(kept & (rhs != 0))
        write("".join(f"    RHS {row} {_num(v)}\n" for row, v in zip(rows.take(where), rhs[where].tolist())))
        where = np.flatnonzero(kept & np.isfinite(lo) & np.isfinite(hi) & (lo != hi))
        if len(where):
            write("RANGES\n")
            write("".join(f"    RNG {row} {_num(v)}\n"
                          for row, v in zip(rows.take(where), (hi[where] - lo[where]).tolist())))
        del rows
        write("BOUNDS\n")
        for first, stop in _spans(lin.num_cols):
            write("".join(_mps_bound(lin, c, cols[c]) for c in range(first, stop)))
        write("ENDATA\n")
    return cols


def _mps_rows(lin: LinearModel, names: StreamNames, out: TextIO) -> _RowTexts:
    """The ROWS section, a chunk at a time; every row's name kept for the sections after."""
    texts = _RowTexts()
    for first, stop in _row_spans(lin):
        chunk = names.rows(first, stop)
        texts.add(chunk)
        lines = []
        for r, row in zip(range(first, stop), chunk):
            sense = _sense(lin.row_lower[r], lin.row_upper[r])
            if sense is not None:  # a ranged row is written as G, its width under RANGES
                lines.append(f" {'G' if sense == 'R' else sense}  {row}\n")
        out.write("".join(lines))
    return texts.close()


def _mps_columns(lin: LinearModel, kept: np.ndarray, rows: _RowTexts, cols: list[str], out: TextIO) -> None:
    """The COLUMNS section: the row store read column by column (a stable sort of the
    nonzeros by column, 8 bytes each, 12 while it is made), a chunk of nonzeros at a time."""
    ncols = lin.num_cols
    row_start = np.asarray(lin.row_start, dtype=np.int64)
    col_of = np.asarray(lin.row_index, dtype=np.int32 if ncols < 2**31 - 1 else np.int64)
    if not kept.all():  # the terms of rows not written go past the last column
        col_of[np.repeat(~kept, np.diff(row_start))] = ncols
    order = np.argsort(col_of, kind="stable")  # (stable: each column's rows in row order)
    starts = np.zeros(ncols + 2, dtype=np.int64)
    np.cumsum(np.bincount(col_of, minlength=ncols + 1), out=starts[1:])
    del col_of
    numbers, objective, integer, row_value = _Numbers(), lin.objective, lin.integer, lin.row_value
    in_integer = False
    first = 0
    while first < ncols:
        stop = int(np.searchsorted(starts, starts[first] + CHUNK_NONZEROS, side="right")) - 1
        stop = min(max(stop, first + 1), ncols)
        a, b = int(starts[first]), int(starts[stop])
        which = order[a:b]
        names = rows.take(np.searchsorted(row_start, which, side="right") - 1)
        texts = [numbers[row_value[q]] for q in which.tolist()]
        ends = (starts[first + 1:stop + 1] - a).tolist()
        lines, q = [], 0
        for c, end in zip(range(first, stop), ends):
            if integer[c] != in_integer:
                lines.append("    MARKER 'MARKER' 'INTORG'\n" if integer[c] else "    MARKER 'MARKER' 'INTEND'\n")
                in_integer = integer[c]
            head = f"    {cols[c]} "
            if c in objective:
                lines.append(f"{head}objective {_num(objective[c])}\n")
            elif end == q:
                lines.append(f"{head}objective 0\n")
            lines += [f"{head}{row} {text}\n" for row, text in zip(names[q:end], texts[q:end])]
            q = end
        out.write("".join(lines))
        first = stop
    if in_integer:
        out.write("    MARKER 'MARKER' 'INTEND'\n")


def _mps_bound(lin: LinearModel, c: int, name: str) -> str:
    """The BOUNDS lines of column ``c``."""
    lo, hi, integer = lin.lower[c], lin.upper[c], lin.integer[c]
    if integer and lo == 0 and hi == 1:
        return f" BV BND {name}\n"
    if lo == hi:
        return f" FX BND {name} {_num(lo)}\n"
    if lo == -math.inf and hi == math.inf:
        return f" FR BND {name}\n"
    text = ""
    if lo == -math.inf:
        text += f" MI BND {name}\n"
    elif lo != 0 or integer:
        text += f" LO BND {name} {_num(lo)}\n"
    if math.isfinite(hi):
        text += f" UP BND {name} {_num(hi)}\n"
    elif integer:
        text += f" PL BND {name}\n"
    return text
