"""A built model is plain enough to travel: it pickles after its Pyomo model exists, and solves the same."""

import pickle

import pytest

import schedkit
from schedkit.blocks import BLOCKS, Block, register_block
from schedkit.milp import Milp
from schedkit.milp.readback import exact_result, warm_values
from schedkit.milp.solvers import SolveOptions, get_adapter


def test_a_built_model_pickles_after_its_pyomo_model_was_made():
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    built = Milp().build(problem)
    model = built.model                       # Pyomo model with rule closures
    assert model.find_component("precedence") is not None
    copy = pickle.loads(pickle.dumps(built))
    assert copy.context.pyomo_model is None   # made again on demand
    assert copy.linear.num_rows == built.linear.num_rows
    assert copy.linear.column_names() == built.linear.column_names()
    assert copy.model.find_component("precedence") is not None
    # Families still know their columns: the warm start and the read-back work on the copy.
    assert warm_values(copy, copy.warm) == warm_values(built, built.warm)
    raw = get_adapter("highs").solve(copy, SolveOptions(time_limit=30, threads=1))
    result = exact_result(copy, raw, "milp:latency")
    assert result.status == "optimal"
    assert result.schedule.makespan == pytest.approx(schedkit.solve(problem, "milp", threads=1).makespan)


class GpuCap(Block):
    """At most two tasks on gpu0 (a user block written with Pyomo, defined at module level so
    that it pickles, as a plug-in's block would be)."""

    requires = frozenset({"x"})

    def build(self, ctx, blk):
        import pyomo.environ as pyo

        p = ctx.problem
        d = p.device_index["gpu0"]
        blk.cap = pyo.Constraint(expr=sum(ctx.x(i, d) for i in range(len(p.tasks))) <= 2)

    def violations(self, problem, schedule):
        n = sum(r.device == "gpu0" for r in schedule.tasks)
        return [f"gpu0 runs {n} tasks"] if n > 2 else []


@pytest.fixture
def gpu_cap():
    register_block("gpu_cap")(GpuCap)
    yield GpuCap
    BLOCKS.unregister("gpu_cap")


def test_a_model_with_a_pyomo_user_block_pickles(gpu_cap):
    f = {"blocks": ["assignment", "precedence", "no_overlap", "gpu_cap"]}
    built = Milp(formulation=f).build(schedkit.Problem.load("examples/tiny.yaml"))
    built.model  # noqa: B018 - the Pyomo model exists
    copy = pickle.loads(pickle.dumps(built))
    assert "gpu_cap.cap" in copy.linear.row_names()
    raw = get_adapter("highs").solve(copy, SolveOptions(threads=1))
    schedule = exact_result(copy, raw, "milp:custom").to_schedule()
    assert sum(r.device == "gpu0" for r in schedule.tasks) <= 2
