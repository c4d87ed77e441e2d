"""Block ``batching``: golden LP, conformance, optima by hand, one input = the latency problem,
the limit of batches per device, the objective ``throughput``."""

import json

import pytest
from helpers.batched_cases import CHAIN
from helpers.block_cases import BATCHED, check_golden

from schedkit import Formulation, Problem, solve
from schedkit.blocks import Batching
from schedkit.errors import SchedkitError
from schedkit.milp import get_formulation
from schedkit.milp.portfolio import cpsat_installed

needs_cpsat = pytest.mark.skipif(not cpsat_installed(), reason="OR-Tools is not installed")


def test_golden_lp(tmp_path):
    text = check_golden("batching", tmp_path)
    assert "input_once" in text and "input_after" in text


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_the_optimum_batches_both_inputs_on_the_gpu(solver):
    # one batch of 2 per task on the gpu: 1.5 + 1.5; splitting a over gpu and cpu costs more
    s = solve(Problem.from_dict(BATCHED), "milp", formulation="throughput", solver=solver, warm_start="none")
    assert (s.status, s.makespan) == ("optimal", pytest.approx(3.0))
    assert sorted((r.task, r.device, r.inputs) for r in s.tasks) == [("a", "gpu", [0, 1]), ("b", "gpu", [0, 1])]
    assert s.summary().split()[5] == "throughput=0.666667"


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_more_batches_per_device_may_do_better(solver):
    # a's inputs in two batches on the gpu (ends 1 and 2) let b start input 0 early on the cpu
    # (1.1 to 4.1) and input 1 on the gpu (2 to 5); one batch of a ends at 2: 2.1 + 3 = 5.1
    data = {**BATCHED, "devices": [{"name": "gpu", "batch_sizes": [1, 2]}, {"name": "cpu"}],
            "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 10}],
            "tasks": [{"name": "a", "durations": {"gpu": {1: 1, 2: 2}, "cpu": 5}},
                      {"name": "b", "durations": {"gpu": {1: 3, 2: 6}, "cpu": 3}}]}
    p = Problem.from_dict(data)
    one = solve(p, "milp", formulation="throughput", solver=solver, warm_start="none")
    free = Formulation.from_data({**get_formulation("throughput").to_data(), "name": "free",
                                  "blocks": ["assignment", {"batching": {"max_batches_per_device": None}},
                                             "precedence", "no_overlap"]})
    two = solve(p, "milp", formulation=free, solver=solver, warm_start="none")
    assert (one.status, two.status) == ("optimal", "optimal")
    assert (one.makespan, two.makespan) == (pytest.approx(5.1), pytest.approx(5.0))
    assert Batching().violations(p, two) and not Batching(max_batches_per_device=None).violations(p, two)


@pytest.mark.parametrize("name", ["examples/tiny.yaml", "examples/topcuoglu2002.json"])
def test_one_input_under_throughput_is_the_latency_problem(name):
    p = Problem.load(name)
    batched = solve(p, "milp", formulation="throughput", solver="highs", time_limit=60)
    latency = solve(p, "milp", formulation="latency", solver="highs", time_limit=60)
    assert batched.status == latency.status == "optimal"
    assert batched.makespan == pytest.approx(latency.makespan, rel=1e-6)


def test_the_milp_is_never_worse_than_the_batched_heuristics_it_starts_from():
    p = Problem.from_dict(CHAIN)
    exact = solve(p, "milp", formulation="throughput", solver="highs", time_limit=60)
    for name in ("met", "greedy", "heft"):
        heuristic = solve(p, name, formulation="throughput")   # one batch per task and device
        assert exact.makespan <= heuristic.makespan + 1e-9
    assert exact.status == "optimal" and exact.bound <= exact.makespan


UNDEFINED = {"channels": ["channels"], "congestion": ["channels", "congestion"],
             "memory_timeline": ["memory_timeline"]}


@pytest.mark.parametrize("kind", list(UNDEFINED))
def test_batching_refuses_blocks_it_does_not_define_yet(kind):
    # Refused when the formulation is made: no method, no solve, no export gets it.
    first = UNDEFINED[kind][0]  # (congestion needs channels, named first)
    with pytest.raises(SchedkitError, match=f"block '{first}' does not combine with 'batching' yet"):
        Formulation.from_data({"blocks": ["assignment", "batching", "precedence", "no_overlap",
                                          *UNDEFINED[kind]]})


@pytest.mark.parametrize("method", ["milp", "heft", "annealing", "auto"])
@pytest.mark.parametrize("kind", list(UNDEFINED))
@pytest.mark.parametrize("command", ["solve", "export"])
def test_batching_with_an_undefined_block_is_refused_before_the_solve(tmp_path, capfd, method, kind, command):
    from schedkit.cli.main import main

    problem = tmp_path / "p.json"
    data = {**BATCHED, "tasks": [{**t, "activation_memory": 1} for t in BATCHED["tasks"]]}
    problem.write_text(json.dumps(data))
    with_batching = tmp_path / "f.yaml"
    with_batching.write_text("objective: throughput\nblocks: [assignment, batching, precedence, "
                             f"no_overlap, {', '.join(UNDEFINED[kind])}]\n")
    without = tmp_path / "g.yaml"  # the workload asks for batches all the same
    without.write_text(f"blocks: [assignment, precedence, no_overlap, {', '.join(UNDEFINED[kind])}]\n")
    first = UNDEFINED[kind][0]  # (congestion needs channels, named first)
    for formulation, words in [(with_batching, f"block '{first}' does not combine with 'batching' yet"),
                               (without, f"does not combine with batching yet (the workload asks for 2")]:
        out = tmp_path / ("m.lp" if command == "export" else "s.json")
        argv = [command, str(problem), "-f", str(formulation), "-o", str(out)]
        if command == "solve":
            argv += ["-m", method, "--time-limit", "20"]
        elif method != "milp" or formulation is without:
            continue  # (export builds the MILP of a formulation; without batching it refuses the workload)
        code = main(argv)
        err = capfd.readouterr().err
        errors = [line for line in err.splitlines() if not line.startswith("schedkit: note: ")]
        assert code == 1 and words in err and len(errors) == 1 and not out.exists(), err


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
@pytest.mark.parametrize("by", ["tasks", "batches", "busy_time"])
def test_symmetry_orders_batch_slots_without_changing_the_optimum(by, solver):
    # two identical gpus (one group): the optimum splits a's and b's inputs over both or not
    gpu = {"batch_sizes": [1, 2], "group": "gpu"}
    data = {**BATCHED, "workload": {"inputs": 3},
            "devices": [{"name": "g0", **gpu}, {"name": "g1", **gpu}, {"name": "cpu"}],
            "links": [{"src": "g0", "dst": "g1", "bandwidth": 1}, {"src": "g0", "dst": "cpu", "bandwidth": 1},
                      {"src": "g1", "dst": "cpu", "bandwidth": 1}],
            "tasks": [{"name": t, "durations": {"g0": {1: 1, 2: 1.5}, "g1": {1: 1, 2: 1.5}, "cpu": 2}}
                      for t in "ab"]}
    p = Problem.from_dict(data)
    blocks = ["assignment", "batching", "precedence", "no_overlap"]
    plain = solve(p, "milp", formulation=Formulation.from_data({"name": "plain", "objective": "throughput",
                                                                "blocks": blocks}), solver=solver)
    ordered = solve(p, "milp", formulation=Formulation.from_data(
        {"name": "ordered", "objective": "throughput", "blocks": blocks + [{"symmetry": {"by": by}}]}),
        solver=solver)
    assert plain.status == ordered.status == "optimal"
    assert ordered.makespan == pytest.approx(plain.makespan)
    rows = {d: [r for r in ordered.tasks if r.device == d] for d in ("g0", "g1")}
    measure = {"tasks": lambda rs: len({r.task for r in rs}), "batches": len,
               "busy_time": lambda rs: sum(r.end - r.start for r in rs)}[by]
    assert measure(rows["g0"]) >= measure(rows["g1"])    # the canonical order


def test_describe_says_which_rows_batching_builds():
    text = get_formulation("throughput").describe()
    assert "`batch`" in text and "`timing`" not in text
    # assignment, placement, precedence, no_overlap, memory and the cuts
    assert text.count("In this formulation `batching` builds these rows") == 6
