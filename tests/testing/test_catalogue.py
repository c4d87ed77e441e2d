"""The catalogue of instances with known optima (schedkit.testing.instances) and what it shows.

Every method runs over it in tests/integration/test_conformance.py; here: the instances themselves
and two optimal placements that a user can check by hand.
"""

import json
from pathlib import Path

import pytest

import schedkit
from schedkit.testing.instances import CATALOGUE, comm_decides, instance

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["topcuoglu2002", "ft06", "la01"])
def test_catalogue_instances_equal_the_example_files(name):
    assert instance(name).make() == json.loads((EXAMPLES / f"{name}.json").read_text())


@pytest.mark.parametrize("case", [c for c in CATALOGUE if c.small], ids=lambda c: c.name)
def test_milp_proves_the_known_optimum(case):
    p = case.problem()
    s = schedkit.solve(p, "milp", formulation=case.formulation)
    assert s.status == "optimal"
    assert s.makespan == pytest.approx(case.optimum, abs=1e-6)
    assert s.bound == pytest.approx(s.makespan, rel=1e-4)  # HiGHS stops at a relative gap of 1e-4
    assert s.violations(p) == []


def test_communication_decides_the_placement():
    far = schedkit.solve(schedkit.Problem.from_dict(comm_decides(size=10)), "milp")
    assert far.placement()["work"] == "cpu" and far.makespan == pytest.approx(6.0)
    # With little data the gpu wins: 1 + (1 + 0.5) + 1.
    near = schedkit.solve(schedkit.Problem.from_dict(comm_decides(size=1)), "milp")
    assert near.placement()["work"] == "gpu" and near.makespan == pytest.approx(3.5)
    assert near.status == "optimal"


def test_fork_join_optimal_placement():
    s = schedkit.solve(instance("fork_join").problem(), "milp")
    where = s.placement()
    # The long chain stays on one device, the other branch goes to the fast one.
    assert where["s"] == where["t"]
    assert where["l"] != where["r"]


def test_unknown_instance_is_a_clear_error():
    with pytest.raises(schedkit.SchedkitError, match="unknown catalogue instance 'nosuch' .known: chain"):
        instance("nosuch")
