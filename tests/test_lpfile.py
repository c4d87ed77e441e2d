"""The LP and MPS writers: every kind of bound and row reads back into HiGHS as written."""

import highspy
import pytest

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
    import io

    out = io.StringIO()
    write_lp(small_model(1.0), out)
    text = out.getvalue()
    assert " t.range.lo: +1 free(a) +1 n >= 2\n" in text
    assert " t.range.hi: +1 free(a) +1 n <= 4.5\n" in text
    assert " free(a) free\n" in text and " -inf <= b <= 3\n" in text
    assert "general\n n\n" in text and "binary\n y\n" in text
