"""The ``auto`` method: one budget, the best schedule of its phases, honest status and bound."""

import json
import time

import pytest

import schedkit
from schedkit import Problem
from schedkit.auto import DEFAULT_BUDGET, AutoEvent
from schedkit.auto.phases import plan
from schedkit.auto.traits import Traits, traits_of
from schedkit.errors import OptionError
from schedkit.cli.main import main
from schedkit.generators import layered
from schedkit.methods import METHODS
from schedkit.validate import violations

from helpers.no_precedence import CHAIN_OF_FOUR, NO_PRECEDENCE
from helpers.series_cases import chain_of_four

TINY = "examples/tiny.yaml"
HETERO = "examples/hetero20.yaml"


def _layered(levels, width, devices=4, seed=0):
    return Problem.from_dict(layered(levels, width, 0.3, 0.1, devices, seed))


def test_auto_is_the_default_of_solve_and_of_the_command_line(capsys):
    schedule = schedkit.solve(Problem.load(TINY))
    assert schedule.method == "auto" and schedule.status == "optimal"
    assert main(["solve", TINY]) == 0
    assert capsys.readouterr().out.startswith("auto on tiny: status=optimal")


def test_a_proof_ends_auto_early_and_the_phases_say_who_gave_what():
    began = time.perf_counter()
    schedule = schedkit.solve(Problem.load(HETERO), "auto", threads=1)
    assert time.perf_counter() - began < 20          # the budget is 60 s: it stopped on the proof
    assert schedule.status == "optimal" and schedule.bound == pytest.approx(schedule.makespan)
    phases = [p["phase"] for p in schedule.phases]
    assert phases[0] == "incumbent" and "refine" not in phases
    assert "schedule from" in schedule.message and "bound from" in schedule.message
    for p in schedule.phases:
        assert {"phase", "method", "seconds"} <= set(p)


def test_the_schedule_file_records_the_phases(tmp_path):
    out = tmp_path / "s.json"
    assert main(["solve", HETERO, "--threads", "1", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["method"] == "auto" and data["phases"][0]["method"] in METHODS.names()
    assert main(["validate", HETERO, str(out)]) == 0


@pytest.mark.parametrize("limit", [2.0, 4.0])
def test_the_time_limit_is_wall_clock_for_the_whole_method(limit):
    problem = _layered(30, 20, seed=3)               # 600 tasks: no phase proves it in seconds
    began = time.perf_counter()
    schedule = schedkit.solve(problem, "auto", time_limit=limit)
    took = time.perf_counter() - began
    assert took <= 1.05 * limit + 2.0, f"{took:.1f} s for a limit of {limit} s"
    assert schedule.status in ("feasible", "heuristic") and schedule.tasks
    assert violations(problem, schedule) == []
    assert schedule.bound is not None and schedule.bound <= schedule.makespan


def test_a_budget_too_small_for_any_phase_still_returns_the_validated_incumbent():
    problem = _layered(10, 10, seed=1)
    schedule = schedkit.solve(problem, "auto", time_limit=0.01)
    assert schedule.status in ("heuristic", "optimal") and schedule.tasks
    assert schedule.phases[0]["phase"] == "incumbent"
    assert all("skipped" in p["note"] for p in schedule.phases if p["phase"] != "incumbent")


def test_auto_is_never_worse_than_heft():
    for seed in range(3):
        problem = _layered(6, 5, devices=3, seed=seed)
        assert schedkit.solve(problem, "auto", time_limit=5, threads=1).makespan \
            <= schedkit.solve(problem, "heft").makespan + 1e-9


def test_a_method_that_cannot_apply_is_skipped_with_one_note():
    # hetero20's capacities can bind: bridge_dp refuses them, auto goes on and proves it by MILP
    problem = Problem.load(HETERO)
    data = problem.spec.model_dump(exclude_none=True)
    for device in data["devices"]:
        device["memory"] = 1.0
    for task in data["tasks"]:
        task["memory"] = 0.1
    tight = Problem.from_dict(data)
    schedule = schedkit.solve(tight, "auto", time_limit=30, threads=1)
    bridge = [p for p in schedule.phases if p["phase"] == "bridge_dp"]
    assert len(bridge) == 1 and "memory" in bridge[0]["note"] and "makespan" not in bridge[0]
    assert schedule.status == "optimal"


def test_a_proof_of_infeasibility_is_reported_as_such():
    data = Problem.load(HETERO).spec.model_dump(exclude_none=True)
    for device in data["devices"]:
        device["memory"] = 1.0
    for task in data["tasks"]:
        task["memory"] = 0.2                         # 4 units of memory on 3 devices of 1
    schedule = schedkit.solve(Problem.from_dict(data), "auto", time_limit=30, threads=1)
    assert schedule.status == "infeasible" and not schedule.tasks
    assert "exact" in schedule.message


def test_a_progress_that_is_not_a_function_is_refused_before_any_work():
    # (it failed with "TypeError: 'int' object is not callable" at the first event)
    with pytest.raises(OptionError, match="^progress: needs a function of an AutoEvent, not int$"):
        schedkit.solve(Problem.load(HETERO), "auto", progress=5)


def test_the_progress_callback_receives_phases_incumbent_bound_and_the_end():
    events: list[AutoEvent] = []
    schedkit.solve(Problem.load(HETERO), "auto", threads=1, progress=events.append)
    assert events[-1].phase == "done"
    seen = {e.phase for e in events}
    assert "incumbent" in seen and seen & {"bridge_dp", "exact"}
    last = events[-1]
    assert last.makespan is not None and last.gap == pytest.approx(0.0, abs=1e-4)
    assert all(a.elapsed <= b.elapsed for a, b in zip(events, events[1:]))


def test_time_limit_none_lifts_the_default_budget(capsys):
    assert METHODS.get("auto").Options().time_limit == DEFAULT_BUDGET
    assert METHODS.get("auto")(time_limit=None).options.time_limit is None
    assert main(["solve", TINY, "--time-limit", "none"]) == 0
    assert capsys.readouterr().out.startswith("auto on tiny: status=optimal")


@pytest.mark.parametrize("value, method, words", [
    ("0", "auto", "greater than 0"), ("-3", "auto", "greater than 0"),
    # (a wait of 1e300 s passes the end of the platform's clock: an OverflowError's traceback)
    ("1e300", "auto", "less than or equal to 100000000"), ("1e300", "bridge_dp", "less than or equal to 100000000"),
])
def test_a_time_limit_out_of_range_is_one_line(capsys, value, method, words):
    assert main(["solve", TINY, "--time-limit", value, "-m", method]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def _shape(**changes):
    base = dict(tasks=400, devices=4, edges=900, flexible=400, cuts=0, colocate_groups=0,
                memory_limited=False, memory_tight=False, identical_groups=0, inputs=1)
    return Traits(**{**base, **changes})


@pytest.mark.parametrize("changes, phases", [
    ({}, ["kedge", "exact", "spine", "windows", "refine"]),
    ({"cuts": 12}, ["bridge_dp", "series", "kedge", "exact", "spine", "windows", "refine"]),
    ({"memory_tight": True}, ["kedge", "exact", "windows", "refine"]),   # (the spine's bounds miss memory)
    ({"tasks": 6_000}, ["kedge", "exact", "windows", "refine"]),
    ({"tasks": 30_000}, ["kedge", "exact", "refine"]),
    ({"tasks": 60}, ["exact", "refine"]),
    ({"tasks": 60, "cuts": 3}, ["bridge_dp", "series", "exact", "refine"]),
    ({"inputs": 8}, ["exact"]),
])
def test_the_plan_follows_the_structure(changes, phases):
    assert [p.name for p in plan(_shape(**changes))] == phases


def test_a_phase_needs_more_time_on_a_larger_graph():
    small, large = plan(_shape(tasks=500)), plan(_shape(tasks=10_000))
    assert large[0].name == small[0].name == "kedge" and large[0].least > small[0].least
    assert traits_of(Problem.load(HETERO)).cuts > 0


def test_phases_that_refuse_the_problem_are_skipped_before_the_time_is_shared():
    # (a chain of 80 diamonds under MOIRAI's ports: kedge refuses the 'channels' block and the
    # series search bounds every module, so the spine would add nothing. Refused when their
    # turn came, after the series search, they had kept their shares of its time)
    problem = chain_of_four(diamonds=80)
    schedule = schedkit.solve(problem, "auto", formulation="moirai", time_limit=10, threads=1)
    phases = [p["phase"] for p in schedule.phases if p["phase"] != "incumbent"]
    notes = {p["phase"]: p.get("note", "") for p in schedule.phases}
    assert notes["kedge"] == "skipped: block 'channels' is not supported by decomposition 'kedge'"
    assert notes["spine"].startswith("skipped: chain cuts split the graph into modules of at most")
    assert phases.index("kedge") < phases.index("series") and phases.index("spine") < phases.index("series")


@pytest.mark.parametrize("given, name, exact_ran", [(None, "throughput", True), ("latency", "latency", False)])
def test_a_workload_without_a_formulation_gets_one_that_splits_its_inputs(given, name, exact_ran):
    # (under the default 'latency', without 'batching', the exact phase refused the workload and
    # auto returned HEFT's schedule; a formulation given is kept)
    problem = Problem.load("examples/rwnn_diviml16.json")
    options = {} if given is None else {"formulation": given}
    schedule = schedkit.solve(problem, "auto", time_limit=4, threads=1, **options)
    exact = next(p for p in schedule.phases if p["phase"] == "exact")
    assert schedule.formulation["name"] == name
    assert ("has no 'batching' block" not in exact.get("note", "")) == exact_ran
    assert schedule.violations(problem) == []
    if exact_ran:
        assert schedule.makespan < schedkit.solve(problem, "heft").makespan


MINE = {"name": "mine", "objective": "makespan",
        "blocks": ["assignment", "placement", {"precedence": {"communication": True}},
                   {"no_overlap": {"encoding": "device"}}, "channels", {"congestion": {"resource": "both"}}]}


@pytest.mark.parametrize("given", [MINE, schedkit.get_formulation(MINE)], ids=["data", "object"])
def test_a_formulation_composed_in_python_is_taken_as_milp_takes_it(given):
    # (the option was a string only: auto, the default, refused what milp and heft accept)
    problem = Problem.load(TINY)
    schedule = schedkit.solve(problem, "auto", formulation=given, time_limit=20, threads=1)
    exact = schedkit.solve(problem, "milp", formulation=given, threads=1)
    assert schedule.formulation["name"] == "mine"
    assert schedule.status == exact.status == "optimal"
    assert schedule.makespan == pytest.approx(exact.makespan)
    assert schedule.violations(problem, schedkit.get_formulation(MINE).semantic_blocks()) == []
    with pytest.raises(OptionError, match="non-empty list of 'blocks'"):
        schedkit.solve(problem, "auto", formulation={"blocks": []})



def test_auto_claims_no_more_than_the_formulation_allows_without_precedence():
    problem = Problem.from_dict(CHAIN_OF_FOUR)
    schedule = schedkit.solve(problem, "auto", formulation=NO_PRECEDENCE, time_limit=20, threads=1)
    assert schedule.bound <= 2 + 1e-6 and schedule.status != "optimal"
    notes = {p["phase"]: p.get("note", "") for p in schedule.phases}
    assert notes["bridge_dp"].startswith("skipped: the formulation does not order the edges")
    assert notes["series"].startswith("skipped: the formulation does not order the edges")
