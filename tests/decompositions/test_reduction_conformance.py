"""Every registered decomposition passes check_reduction; the kit catches a faulty one."""

import pytest

from schedkit import Problem
from schedkit.reductions import DECOMPOSITIONS, register_decomposition, unregister_decomposition
from schedkit.decompositions.merge import Merge
from schedkit.generators import rwnn
from schedkit.testing import check_reduction

#: Options that make each built-in decomposition do something on small random problems,
#: and instances for its exactness claims (solved by the MILP in well under a second).
CASES = {
    "bridge_dp": ({}, [rwnn(2, 3, seed=1), rwnn(3, 3, graph="ws", seed=2)]),
    "kedge": ({}, [rwnn(3, 4, channels=2, seed=1)]),
    "merge": ({"nodes": 3}, [rwnn(2, 3, seed=1)]),
    "fusion": ({}, [rwnn(2, 3, seed=1)]),
}


@pytest.mark.parametrize("name", DECOMPOSITIONS.names())
def test_decomposition_conformance(name):
    options, exact = CASES.get(name, ({}, []))
    check_reduction(name, options, examples=25, exact=[Problem.from_dict(d) for d in exact])


def test_every_built_in_decomposition_has_a_case():
    assert {"bridge_dp", "kedge", "merge", "fusion"} <= set(CASES) <= set(DECOMPOSITIONS.names())


class Lossy(Merge):
    """Merges, then loses the first task of the expanded schedule."""

    def invert(self, results, inverse):
        result = super().invert(results, inverse)
        rows = result.schedule.model_copy(update={"tasks": result.schedule.tasks[1:], "makespan": None})
        return result.model_copy(update={"schedule": rows.model_validate(rows.model_dump())})


class Boastful(Merge):
    """Claims its coarsening is exact (with no refinement, two nodes are not)."""

    exactness = "equivalent"


@pytest.mark.parametrize("cls, message", [(Lossy, "invalid schedule"), (Boastful, "above the optimum")])
def test_the_kit_catches_a_faulty_decomposition(cls, message):
    register_decomposition("test_faulty")(cls)
    try:
        with pytest.raises(AssertionError, match=message):
            check_reduction("test_faulty", {"nodes": 2, "refine": 0}, examples=5 if cls is Lossy else 0,
                            exact=[Problem.from_dict(rwnn(2, 3, seed=1))])
    finally:
        unregister_decomposition("test_faulty")



@pytest.mark.parametrize("name, said", [("merge", "merge merged nothing (20 tasks, at most 40 nodes asked)"),
                                        ("fusion", "fusion fused nothing")])
@pytest.mark.parametrize("inner, status", [("milp", "optimal"), ("heft", "heuristic")])
def test_a_coarsening_that_left_the_problem_as_it_is_reports_what_its_inner_method_does(name, said, inner, status):
    # (the problem itself was solved, yet merge and fusion said 'feasible', no bound, where milp proved it)
    from schedkit import solve

    p = Problem.load("examples/hetero20.yaml")
    own = solve(p, inner, threads=1)
    same = solve(p, name, inner=inner, executor="serial", inner_options={"threads": 1})
    assert same.status == own.status == status and same.message.startswith(said)
    assert same.bound == pytest.approx(own.bound) and same.makespan == pytest.approx(own.makespan)
