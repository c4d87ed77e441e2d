"""A catalogue of small instances with known optimal makespans.

The exact MILP must prove each optimum; every registered heuristic must return a
valid schedule no shorter than it.
"""

from pathlib import Path

import pytest

import schedkit
from schedkit import Problem

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def chain():
    # Three tasks in a chain on one device: 2 + 3 + 4.
    return Problem.from_dict({
        "name": "chain", "devices": [{"name": "d"}],
        "tasks": [{"name": "a", "durations": {"d": 2}}, {"name": "b", "durations": {"d": 3}},
                  {"name": "c", "durations": {"d": 4}}],
        "edges": [{"src": "a", "dst": "b", "size": 5}, {"src": "b", "dst": "c", "size": 5}],
    })


def fork_join():
    # s -> {l, r} -> t, every edge carries 1 unit (1 time unit across the link).
    # fast: s 1, l 4, r 4, t 1; slow: s 1, l 6, r 6, t 1.
    # All on fast: 1 + 4 + 4 + 1 = 10. Best split: s, r, t on slow (1 + 6 + 1 = 8, no
    # transfer on that chain) while l runs on fast [2, 6) and its data reaches t at 7 <= 7.
    # With s on fast instead, the slow branch starts at 2 and ends at 8, so t ends at >= 9.
    return Problem.from_dict({
        "name": "fork_join",
        "devices": [{"name": "fast"}, {"name": "slow"}],
        "links": [{"src": "fast", "dst": "slow", "bandwidth": 1}],
        "tasks": [{"name": "s", "durations": {"fast": 1, "slow": 1}},
                  {"name": "l", "durations": {"fast": 4, "slow": 6}},
                  {"name": "r", "durations": {"fast": 4, "slow": 6}},
                  {"name": "t", "durations": {"fast": 1, "slow": 1}}],
        "edges": [{"src": "s", "dst": "l", "size": 1}, {"src": "s", "dst": "r", "size": 1},
                  {"src": "l", "dst": "t", "size": 1}, {"src": "r", "dst": "t", "size": 1}],
    })


def comm_decides(size=10):
    # 'load' runs on the cpu; 'work' takes 1 on the gpu, 5 on the cpu. Moving its input
    # (size 10 at bandwidth 1, latency 0.5) costs 10.5: gpu 1 + 10.5 + 1 = 12.5 > cpu 1 + 5 = 6.
    return Problem.from_dict({
        "name": f"comm{size}",
        "devices": [{"name": "gpu"}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1, "latency": 0.5}],
        "tasks": [{"name": "load", "durations": {"cpu": 1}},
                  {"name": "work", "durations": {"gpu": 1, "cpu": 5}}],
        "edges": [{"src": "load", "dst": "work", "size": size}],
    })


def example(name):
    return lambda: Problem.load(EXAMPLES / name)


#: (id, problem factory, formulation, optimum, time limit)
CATALOGUE = [
    ("chain", chain, "latency", 9.0, None),
    ("fork_join", fork_join, "latency", 8.0, None),
    ("comm_cpu", comm_decides, "latency", 6.0, None),
    ("topcuoglu2002", example("topcuoglu2002.json"), "latency", 73.0, None),
    ("ft06", example("ft06.json"), "jssp", 55.0, None),
    ("la01", example("la01.json"), "jssp", 666.0, 60),
]
SMALL = [c for c in CATALOGUE if c[0] != "la01"]

#: Every registered heuristic (tests/test_registry.py checks that none is missing).
HEURISTICS = (
    "annealing", "evolution", "greedy", "heft", "met",
    "batch_split+fifo", "batch_split+msr", "batch_split+pct",
    "critical_path+fifo", "critical_path+msr", "critical_path+pct",
    "dfs+fifo", "dfs+msr", "dfs+pct",
    "hash+fifo", "hash+msr", "hash+pct",
    "mite+fifo", "mite+msr", "mite+pct",
)


@pytest.mark.parametrize("case", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_milp_proves_the_known_optimum(case):
    _, make, formulation, optimum, time_limit = case
    p = make()
    s = schedkit.solve(p, "milp", formulation=formulation, time_limit=time_limit)
    assert s.status == "optimal"
    assert s.makespan == pytest.approx(optimum, abs=1e-6)
    assert s.bound == pytest.approx(s.makespan, rel=1e-4)  # HiGHS stops at a relative gap of 1e-4
    assert s.violations(p) == []


def test_communication_decides_the_placement():
    far = schedkit.solve(comm_decides(size=10), "milp")
    assert far.placement()["work"] == "cpu" and far.makespan == pytest.approx(6.0)
    # With little data the gpu wins: 1 + (1 + 0.5) + 1.
    near = schedkit.solve(comm_decides(size=1), "milp")
    assert near.placement()["work"] == "gpu" and near.makespan == pytest.approx(3.5)
    assert near.status == "optimal"


def test_fork_join_optimal_placement():
    s = schedkit.solve(fork_join(), "milp")
    where = s.placement()
    # The long chain stays on one device, the other branch goes to the fast one.
    assert where["s"] == where["t"]
    assert where["l"] != where["r"]


def test_catalogue_lists_the_heuristic_methods():
    assert set(HEURISTICS) <= set(schedkit.methods.METHODS.names())


@pytest.mark.parametrize("method", HEURISTICS)
def test_heuristic_is_valid_and_not_below_the_optimum(method):
    for name, make, _, optimum, _ in SMALL:
        p = make()
        s = schedkit.solve(p, method)
        assert s.violations(p) == [], f"{method} on {name}"
        assert s.makespan >= optimum - 1e-6, f"{method} on {name}: {s.makespan} < optimum {optimum}"
