"""auto's windows: a window's part reproduces the incumbent; a re-solved window never makes it worse."""

import time

import pytest

from schedkit import Problem
from schedkit.auto.windows import _part_start, _start_order, window_part, window_search
from schedkit.generators import layered
from schedkit.methods import METHODS
from schedkit.validate import violations


def _milp(part, seconds, start):
    return METHODS.get("milp")(time_limit=seconds, start=start, threads=1).result(part)


def _memory_chain(n=24):
    """A chain with skip edges on four devices whose memory holds a third of it each."""
    devices = [{"name": f"a{k}", "memory": 9} for k in range(4)]
    links = [{"src": f"a{u}", "dst": f"a{v}", "bandwidth": 1} for u in range(4) for v in range(u + 1, 4)]
    tasks = [{"name": f"t{k}", "work": 1 + k % 3, "memory": 1} for k in range(n)]
    edges = [{"src": f"t{k}", "dst": f"t{k + 1}", "size": 1 + k % 4} for k in range(n - 1)]
    edges += [{"src": f"t{k}", "dst": f"t{k + 3}", "size": 2} for k in range(0, n - 3, 3)]
    return Problem.from_dict({"devices": devices, "links": links, "tasks": tasks, "edges": edges})


@pytest.mark.parametrize("make", [_memory_chain, lambda: Problem.from_dict(layered(6, 5, 0.3, 0.1, 3, 1))])
def test_the_start_of_a_part_ends_where_the_incumbent_does(make):
    p = make()
    s = METHODS.get("heft")().solve(p)
    order = _start_order(p, s)
    position = {i: k for k, i in enumerate(order)}
    assert all(position[i] < position[j] for i, j, _ in p.edges)      # predecessors first
    third = len(order) // 3
    window = order[third:2 * third]
    part = window_part(p, s, window, set(order[:third]), set(order[2 * third:]))
    start = _part_start(p, s, part, window)
    assert start is not None and not violations(part, start)
    assert start.makespan <= s.makespan + 1e-9


def test_window_search_improves_or_keeps_and_stays_valid():
    p = _memory_chain()
    s = METHODS.get("greedy")().solve(p)
    began = time.perf_counter()
    better = window_search(p, s, 20, _milp, size=8)
    assert time.perf_counter() - began < 25
    assert better is not None and better.makespan < s.makespan
    assert not violations(p, better)
    assert window_search(p, better, 0.5, _milp, size=8) is None       # no time for a window


def test_auto_runs_windows_on_a_larger_graph():
    from schedkit.auto.phases import plan
    from schedkit.auto.traits import traits_of

    p = Problem.from_dict(layered(40, 10, 0.2, 0.1, 4, 0))
    assert "windows" in [phase.name for phase in plan(traits_of(p))]



def test_under_ports_a_window_search_returns_a_schedule_that_waits_for_them():
    from schedkit.semantics import get_formulation

    moirai = get_formulation("moirai")
    p = Problem.from_dict(layered(5, 4, 0.5, 0.5, 3, 2))
    start = METHODS.get("heft")(formulation="moirai").solve(p)

    def solve(part, seconds, s):
        return METHODS.get("milp")(formulation="moirai", time_limit=seconds, start=s, threads=1).result(part)

    better = window_search(p, start, 6, solve, size=8, rules=moirai.timing_rules(p))
    assert better is None or (not violations(p, better, moirai.blocks) and better.makespan < start.makespan)
