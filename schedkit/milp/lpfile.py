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
>>> out = io.StringIO(); write_lp(lin, out); print(out.getvalue().strip())
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

import math
from typing import TextIO

from schedkit.milp.linear import _UNSAFE, LinearModel


def _num(value: float) -> str:
    """Shortest exact text of a number (``3``, ``2.5``, ``1e-09``)."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class _Coefficients(dict):
    """Signed coefficient texts (``+2.5 ``), made once each: big-M values repeat a lot."""

    def __missing__(self, a: float) -> str:
        text = self[a] = f"{'+' if a >= 0 else '-'}{_num(abs(a))} "
        return text


def _terms(cols, coefs, names, signed=None) -> str:
    signed = _Coefficients() if signed is None else signed
    return " ".join(signed[a] + names[c] for c, a in zip(cols, coefs))


def write_lp(lin: LinearModel, out: TextIO) -> None:
    """Write ``lin`` in CPLEX LP format to the text stream ``out``."""
    names = lin.column_names()
    rows = lin.row_names()
    write = out.write
    write(f"\\ schedkit model {_UNSAFE.sub('_', lin.name)}\nminimize\n objective: ")
    write(_terms(list(lin.objective), list(lin.objective.values()), names) or "0 " + names[0])
    write("\nsubject to\n")
    signed = _Coefficients()
    for r in range(lin.num_rows):
        cols, coefs = lin.row(r)
        body = _terms(cols, coefs, names, signed) or f"0 {names[0]}"
        lo, hi = lin.row_lower[r], lin.row_upper[r]
        if lo == hi:
            write(f" {rows[r]}: {body} = {_num(lo)}\n")
        elif math.isfinite(lo) and math.isfinite(hi):
            write(f" {rows[r]}.lo: {body} >= {_num(lo)}\n {rows[r]}.hi: {body} <= {_num(hi)}\n")
        elif math.isfinite(lo):
            write(f" {rows[r]}: {body} >= {_num(lo)}\n")
        elif math.isfinite(hi):
            write(f" {rows[r]}: {body} <= {_num(hi)}\n")
        # a row free on both sides says nothing and is not written
    write("bounds\n")
    for c, name in enumerate(names):
        lo, hi = lin.lower[c], lin.upper[c]
        if lo == hi:
            write(f" {name} = {_num(lo)}\n")
        elif math.isfinite(lo) and math.isfinite(hi):
            write(f" {_num(lo)} <= {name} <= {_num(hi)}\n")
        elif math.isfinite(hi):
            write(f" {'-inf' if lo == -math.inf else _num(lo)} <= {name} <= {_num(hi)}\n")
        elif lo == -math.inf:
            write(f" {name} free\n")
        elif lo != 0:
            write(f" {name} >= {_num(lo)}\n")
    binary = [n for c, n in enumerate(names) if lin.integer[c] and lin.lower[c] >= 0 and lin.upper[c] <= 1]
    general = [n for c, n in enumerate(names) if lin.integer[c] and not (lin.lower[c] >= 0 and lin.upper[c] <= 1)]
    if general:
        write("general\n" + "".join(f" {n}\n" for n in general))
    if binary:
        write("binary\n" + "".join(f" {n}\n" for n in binary))
    write("end\n")


def write_mps(lin: LinearModel, out: TextIO) -> None:
    """Write ``lin`` in free MPS format to the text stream ``out``."""
    names = lin.column_names()
    rows = lin.row_names()
    write = out.write
    write(f"NAME {_UNSAFE.sub('_', lin.name) or 'schedkit'}\nOBJSENSE\n    MIN\nROWS\n N  objective\n")
    kept = []
    for r in range(lin.num_rows):
        lo, hi = lin.row_lower[r], lin.row_upper[r]
        if lo == hi:
            sense = "E"
        elif math.isfinite(lo):
            sense = "G"
        elif math.isfinite(hi):
            sense = "L"
        else:
            continue
        kept.append(r)
        write(f" {sense}  {rows[r]}\n")
    # Column-wise coefficients: the transpose of the row store.
    by_col: list[list[tuple[int, float]]] = [[] for _ in range(lin.num_cols)]
    for r in kept:
        cols, coefs = lin.row(r)
        for c, a in zip(cols, coefs):
            by_col[c].append((r, a))
    write("COLUMNS\n")
    in_integer = False
    for c, name in enumerate(names):
        if lin.integer[c] != in_integer:
            write("    MARKER 'MARKER' 'INTORG'\n" if lin.integer[c] else "    MARKER 'MARKER' 'INTEND'\n")
            in_integer = lin.integer[c]
        entries = ([("objective", lin.objective[c])] if c in lin.objective else []) + \
                  [(rows[r], a) for r, a in by_col[c]]
        if not entries:
            entries = [("objective", 0.0)]
        for row_name, a in entries:
            write(f"    {name} {row_name} {_num(a)}\n")
    if in_integer:
        write("    MARKER 'MARKER' 'INTEND'\n")
    write("RHS\n")
    for r in kept:
        lo, hi = lin.row_lower[r], lin.row_upper[r]
        rhs = lo if math.isfinite(lo) else hi
        if rhs != 0:
            write(f"    RHS {rows[r]} {_num(rhs)}\n")
    ranged = [r for r in kept if math.isfinite(lin.row_lower[r]) and math.isfinite(lin.row_upper[r])
              and lin.row_lower[r] != lin.row_upper[r]]
    if ranged:
        write("RANGES\n")
        for r in ranged:
            write(f"    RNG {rows[r]} {_num(lin.row_upper[r] - lin.row_lower[r])}\n")
    write("BOUNDS\n")
    for c, name in enumerate(names):
        lo, hi = lin.lower[c], lin.upper[c]
        if lin.integer[c] and lo == 0 and hi == 1:
            write(f" BV BND {name}\n")
        elif lo == hi:
            write(f" FX BND {name} {_num(lo)}\n")
        else:
            if lo == -math.inf and hi == math.inf:
                write(f" FR BND {name}\n")
                continue
            if lo == -math.inf:
                write(f" MI BND {name}\n")
            elif lo != 0 or lin.integer[c]:
                write(f" LO BND {name} {_num(lo)}\n")
            if math.isfinite(hi):
                write(f" UP BND {name} {_num(hi)}\n")
            elif lin.integer[c]:
                write(f" PL BND {name}\n")
    write("ENDATA\n")
