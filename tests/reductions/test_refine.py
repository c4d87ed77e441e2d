"""refined: device moves of ever smaller units while the list schedule gets shorter."""

import time

from schedkit import Problem, solve
from schedkit.reductions.refine import refined
from schedkit.generators import layered
from schedkit.timing import to_schedule


def tiny_on_cpu():
    p = Problem.load("examples/tiny.yaml")
    return p, to_schedule(p, [1] * 6, [0.0, 1.8, 11.3, 22.3, 22.9, 28.9], "cpu")


def test_a_serial_schedule_is_refined_to_the_optimum():
    p, on_cpu = tiny_on_cpu()
    better = refined(p, on_cpu, [[0, 1, 2, 3], [4, 5]], seconds=10, method="refined")
    better.validate(p)
    assert better.makespan == solve(p, "milp", threads=1).makespan
    assert better.method == "refined"


def test_nothing_to_gain_or_no_time_returns_the_schedule_itself():
    p, on_cpu = tiny_on_cpu()
    assert refined(p, on_cpu, [[0, 1, 2, 3], [4, 5]], seconds=0, method="x") is on_cpu
    best = refined(p, on_cpu, [[0, 1, 2, 3], [4, 5]], seconds=10, method="x")
    assert refined(p, best, [[0, 1, 2, 3], [4, 5]], seconds=10, method="x") is best


def test_collocation_groups_move_whole_and_memory_is_never_exceeded():
    data = Problem.load("examples/tiny.yaml").spec.model_dump(mode="json", exclude_none=True)
    data["tasks"][1]["colocate"] = data["tasks"][2]["colocate"] = "attn_mlp"   # attn with mlp
    data["devices"][0]["memory"] = 3.0e8    # the gpu holds embed and one of attn, mlp, logits
    p = Problem.from_dict(data)
    on_cpu = to_schedule(p, [1] * 6, [0.0, 1.8, 11.3, 22.3, 22.9, 28.9], "cpu")
    better = refined(p, on_cpu, [[i] for i in range(6)], seconds=10, method="x")
    better.validate(p)      # memory and collocation included
    where = better.placement()
    assert where["attn"] == where["mlp"] and better.makespan < on_cpu.makespan - 1.0


def test_the_time_limit_is_kept_on_a_large_graph():
    p = Problem.from_dict(layered(100, 10, edge_prob=0.1, long_range_prob=0.1, devices=4, seed=0))
    start = to_schedule(p, *_all_on(p, 0), "one device")
    began = time.perf_counter()
    better = refined(p, start, [list(range(k, k + 50)) for k in range(0, 1000, 50)], seconds=1.0, method="x")
    assert time.perf_counter() - began < 3.0
    better.validate(p)
    assert better.makespan < start.makespan


def _all_on(p, d):
    starts, t = [0.0] * len(p.tasks), 0.0
    for i in p.topological_order:
        starts[i], t = t, t + p.durations[i][d]
    return [d] * len(p.tasks), starts


def test_a_move_that_keeps_the_makespan_but_frees_time_is_taken():
    # Four unit tasks, two on each of a and b; c and d idle. No single move shortens the
    # makespan (the other device still ends at 2); moving one task off a keeps it and
    # lowers the sum of the ends, and then one off b halves it.
    p = Problem.from_dict({"name": "pairs", "devices": [{"name": d} for d in "abcd"],
                           "tasks": [{"name": f"t{k}", "work": 1.0} for k in range(4)]})
    paired = to_schedule(p, [0, 0, 1, 1], [0.0, 1.0, 0.0, 1.0], "paired")
    assert paired.makespan == 2.0
    better = refined(p, paired, [[k] for k in range(4)], seconds=10, method="x")
    better.validate(p)
    assert better.makespan == 1.0


def test_windows_re_placed_by_earliest_finish_leave_a_local_optimum_of_single_moves():
    # From every task on device 0, moves of single tasks stop at 8.32 on this 3 x 3
    # layered graph; re-placing windows of the order by earliest finish (HEFT's rule, the
    # other tasks kept) reaches the proven optimum.
    p = Problem.from_dict(layered(3, 3, edge_prob=0.3, long_range_prob=0.1, devices=3, seed=1))
    start = to_schedule(p, *_all_on(p, 0), "one device")
    better = refined(p, start, [[i] for i in range(len(p.tasks))], seconds=10, method="x")
    better.validate(p)
    optimum = solve(p, "milp", threads=1)
    assert optimum.status == "optimal"
    assert better.makespan == optimum.makespan


def test_a_swap_balances_two_devices_where_no_single_move_can():
    # Six independent tasks on two devices: from all on device 0, moves and windows stop
    # at 7.58 (any further move overloads the other device); swapping a task of the
    # device that ends last with one of the other reaches the proven optimum.
    p = Problem.from_dict(layered(1, 6, edge_prob=0.3, long_range_prob=0.1, devices=2, seed=1))
    assert not p.edges
    better = refined(p, to_schedule(p, *_all_on(p, 0), "one device"), [[i] for i in range(6)], seconds=10,
                     method="x")
    better.validate(p)
    optimum = solve(p, "milp", threads=1)
    assert optimum.status == "optimal"
    assert better.makespan == optimum.makespan


def test_a_graph_too_large_for_moves_gets_the_windows_alone(monkeypatch):
    import schedkit.reductions.refine as refine

    p = Problem.from_dict(layered(20, 10, edge_prob=0.2, long_range_prob=0.1, devices=4, seed=1))
    start = to_schedule(p, *_all_on(p, 0), "one device")
    monkeypatch.setattr(refine, "TIMING_SECONDS", 1.0)  # every graph is "too large" for the full search
    monkeypatch.setattr(refine, "_Search", None)        # (which then never starts)
    better = refined(p, start, [list(range(len(p.tasks)))], seconds=5.0, method="x")
    better.validate(p)
    assert better.makespan < start.makespan
    assert refined(p, better, [], seconds=0.0, method="x") is better


def test_under_congestion_the_candidates_wait_for_their_ports():
    # MOIRAI's GoogLeNet: transfers hold device ports. A refinement timed without the ports
    # finds 'shorter' schedules that the formulation rejects; timed by its rules, every
    # schedule it returns keeps the ports free of overlaps.
    from schedkit.milp.formulation import get_formulation
    from schedkit.validate import violations

    p = Problem.load("examples/googlenet_moirai.json")
    moirai = get_formulation("moirai")
    start = solve(p, "heft", formulation="moirai")
    better = refined(p, start, [[i] for i in range(len(p.tasks))], seconds=3, method="refined",
                     rules=moirai.timing_rules(p))
    assert better.makespan < start.makespan
    assert violations(p, better, moirai.blocks) == []
    # without the rules the local search ignores the ports: the validator says so
    unaware = refined(p, start, [[i] for i in range(len(p.tasks))], seconds=3, method="refined")
    assert any("congestion" in v for v in violations(p, unaware, moirai.blocks))


def test_a_memory_timeline_is_not_refined():
    from schedkit.timing import TimingRules

    p, on_cpu = tiny_on_cpu()
    rules = TimingRules(memory="deltas")
    assert refined(p, on_cpu, [[0, 1, 2, 3], [4, 5]], seconds=5, method="x", rules=rules) is on_cpu
