"""The LP and MPS writers: every kind of bound and row reads back into HiGHS as written."""

import io

import highspy
import pytest

from schedkit.blocks import Expr
from schedkit.milp.linear import INF, LinearModel
from schedkit.milp.lpfile import write_lp, write_mps


def small_model(sign: float) -> LinearModel:
    """min sign*z, z = a + b, 2 <= a + n <= 4.5, b >= -1, n + y <= 4, a - y >= 0.5.

    a and z are free, b <= 3 has no lower bound, n is an integer in [0, 5], y binary.
    Minimising z gives -0.5 (b = -1, a = 0.5, n = 4); maximising it gives 7.5 (b = 3, a = 4.5).
    """
    lin = LinearModel("small test")
    a, z = lin.add_columns("free", [("a",), ("z",)], lower=-INF, upper=INF)
    (b,) = lin.add_columns("b", [()], lower=-INF, upper=3)
    (n,) = lin.add_columns("n", [()], lower=0, upper=5, integer=True)
    (y,) = lin.add_columns("y", [()], lower=0, upper=1, integer=True)
    lin.add_row("t", "range", (), [a, n], [1, 1], lower=2, upper=4.5)
    lin.add_row("t", "sum", (), [z, a, b], [1, -1, -1], lower=0, upper=0)
    lin.add_row("t", "floor", (), [b], [1], lower=-1)
    lin.add_row("t", "cap", (), [n, y], [1, 1], upper=4)
    lin.add_row("t", "link", (), [a, y], [1, -1], lower=0.5)
    lin.set_objective(z, sign)
    return lin


@pytest.mark.parametrize("suffix,writer", [(".lp", write_lp), (".mps", write_mps)])
@pytest.mark.parametrize("sign,optimum", [(1.0, -0.5), (-1.0, -7.5)])
def test_written_model_solves_to_the_hand_optimum(tmp_path, suffix, writer, sign, optimum):
    path = tmp_path / f"small{suffix}"
    with open(path, "w") as out:
        writer(small_model(sign), out)
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(optimum)
    assert h.getLp().num_col_ == 5


def test_lp_ranged_row_is_two_named_rows(tmp_path):
    out = io.StringIO()
    write_lp(small_model(1.0), out)
    text = out.getvalue()
    assert " t.range.lo: +1 free(a) +1 n >= 2\n" in text
    assert " t.range.hi: +1 free(a) +1 n <= 4.5\n" in text
    assert " free(a) free\n" in text and " -inf <= b <= 3\n" in text
    assert "general\n n\n" in text and "binary\n y\n" in text


def _built(path="examples/topcuoglu2002.json"):
    from schedkit import Problem
    from schedkit.milp import Milp

    return Milp().build(Problem.load(path)).linear


@pytest.mark.parametrize("writer", [write_lp, write_mps])
def test_streamed_in_small_chunks_the_text_is_the_model_named_at_once(monkeypatch, writer):
    import schedkit.milp.lpfile as lpfile

    named = _built()
    named.row_names()  # the model's own names, all made before writing
    whole = io.StringIO()
    writer(named, whole)
    monkeypatch.setattr(lpfile, "CHUNK", 3)
    monkeypatch.setattr(lpfile, "CHUNK_NONZEROS", 7)
    lin = _built()
    streamed = io.StringIO()
    columns = writer(lin, streamed)
    assert lin._names is None  # no row was named beyond its chunk
    assert streamed.getvalue() == whole.getvalue()
    assert columns == named.column_names()
    assert whole.getvalue().count("cuts.") > 10 and "no_overlap." in whole.getvalue()


def _clashing() -> LinearModel:
    """Rows whose names clash once written (``one!`` and ``one_``; two keys of 300 characters
    cut to the same 247) and a row named like a column."""
    lin = LinearModel("clash")
    a, b = lin.add_columns("x", [("a",), ("b",)], lower=0, upper=1)
    rows = lin.rows("t")
    for key in ("one", "one!", "one_", "y" * 300 + "1", "y" * 300 + "2"):
        rows.add("pick", (key,), Expr(0.0, [a, b], [1.0, 1.0]) <= 1)
    lin.rows(None).add("x", ("a",), Expr(0.0, [a], [1.0]) >= 0.5)  # named x(a), as the column
    lin.set_objective(a)
    return lin


class _OneWay(io.StringIO):
    """A stream that cannot seek (a pipe)."""

    def seekable(self):
        return False


@pytest.mark.parametrize("writer", [write_lp, write_mps])
@pytest.mark.parametrize("stream", [io.StringIO, _OneWay])
def test_clashing_row_names_are_written_as_the_model_names_them(tmp_path, writer, stream):
    named = _clashing()
    rows = named.row_names()
    assert len(set(rows)) == len(rows) and "t.pick(one_)_2" in rows and "x(a)_2" in rows
    expected = io.StringIO()
    writer(named, expected)
    out = stream()
    writer(_clashing(), out)
    assert out.getvalue() == expected.getvalue()
    assert all(name in out.getvalue() for name in rows)
    path = tmp_path / ("m.lp" if writer is write_lp else "m.mps")
    path.write_text(out.getvalue())
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    assert h.getLp().num_row_ == len(rows)


def test_a_row_free_on_both_sides_is_left_out_of_every_mps_section(tmp_path):
    lin = small_model(1.0)
    lin.add_row("t", "free", (), [0, 2], [1, 1])  # no finite side: says nothing
    out = io.StringIO()
    write_mps(lin, out)
    assert "t.free" not in out.getvalue()
    path = tmp_path / "free.mps"
    path.write_text(out.getvalue())
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getLp().num_row_ == 5 and h.getInfo().objective_function_value == pytest.approx(-0.5)
