"""``formulation_bound``: what a formulation's blocks let the problem's bounds claim."""

from hypothesis import given, settings
from hypothesis import strategies as st

from schedkit import Problem, solve
from schedkit.milp import Formulation, get_formulation
from schedkit.problem.bounds import formulation_bound, lower_bound

# independent tasks (no edge), each on one or both of two devices
durations = st.lists(st.tuples(st.integers(1, 9), st.one_of(st.none(), st.integers(1, 9))),
                     min_size=1, max_size=5)


def _bag(times) -> Problem:
    tasks = [{"name": f"t{k}", "durations": {"a": a, **({} if b is None else {"b": b})}}
             for k, (a, b) in enumerate(times)]
    return Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}], "tasks": tasks})


def test_a_problem_with_no_edge_is_bounded_by_durations_and_loads():
    # (precedence does not apply without edges; before, the bound fell to 0 and heft's gap to 100 %)
    p = _bag([(3, 5), (2, 4), (2, None)])
    assert formulation_bound(p, get_formulation("latency").blocks) == lower_bound(p) == 13 / 3
    one = _bag([(1, 2)])
    s = solve(one, "heft")
    assert (s.makespan, s.bound) == (1.0, 1.0)


def test_without_a_block_that_keeps_tasks_apart_nothing_is_claimed():
    p = _bag([(3, 5), (2, 4), (2, None)])
    assert formulation_bound(p, Formulation.from_data({"blocks": ["assignment"]}).blocks) == 0.0


@settings(max_examples=25, deadline=None)
@given(durations)
def test_the_bound_of_a_bag_of_tasks_never_exceeds_the_proven_optimum(times):
    p = _bag(times)
    best = solve(p, "milp", time_limit=20, threads=1)
    assert best.status == "optimal"
    assert formulation_bound(p, get_formulation("latency").blocks) <= best.makespan + 1e-9
