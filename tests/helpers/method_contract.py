"""Checks every list-scheduling and search method must pass (imported by the tests next to it)."""

from pathlib import Path

from schedkit import Problem, solve
from schedkit.problem.bounds import lower_bound
from schedkit.testing import check_method_on

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> Problem:
    """A problem of the examples folder."""
    return Problem.load(EXAMPLES / name)


def check_examples(method: str, **options) -> None:
    """Valid, labelled, with the lower bound, on tiny.yaml and on the HEFT paper's graph."""
    for name in ("tiny.yaml", "topcuoglu2002.json"):
        p = example(name)
        s = solve(p, method, **options)
        s.validate(p)
        assert s.status == "heuristic" and s.method == method
        assert s.bound == lower_bound(p)
        assert s.makespan >= s.bound - 1e-9


def check_deterministic(method: str, **options) -> None:
    """The same options give the same schedule, row for row."""
    p = example("topcuoglu2002.json")
    first = solve(p, method, **options)
    second = solve(p, method, **options)
    first.solve_seconds = second.solve_seconds = None
    assert first.to_json() == second.to_json()


def check_random(data: dict, method: str, **options):
    """On random data: the kit's check (a valid schedule or a reported failure), at or above the lower bound."""
    s = check_method_on(data, method, **options)
    if s is not None:
        assert s.makespan >= lower_bound(Problem.from_dict(data)) - 1e-9
    return s
