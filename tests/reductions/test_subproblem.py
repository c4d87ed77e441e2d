"""Sub-problems and coarse problems keep what an edge's data costs, its own transfer times included."""

from schedkit import Problem
from schedkit.reductions.coarsen import coarse_problem
from schedkit.reductions.subproblem import sub_problem


def problem():
    return Problem.from_dict({
        "devices": [{"name": "g0"}, {"name": "g1"}],
        "links": [{"src": "g0", "dst": "g1", "bandwidth": 2}],
        "tasks": [{"name": n, "work": 1} for n in "abc"],
        "edges": [{"src": "a", "dst": "c", "size": 4, "transfer_times": {"g0->g1": 9}},
                  {"src": "b", "dst": "c", "size": 6}]})


def test_a_sub_problem_keeps_the_edges_transfer_times():
    p = problem()
    q = sub_problem(p, [0, 2], "part")
    (i, j, size), = q.edges
    assert q.comm_time(size, 0, 1) == 9 and q.comm_time(size, 1, 0) == 4 / 2


def test_a_coarse_edge_takes_the_longer_time_of_the_edges_it_stands_for():
    p = problem()
    q = coarse_problem(p, [[0, 1], [2]], "coarse")
    (_, _, size), = q.edges
    assert q.comm_time(size, 0, 1) == 9          # a's own time beats b's 6 / 2
    assert q.comm_time(size, 1, 0) == 6 / 2      # b's size beats a's 4 / 2


def test_stitch_under_ports_books_transfers_one_after_the_other():
    from schedkit.reductions.subproblem import stitch
    from schedkit.semantics import get_formulation
    from schedkit.validate import violations

    moirai = get_formulation("moirai")
    p = Problem.from_dict({"devices": [{"name": "a"}, {"name": "b"}],
                           "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
                           "tasks": [{"name": "s", "durations": {"a": 1}}, {"name": "x", "durations": {"b": 1}},
                                     {"name": "y", "durations": {"b": 1}}],
                           "edges": [{"src": "s", "dst": "x", "size": 2}, {"src": "s", "dst": "y", "size": 2}]})
    orders = [[0], [1, 2]]
    assert violations(p, stitch(p, [0, 1, 1], orders, "m"), moirai.blocks)   # (two sends at once on a's port)
    schedule = stitch(p, [0, 1, 1], orders, "m", moirai.timing_rules(p))
    assert not violations(p, schedule, moirai.blocks) and schedule.makespan == 6.0
