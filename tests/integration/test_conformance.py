"""Every registered variable family and method passes the conformance kit; the kit catches faults."""

import pytest

from schedkit.methods import METHODS
from schedkit.milp.families import FAMILIES, Family, register_family
from schedkit.testing import CATALOGUE, check_family, check_method, instance

#: Problems every family is checked on: communication, a job shop, memory and collocation.
FAMILY_CASES = ["topcuoglu2002", "ft06", "fork_join"]


@pytest.mark.parametrize("name", FAMILIES.names())
@pytest.mark.parametrize("case", FAMILY_CASES)
def test_family_conformance(name, case):
    check_family(name, instance(case).problem())


@pytest.mark.parametrize("name", METHODS.names())
def test_method_conformance(name):
    # One thread: the same options must give the same schedule twice.
    check_method(name, **({"threads": 1} if name in ("milp", "auto") else {}))


def test_milp_proves_every_optimum_of_the_catalogue():
    check_method("milp", [c for c in CATALOGUE if not c.small], threads=1)


def test_the_kit_catches_a_family_whose_read_moves_tasks():
    @register_family("x", replace=True)
    class Shifted(FAMILIES.get("x")):
        def read(self, values, draft):
            super().read(values, draft)
            draft.device_of = [allowed[-1] for allowed in self.ctx.problem.allowed]

    original = FAMILIES.get("x").__mro__[1]
    try:
        with pytest.raises(AssertionError, match="read\\(warm\\(s\\)\\) moves"):
            check_family("x", instance("fork_join").problem())
    finally:
        FAMILIES.register("x", original, replace=True)
    assert FAMILIES.get("x") is original and issubclass(original, Family)
