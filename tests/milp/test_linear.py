"""The sparse model: names, the Pyomo model made from it, and user blocks written in Pyomo."""

from pathlib import Path

import highspy
import pyomo.environ as pyo
import pytest

import schedkit
from schedkit import Block, FormulationError, Problem, register_block
from schedkit.blocks.base import BLOCKS
from schedkit.milp.export import write_model
from schedkit.milp.linear import LinearModel
from schedkit.milp import Milp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_names_are_sanitised_and_unique():
    lin = LinearModel()
    lin.add_columns("start", [("a-b",), ("a_b",), ("a b",)], lower=0, upper=1)
    names = lin.column_names()
    assert names == ["start(a_b)", "start(a_b)_2", "start(a_b)_3"]
    lin.add_row("blk", "row", ("a:b", "c"), [0], [1.0], lower=0)
    assert lin.row_name(0) == "blk.row(a_b_c)"


def test_bounds_that_cross_are_a_formulation_error():
    with pytest.raises(FormulationError, match=r"column start\(a\): lower bound 2 exceeds upper bound 1"):
        LinearModel().add_columns("start", [("a",)], lower=2, upper=1)


def test_pyomo_model_has_one_block_per_constraint_block_and_the_same_optimum(tmp_path):
    problem = Problem.load(EXAMPLES / "tiny.yaml")
    built = Milp().build(problem)
    model = built.model
    for kind in ("assignment", "precedence", "no_overlap"):
        assert isinstance(model.component(kind), pyo.Block)
    assert model.nconstraints() == built.linear.num_rows
    assert model.nvariables() == built.linear.num_cols
    # Pyomo's own writer and ours describe the same MILP: same optimum through HiGHS.
    model.write(str(tmp_path / "pyomo.lp"), io_options={"symbolic_solver_labels": True})
    write_model(built, tmp_path / "ours.lp")
    optima = []
    for name in ("pyomo.lp", "ours.lp"):
        h = highspy.Highs()
        h.silent()
        h.readModel(str(tmp_path / name))
        h.run()
        optima.append(h.getInfo().objective_function_value)
    assert optima[0] == pytest.approx(optima[1], rel=1e-9)
    assert optima[1] == pytest.approx(schedkit.solve(problem, "milp").makespan, rel=1e-6)


def test_a_pyomo_solver_gets_the_pyomo_model_and_the_same_optimum():
    problem = Problem.load(EXAMPLES / "topcuoglu2002.json")
    through_pyomo = schedkit.solve(problem, "milp", solver="appsi_highs")
    assert through_pyomo.status == "optimal"
    assert through_pyomo.makespan == pytest.approx(73)


@pytest.fixture
def balance_block():
    """A user block with a variable of its own: the busiest device's load, below a limit."""

    @register_block("balance")
    class Balance(Block):
        """No device is busier than ``limit``."""

        requires = frozenset({"x"})
        limit: float
        template = r"$$L \le {{ limit }}$$"

        def build(self, ctx, blk):
            p = ctx.problem
            blk.busiest = pyo.Var(bounds=(0, None))
            blk.load = pyo.Constraint(
                range(len(p.devices)),
                rule=lambda b, d: sum(p.durations[i].get(d, 0) * ctx.x(i, d)
                                      for i in range(len(p.tasks))) <= blk.busiest)
            blk.cap = pyo.Constraint(expr=blk.busiest <= self.limit)

        def violations(self, problem, schedule):
            busy = {}
            for r in schedule.tasks:
                busy[r.device] = busy.get(r.device, 0) + r.end - r.start
            return [f"{d} busy {t:g}" for d, t in busy.items() if t > self.limit + 1e-6]

    yield Balance
    BLOCKS._entries.pop("balance", None)


def test_user_pyomo_block_with_its_own_variable(balance_block, tmp_path):
    problem = Problem.load(EXAMPLES / "tiny.yaml")
    free = schedkit.solve(problem, "milp")
    busiest = max(sum(r.end - r.start for r in free.tasks if r.device == d) for d in problem.devices)
    formulation = {"blocks": ["assignment", "precedence", "no_overlap", {"balance": {"limit": busiest - 0.5}}]}
    built = Milp(formulation=formulation).build(problem)
    names = built.linear.column_names()
    assert "balance.busiest" in names
    assert "balance.load(0)" in built.linear.row_names()
    schedule = schedkit.solve(problem, "milp", formulation=formulation)
    assert schedule.status == "optimal"
    assert schedule.violations(problem, built.blocks) == []
    assert schedule.makespan >= free.makespan - 1e-9
    # the exported file carries the user's rows and column too
    write_model(built, tmp_path / "m.lp")
    text = (tmp_path / "m.lp").read_text()
    assert " balance.cap: +1 balance.busiest <= " in text


def test_nonlinear_user_block_is_a_formulation_error():
    @register_block("squares")
    class Squares(Block):
        """Not linear."""

        requires = frozenset({"x"})

        def build(self, ctx, blk):
            blk.bad = pyo.Constraint(expr=ctx.start(0) * ctx.start(1) <= 3)

        def violations(self, problem, schedule):
            return []

    try:
        with pytest.raises(FormulationError, match=r"block 'squares': constraint squares.bad is not linear"):
            Milp(formulation={"blocks": ["assignment", "precedence", "squares"]}).build(
                Problem.load(EXAMPLES / "tiny.yaml"))
    finally:
        BLOCKS._entries.pop("squares", None)


def test_restriction_is_a_relaxation_with_named_rows():
    problem = Problem.load(EXAMPLES / "hetero20.yaml")
    built = Milp().build(problem)
    ctx = built.context
    keep = [ctx.family("makespan").col] + [ctx.family("timing").start_col(i) for i in range(5)]
    small, where = built.linear.restrict(keep)
    assert small.num_cols == len(keep) and sorted(where) == sorted(keep)
    assert small.objective == {where[ctx.family("makespan").col]: 1.0}
    assert set(small.row_names()) <= set(built.linear.row_names())
    optima = []
    for lin in (built.linear, small):
        h = schedkit.milp.solvers.highs.highs_for(lin)
        h.run()
        optima.append(h.getInfo().objective_function_value)
    assert optima[1] <= optima[0] + 1e-9


def test_restriction_must_keep_the_objective():
    lin = LinearModel()
    x, y = lin.add_columns("v", [("x",), ("y",)], lower=0, upper=1)
    lin.set_objective(y)
    with pytest.raises(FormulationError, match="objective"):
        lin.restrict([x])
