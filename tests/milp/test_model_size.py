"""A model too large for the time or memory at hand is not built: the best start schedule is returned."""

import pytest

import schedkit
from schedkit import Problem
import schedkit.milp.model_size as sizes
from schedkit.generators import erdos_renyi, layered
from schedkit.milp import Milp, get_formulation
from schedkit.milp.model_size import model_size, too_large

CASES = [("hetero20", lambda: schedkit.Problem.load("examples/hetero20.yaml")),
         ("er60", lambda: schedkit.Problem.from_dict(erdos_renyi(60, 0.2, 4, seed=1))),
         ("er120-dense", lambda: schedkit.Problem.from_dict(erdos_renyi(120, 0.4, 3, seed=2))),
         ("layered", lambda: schedkit.Problem.from_dict(layered(8, 10, 0.4, 0.2, 4, seed=3)))]


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_the_estimate_is_within_a_factor_of_two(name, make):
    problem = make()
    formulation = get_formulation("latency")
    built = formulation.build(problem)
    actual = built.linear.num_nonzeros
    assert actual / 2 <= model_size(formulation, problem) <= 2 * actual


def test_the_congestion_estimate_is_within_a_factor_of_two():
    # Pairs of transfers that may share several ports (four devices): the rows of each pair
    # and resource count, not just the pairs (GoogLeNet: 106 k congestion nonzeros).
    problem = schedkit.Problem.load("examples/googlenet_moirai.json")
    formulation = get_formulation("moirai")
    built = formulation.build(problem)
    congestion = next(b for b in formulation.blocks if b.kind == "congestion")
    actual = sum(built.linear.row_start[r + 1] - built.linear.row_start[r]
                 for (block, _), group in built.linear.row_groups.items() if block == "congestion"
                 for r in group.indices)
    assert actual / 2 <= congestion.estimate(problem) <= 2 * actual
    assert built.linear.num_nonzeros / 2 <= model_size(formulation, problem) <= 2 * built.linear.num_nonzeros


def test_too_large_names_time_and_memory():
    assert too_large(1000, seconds_left=0.01, memory=10**9) is None          # quick builds always
    assert "s to build (half of the 10 s left" in too_large(10**7, seconds_left=10.0, memory=10**12)
    assert "GB free" in too_large(10**7, seconds_left=None, memory=10**8)
    assert too_large(10**7, seconds_left=None, memory=10**12) is None


def test_a_model_too_slow_to_build_returns_the_start_schedule(monkeypatch):
    monkeypatch.setattr(sizes, "BUILD_SECONDS_PER_NONZERO", 1.0)            # every model is huge
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    schedule = schedkit.solve(problem, "milp", time_limit=5, solver="highs")
    assert schedule.status == "heuristic" and schedule.tasks
    assert "the model would hold about" in schedule.message and "best start schedule" in schedule.message
    assert schedule.bound is not None and schedule.bound <= schedule.makespan
    assert schedule.violations(problem) == []


def test_a_model_too_big_for_memory_without_any_schedule_is_refused(monkeypatch):
    # The list schedules run out of memory on this packing (5 + 4 on one device leaves no room
    # for 6); the MILP alone would find {5, 5} and {4, 6}, but memory is "too small" for it.
    data = {"name": "pack", "devices": [{"name": "a", "memory": 10}, {"name": "b", "memory": 10}],
            "tasks": [{"name": f"t{i}", "work": 1, "memory": m} for i, m in enumerate([5, 5, 4, 6])]}
    problem = schedkit.Problem.from_dict(data)
    assert schedkit.solve(problem, "milp", warm_start="none").makespan == 2
    monkeypatch.setattr(sizes, "BYTES_PER_NONZERO", 10**12)  # (HiGHS's copy: CP-SAT's is smaller)
    with pytest.raises(schedkit.SchedkitError, match=r"GB free is the most\), and no heuristic schedule satisfies "
                                                     r"formulation 'latency'"):
        schedkit.solve(problem, "milp", warm_start="none", solver="highs")
    # By default (auto), CP-SAT takes the model HiGHS cannot: it needs no pairwise big-M rows.
    schedule = schedkit.solve(problem, "milp", warm_start="none", solver="auto", threads=2)
    assert (schedule.status, schedule.makespan) == ("optimal", 2)
    assert "GB free is the most): CP-SAT alone" in schedule.message


def test_under_auto_a_model_too_slow_to_build_goes_to_cpsat_alone(monkeypatch):
    monkeypatch.setattr(sizes, "BUILD_SECONDS_PER_NONZERO", 1.0)
    problem = schedkit.Problem.load("examples/ft06.json")
    schedule = schedkit.solve(problem, "milp", formulation="jssp", time_limit=30, solver="auto", threads=2)
    assert (schedule.status, schedule.makespan) == ("optimal", 55)
    assert "the model would hold about" in schedule.message and "CP-SAT alone" in schedule.message


def test_the_time_limit_bounds_the_whole_method(monkeypatch):
    problem = schedkit.Problem.from_dict(erdos_renyi(40, 0.2, 4, seed=3))
    schedule = Milp(time_limit=2).solve(problem)
    assert schedule.solve_seconds < 2 + 1.5   # HiGHS may overrun its own limit a little
    assert schedule.status in ("optimal", "feasible")


def test_running_out_of_memory_returns_the_start_schedule_saying_so(monkeypatch):
    import schedkit.milp.solvers.highs as highs

    def exhausted(*args, **kwargs):
        raise MemoryError("std::bad_alloc")

    monkeypatch.setattr(highs, "highs_for", exhausted)
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    schedule = schedkit.solve(problem, "milp", time_limit=5, solver="highs")
    assert schedule.status == "heuristic" and "ran out of memory" in schedule.message
    assert schedule.violations(problem) == []


@pytest.mark.parametrize("solver", ["highs", "cpsat", "auto"])
@pytest.mark.parametrize("huge", [1e15, 1e12, 1e300])
def test_a_choice_longer_than_the_start_schedule_never_reaches_the_solver(solver, huge):
    # one absurd duration beside durations of 1: HiGHS rejected the model ("HiGHS rejected the model")
    problem = Problem.from_dict({
        "devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
        "tasks": [{"name": "t1", "durations": {"a": huge, "b": 1}}, {"name": "t2", "durations": {"a": 1, "b": 1}}],
        "edges": [{"src": "t1", "dst": "t2", "size": 1}]})
    schedule = Milp(solver=solver, threads=1 if solver == "highs" else None).solve(problem)
    assert schedule.status == "optimal" and schedule.makespan == 2 and schedule.placement()["t1"] == "b"


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_the_cpsat_estimate_is_within_a_factor_of_two(name, make):
    from ortools.sat.python import cp_model

    from schedkit.milp.model_size import cp_model_size
    from schedkit.cpsat.context import CpContext
    from schedkit.cpsat.solve import make_job

    problem, formulation = make(), get_formulation("latency")
    job = make_job(problem, formulation, None)
    model = cp_model.CpModel()
    cp = CpContext(model, problem, job.ticks, job.horizon)
    for block in formulation.building():
        if block.role != "cut" and block.applies_to(problem):
            block.build_cp(cp)
    proto = model.Proto()
    actual = len(proto.constraints) + len(proto.variables)
    assert actual / 2 <= cp_model_size(formulation, problem) <= 2 * actual


@pytest.mark.parametrize("solver", ["cpsat", "auto"])
def test_a_cpsat_model_too_slow_to_build_returns_the_start_schedule(monkeypatch, solver):
    # Every model is huge: CP-SAT, alone or in the race, is not started (its worker would
    # build and load for minutes past the limit: 48 s on 10,000 tasks for a 5 s limit).
    monkeypatch.setattr(sizes, "BUILD_SECONDS_PER_NONZERO", 1.0)
    monkeypatch.setattr(sizes, "CP_SECONDS_PER_CONSTRAINT", 1.0)
    problem = schedkit.Problem.load("examples/hetero20.yaml")
    schedule = schedkit.solve(problem, "milp", time_limit=5, solver=solver)
    assert schedule.status == "heuristic" and schedule.tasks and schedule.violations(problem) == []
    assert "the CP-SAT model would hold about" in schedule.message
    assert ("the model would hold about" in schedule.message) == (solver == "auto")
    assert schedule.solve_seconds < 5


@pytest.mark.parametrize("size,bandwidth,latency", [(1e300, 1e-300, 0.0), (1e308, 0.1, 0.0), (1.0, 1.0, 1.7e308)])
def test_a_transfer_time_that_overflows_is_refused_on_load_naming_the_edge(size, bandwidth, latency):
    data = {"name": "overflow", "devices": [{"name": "a"}, {"name": "b"}],
            "links": [{"src": "a", "dst": "b", "bandwidth": bandwidth, "latency": latency}],
            "tasks": [{"name": "t0", "work": 1}, {"name": "t1", "work": 1}, {"name": "t2", "work": 1}],
            "edges": [{"src": "t0", "dst": "t1", "size": 1.0}, {"src": "t1", "dst": "t2", "size": size}]}
    if latency:  # (then two latencies along a route overflow: one link still takes a finite time)
        data["devices"].append({"name": "c"})
        data["links"].append({"src": "b", "dst": "c", "bandwidth": 1.0, "latency": latency})
    with pytest.raises(schedkit.ProblemError, match=r"edge t\d->t\d: its size .* from . to . takes longer than "
                                                    r"any number \(the transfer time overflows to infinity\)"):
        Problem.from_dict(data)


@pytest.mark.parametrize("huge", [1e19, 1e300])
def test_times_beyond_cpsat_integers_are_one_line_alone_and_highs_alone_in_the_race(huge):
    problem = Problem.from_dict({
        "name": "huge", "devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": 1}],
        "tasks": [{"name": "t1", "durations": {"a": huge, "b": huge}}, {"name": "t2", "durations": {"a": 1, "b": 1}}],
        "edges": [{"src": "t1", "dst": "t2", "size": 1}]})
    with pytest.raises(schedkit.SolverError, match=r"CP-SAT counts time in integers up to 1e\+18: problem 'huge' "
                                                   r"needs a horizon of .*; its longest task, 't1', takes"):
        Milp(solver="cpsat").solve(problem)
    schedule = Milp(solver="auto").solve(problem)   # (HiGHS races alone)
    assert schedule.status == "optimal" and schedule.makespan == huge + 1


@pytest.mark.parametrize("solver", ["highs", "auto"])
def test_a_highs_that_does_not_stop_at_its_limit_is_left_behind(monkeypatch, solver):
    # HiGHS's MIP presolve does not look at the clock (MSR's Inception-v2: 220 s for a 60 s
    # limit): here its run starts 30 s late, which it cannot know about.
    import time

    import highspy

    original = highspy.Highs.run

    def late(self, *args, **kwargs):
        time.sleep(30)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(highspy.Highs, "run", late)
    problem = Problem.from_dict(erdos_renyi(40, 0.2, 4, seed=3))
    began = time.perf_counter()
    schedule = Milp(solver=solver, time_limit=3, warm_start="heft", lns_seconds=0).solve(problem)
    assert time.perf_counter() - began < 3 * 1.05 + 2   # (half a second late, as long a grace)
    # (racing, CP-SAT may prove the optimum while HiGHS is stuck)
    assert schedule.status in (("heuristic", "feasible") if solver == "highs" else ("heuristic", "feasible", "optimal"))
    assert schedule.tasks and schedule.violations(problem) == []
    if solver == "highs":
        assert "HiGHS did not stop at its time limit (in its presolve): it was left behind" in schedule.message


def test_the_command_line_ends_at_once_with_a_highs_left_behind(tmp_path):
    import json
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = ("import sys, time, highspy\n"
              "run = highspy.Highs.run\n"
              "highspy.Highs.run = lambda self, *a, **k: (time.sleep(60), run(self, *a, **k))[1]\n"
              f"sys.argv = ['schedkit', 'solve', 'examples/hetero20.yaml', '-m', 'milp', '--solver', 'highs', "
              f"'--time-limit', '2', '-o', {str(tmp_path / 's.json')!r}]\n"
              "from schedkit.cli.main import main\n"
              "sys.exit(main())\n")
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60)
    assert time.perf_counter() - began < 2 * 1.05 + 2 + 3   # (the interpreter's start and imports)
    assert done.returncode == 0, done.stderr
    assert "terminate" not in done.stderr and "Traceback" not in done.stderr
    assert json.loads((tmp_path / "s.json").read_text())["status"] in ("heuristic", "feasible")
