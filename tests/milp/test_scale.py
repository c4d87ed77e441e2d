"""Results do not depend on the time unit: the MILP rescales what the solver sees."""

import pytest

import schedkit
from schedkit.milp.scale import choose_scale, in_units, result_in_units, scaled_problem
from schedkit.schedule import Quality, Result, Termination
from schedkit.testing import instance


@pytest.mark.parametrize("horizon,factor", [(4.5, 1.0), (1.0, 1.0), (1e5, 1.0), (1e-6, 1e9),
                                             (3e8, 1e-5), (0.02, 1e5), (float("inf"), 1.0), (0.0, 1.0)])
def test_the_scale_is_a_power_of_ten_that_brings_the_horizon_near_1000(horizon, factor):
    assert choose_scale(horizon) == factor


@pytest.mark.parametrize("case", ["ft06", "topcuoglu2002", "fork_join"])
@pytest.mark.parametrize("unit", [1e-9, 1e-3, 1e6])
def test_the_same_optimum_in_every_unit(case, unit):
    known = instance(case)
    problem = scaled_problem(known.problem(), unit)
    schedule = schedkit.solve(problem, "milp", formulation=known.formulation, threads=1)
    assert schedule.status == "optimal"
    assert schedule.makespan == pytest.approx(known.optimum * unit, rel=1e-9)
    assert schedule.bound == pytest.approx(known.optimum * unit, rel=1e-4)
    assert schedule.violations(problem) == []


def test_hetero20_in_nanoseconds_is_hetero20_scaled():
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    base = schedkit.solve(problem, "milp", threads=1)
    tiny = schedkit.solve(scaled_problem(problem, 1e-9), "milp", threads=1)
    assert tiny.status == "optimal" and tiny.gap <= 1e-4
    assert tiny.makespan == pytest.approx(base.makespan * 1e-9, rel=1e-9)


def test_a_scaled_schedule_is_retimed_exactly_on_the_original():
    problem = instance("topcuoglu2002").problem()
    big = scaled_problem(problem, 1000.0)
    schedule = schedkit.solve(big, "heft")
    back = in_units(problem, schedule)
    assert back.violations(problem) == []
    assert back.makespan == pytest.approx(schedule.makespan / 1000.0, rel=1e-12)
    result = Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                    bound=50_000.0, method="heft")
    again = result_in_units(problem, result, 1000.0)
    assert again.bound == 50.0 and again.objective == back.makespan


def test_rescaling_is_a_reduction_with_its_inverse():
    from schedkit.milp.scale import Rescaling
    from schedkit.timing import TimingRules

    problem = schedkit.Problem.load("examples/tiny.yaml")
    rules = schedkit.get_formulation("moirai").timing_rules(problem)
    scaling = Rescaling.apply(problem, 4.5e-6, rules)
    assert scaling.factor == 1e8 and scaling.rules == rules
    schedule = schedkit.solve(problem, "heft", formulation="moirai")
    there = scaling.forward(schedule)
    assert there.makespan == pytest.approx(schedule.makespan * 1e8, rel=1e-12)
    assert scaling.back(there).violations(problem, schedkit.get_formulation("moirai").blocks) == []
    result = Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=there, bound=1e8,
                    method="heft")
    assert scaling.invert(result).bound == pytest.approx(1.0)
    same = Rescaling.apply(problem, 4.5, TimingRules())
    assert same.factor == 1.0 and same.scaled is problem and same.forward(schedule) is schedule


@pytest.mark.parametrize("bandwidth,size,horizon,factor", [(1e300, 1, 1e20, 1.0), (1e-300, 0, 1e-20, 1.0),
                                                           (1.6e7, 1, 1e20, 1e-17)])
def test_the_scale_leaves_every_bandwidth_a_finite_positive_number(bandwidth, size, horizon, factor):
    from schedkit.milp.scale import Rescaling

    # A horizon of 1e20 brought to 1,000 divides bandwidths by 1e-17: 1e300 would overflow,
    # and 1e-300 at a factor of 1e23 would underflow to 0 (before, the scaled copy was refused
    # as a problem whose bandwidth is not a finite number).
    problem = schedkit.Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": bandwidth}],
        "tasks": [{"name": "x", "work": horizon}, {"name": "y", "work": horizon}],
        "edges": [{"src": "x", "dst": "y", "size": size}]})
    scaling = Rescaling.apply(problem, horizon)
    assert scaling.factor == factor
    width = 1 / scaling.scaled.inv_bandwidth[0][1]
    assert 0 < width < float("inf") and width == pytest.approx(bandwidth / factor)
