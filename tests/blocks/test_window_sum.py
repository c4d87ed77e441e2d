"""``WindowSum``: a window of terms chosen by key is the expression ``add_terms`` makes, to the bit,
on short windows (chosen in Python) and long ones (chosen on arrays)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit.blocks import Expr
from schedkit.blocks.window_sum import SHORT, TermTable

# a term: a variable of one column, or a fixed variable (the constant 0 or 1), times a number
variables = st.one_of(st.integers(0, 60).map(Expr.term), st.sampled_from([0.0, 1.0]).map(Expr))
terms = st.lists(st.tuples(variables, st.floats(-50, 50, allow_subnormal=False)), max_size=3 * SHORT)


@settings(max_examples=150, deadline=None)
@given(terms, st.data())
def test_a_window_is_the_term_by_term_sum(pairs, data):
    index = sorted(data.draw(st.sets(st.integers(0, max(0, len(pairs) - 1)), max_size=len(pairs)))) if pairs else []
    keys = data.draw(st.lists(st.sampled_from([0.0, 1.5, 2.0, 7.25]), min_size=len(index), max_size=len(index)))
    window = TermTable(pairs).window(index, keys)
    for value in (0.0, 1.5, 2.0, 7.25, 9.0):
        row = Expr(0.5, [99], [1.0])
        added = window.add_to(row, value)
        chosen = [pairs[k] for k, key in zip(index, keys) if key >= value]
        expected = Expr(0.5, [99], [1.0]).add_terms(chosen)
        assert (row.const, row.cols, row.coefs) == (expected.const, expected.cols, expected.coefs)
        assert added == len(expected.cols) - 1
    with_column = [key for k, key in zip(index, keys) if pairs[k][0].cols]
    assert window.top == max(with_column, default=float("-inf"))


def test_long_windows_are_chosen_on_arrays_and_give_the_same_rows():
    pairs = [(Expr.term(k) if k % 5 else Expr(1.0), -float(k)) for k in range(4 * SHORT)]
    keys = [float(k % 7) for k in range(4 * SHORT)]
    short = TermTable(pairs).window(range(SHORT - 1), keys[:SHORT - 1])
    long = TermTable(pairs).window(range(4 * SHORT), keys)
    assert type(short._terms) is list and type(long._terms) is tuple
    row = Expr()
    assert long.add_to(row, 3.0) == sum(1 for k in range(4 * SHORT) if k % 5 and k % 7 >= 3)
    assert row.const == sum(-float(k) for k in range(4 * SHORT) if k % 5 == 0 and k % 7 >= 3)


def test_a_term_of_two_columns_or_a_shared_expression_is_refused():
    with pytest.raises(ValueError, match="one column"):
        TermTable([(Expr(0.0, [1, 2], [1.0, 1.0]), 1.0)])
    window = TermTable([(Expr.term(1), 1.0)]).window([0], [0.0])
    with pytest.raises(TypeError, match="shared"):
        window.add_to(Expr.term(3).frozen(), 0.0)
