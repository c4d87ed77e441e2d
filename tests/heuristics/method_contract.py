"""Checks every list-scheduling and search method must pass (imported by the tests next to it)."""

from pathlib import Path

from schedkit import Problem, ProblemError, solve
from schedkit.problem.bounds import lower_bound

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
    """On random data: a valid schedule at or above the lower bound, or a ProblemError."""
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        return None
    try:
        s = solve(p, method, **options)
    except ProblemError:
        return None
    assert not s.violations(p)
    assert s.makespan >= lower_bound(p) - 1e-9
    return s
