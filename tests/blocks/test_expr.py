"""``Expr``: arithmetic, fixed variables folded into the constant, rows, and the row sink."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit import Formulation, Problem
from schedkit.blocks import Expr, Row
from schedkit.errors import FormulationError
from schedkit.milp.linear import INF, LinearModel


def value(e: Expr, xs) -> float:
    return e.const + sum(a * xs[c] for c, a in zip(e.cols, e.coefs))


terms = st.lists(st.tuples(st.integers(0, 4), st.floats(-10, 10)), max_size=4)
exprs = st.builds(lambda c, t: Expr(c, [k for k, _ in t], [a for _, a in t]), st.floats(-10, 10), terms)
numbers = st.floats(-10, 10)


@settings(max_examples=200, deadline=None)
@given(exprs, exprs, numbers, st.lists(st.floats(-5, 5), min_size=5, max_size=5))
def test_arithmetic_means_what_it_says_at_every_point(a, b, k, xs):
    before = (a.const, list(a.cols), list(a.coefs), b.const, list(b.cols), list(b.coefs))
    cases = [(a + b, value(a, xs) + value(b, xs)), (a - b, value(a, xs) - value(b, xs)),
             (k * a, k * value(a, xs)), (a * k, k * value(a, xs)), (-a, -value(a, xs)),
             (k - a, k - value(a, xs)), (a + k, value(a, xs) + k), (k + a, k + value(a, xs)),
             (a - k, value(a, xs) - k), (sum([a, b]), value(a, xs) + value(b, xs)),
             (a.copy().add(b, k), value(a, xs) + k * value(b, xs)),
             (a.copy().add_terms([(b, k), (a, 2.0)]), 3 * value(a, xs) + k * value(b, xs))]
    for e, expected in cases:
        assert math.isclose(value(e, xs), expected, rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(value(e.merged(), xs), expected, rel_tol=1e-9, abs_tol=1e-9)
        assert len(set(e.merged().cols)) == len(e.merged().cols)
    # add_terms is add once per pair, float for float
    one, other = a.copy().add_terms([(b, k), (a, 2.0)]), a.copy().add(b, k).add(a, 2.0)
    assert (one.const, one.cols, one.coefs) == (other.const, other.cols, other.coefs)
    # the operators never change their operands
    assert before == (a.const, a.cols, a.coefs, b.const, b.cols, b.coefs)


def test_comparisons_carry_the_constant_to_the_sides():
    x, y = Expr.term(0), Expr.term(1)
    row = x + 2 >= y - 1                    # x - y >= -3
    assert isinstance(row, Row)
    assert (row.expr.cols, row.expr.coefs, row.lower, row.upper) == ([0, 1], [1.0, -1.0], -3.0, INF)
    row = 2 * x <= 5
    assert (row.lower, row.upper) == (-INF, 5.0)
    row = x + 1 == 4
    assert (row.lower, row.upper) == (3.0, 3.0)
    assert (3 >= x).upper == 3.0             # reflected: x <= 3


def test_merged_sums_a_column_met_twice_and_may_drop_what_cancels():
    e = Expr.term(3) + Expr.term(4, 2.0) - Expr.term(3)
    assert (e.merged().cols, e.merged().coefs) == ([3, 4], [0.0, 2.0])
    assert e.merged(drop_zeros=True).cols == [4]
    assert (Expr.term(3) - Expr.term(3) + 1).is_constant
    assert not Expr.term(3).is_constant


def test_a_fixed_assignment_folds_into_the_constant():
    p = Problem.from_dict({"name": "fixed", "devices": [{"name": "a"}, {"name": "b"}],
                           "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                           "tasks": [{"name": "s", "durations": {"a": 2}},
                                     {"name": "t", "durations": {"a": 1, "b": 3}}],
                           "edges": [{"src": "s", "dst": "t", "size": 1}]})
    built = Formulation.from_data({"blocks": ["assignment", "precedence"]}).build(p)
    x, timing = built.context.family("x"), built.context.family("timing")
    assert (x.x(0, 0).const, x.x(0, 0).cols, x.x(0, 1).const) == (1.0, [], 0.0)   # s runs on a
    assert x.x(1, 1).cols == [x.col(1, 1)]
    end = timing.end(0)                         # start + 2: no end column for a fixed task
    assert (end.const, end.cols) == (2.0, [timing.start_col(0)])
    row = timing.start(1) >= end + 1 - x.x(0, 0)   # the 1 and x[s, a] cancel
    assert (row.lower, row.expr.cols) == (2.0, [timing.start_col(1), timing.start_col(0)])


def test_family_values_are_shared_and_refuse_changes_in_place():
    p = Problem.load("examples/tiny.yaml")
    x = Formulation.from_data({"blocks": ["assignment"]}).build(p).context.family("x")
    shared = x.x(1, 0)
    with pytest.raises(TypeError, match="copy"):
        shared.add(1.0)
    grown = shared.copy().add(x.x(1, 1))
    assert len(grown.cols) == 2 and x.x(1, 0).cols == shared.cols == grown.cols[:1]


def test_the_row_sink_takes_rows_expressions_and_the_older_columns_form():
    lin = LinearModel("sink")
    a, b = lin.add_columns("v", [("a",), ("b",)], lower=0, upper=10)
    rows = lin.rows("blk")
    xa, xb = Expr.term(a), Expr.term(b)
    rows.add("row", (1,), xa + xb >= 3)
    rows.add("expr", (2,), xa - xb + 1, lower=0, upper=5)        # sides less the constant
    rows.add("twice", (3,), xa + xa - xb <= 4)                   # a column met twice: one term
    rows.add("old", (4,), [a, b], [1.0, 2.0], 1.0, 7.0)          # (cols, coefs, lower, upper)
    rows.add("old_kw", (5,), [b], [1.0], upper=2.0)
    got = [(lin.row_name(r), lin.row(r), lin.row_lower[r], lin.row_upper[r]) for r in range(lin.num_rows)]
    assert got == [("blk.row(1)", ([0, 1], [1.0, 1.0]), 3.0, INF),
                   ("blk.expr(2)", ([0, 1], [1.0, -1.0]), -1.0, 4.0),
                   ("blk.twice(3)", ([0, 1], [2.0, -1.0]), -INF, 4.0),
                   ("blk.old(4)", ([0, 1], [1.0, 2.0]), 1.0, 7.0),
                   ("blk.old_kw(5)", ([1], [1.0]), -INF, 2.0)]
    with pytest.raises(FormulationError, match="coefficients"):
        rows.add("bad", (), [a, b], [1.0])


@settings(max_examples=200, deadline=None)
@given(exprs, st.lists(st.tuples(exprs, numbers), max_size=4), numbers, numbers)
def test_add_sum_writes_the_row_add_writes_for_the_same_sum(base, pairs, const, side):
    # (columns met twice, fixed variables and many-term expressions included: the same floats)
    one, other = LinearModel("sum"), LinearModel("sum")
    for lin in (one, other):
        lin.add_columns("v", [(k,) for k in range(5)], lower=0, upper=10)
    one.rows("blk").add_sum("r", ("k",), base, pairs, const=const, lower=side, upper=side + 1)
    other.rows("blk").add("r", ("k",), (base + const).add_terms(pairs), lower=side, upper=side + 1)
    assert (one.row(0), one.row_lower, one.row_upper, one.row_start, one.row_names()) == \
        (other.row(0), other.row_lower, other.row_upper, other.row_start, other.row_names())
    assert len(set(one.row(0)[0])) == len(one.row(0)[0])


def test_an_expr_multiplies_by_numbers_only():
    with pytest.raises(TypeError, match="linear"):
        Expr.term(0) * Expr.term(1)


def test_no_import_cycle_in_the_milp_layer_nor_with_the_blocks():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("schedkit", cache_dir=None)   # (imports under TYPE_CHECKING included)
    mine = {m for m in graph.modules if m.startswith(("schedkit.milp", "schedkit.blocks"))}
    cycles = sorted((a, b) for a in mine for b in graph.find_modules_directly_imported_by(a)
                    if b in mine and b != a and graph.find_shortest_chain(importer=b, imported=a))
    assert cycles == []


def test_the_built_in_families_have_what_the_block_context_protocol_promises():
    from schedkit.blocks import context

    p = Problem.load("examples/tiny.yaml")
    built = Formulation.from_data({"blocks": ["assignment", "precedence", "no_overlap", "channels",
                                              {"congestion": {"resource": "port"}}, "cuts"]}).build(p)
    ctx = built.context
    views = {"x": context.AssignmentView, "timing": context.TimingView, "makespan": context.MakespanView,
             "order": context.OrderView, "transfer": context.TransferView}
    for name, view in views.items():
        family = ctx.family(name)
        promised = {a for a in vars(view) if not a.startswith("_")} | set(view.__annotations__)
        assert {a for a in promised if not hasattr(family, a)} == set(), name
    batch = {a for a in vars(context.BatchView) if not a.startswith("_")}
    from schedkit.milp.families import BatchFamily
    assert {a for a in batch if not hasattr(BatchFamily, a)} == set()   # (its slots: made by create)
    promised = {a for a in vars(context.BuildContext) if not a.startswith("_")}
    promised |= set(context.BuildContext.__annotations__)
    assert {a for a in promised if not hasattr(ctx, a)} == set()
