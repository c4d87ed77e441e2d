"""CP-SAT as a second exact backend: same optima as HiGHS, honest statuses, clear errors.

Known optima: ft06 55, la02 655 (proven by CP-SAT in seconds; HiGHS leaves a gap at 60 s),
MOIRAI example-1 under ``moirai`` 30, the two-transfer ``PORTS`` instance of the block
cases 6 (5.5 without congestion).
"""

import importlib.util

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Formulation, Problem, ProblemError
from schedkit.blocks import Block, register_block
from schedkit.cli.main import main
from schedkit.errors import OptionError, SchedkitError
from schedkit.cpsat import Ticks, make_job
from schedkit.milp.formulation import get_formulation
from schedkit.milp.portfolio import choose_solver
from schedkit.testing.strategies import problems

BLOCKS = ["assignment", "placement", "precedence", "no_overlap", "memory"]


def test_ft06_and_la02_are_proven_by_cpsat():
    for name, optimum in (("ft06", 55), ("la02", 655)):
        s = schedkit.solve(Problem.load(f"examples/{name}.json"), "milp", formulation="jssp", solver="cpsat",
                           time_limit=60)
        assert (s.status, s.makespan, s.bound) == ("optimal", optimum, optimum)


def test_moirai_example_1_and_port_congestion():
    s = schedkit.solve(Problem.load("examples/moirai_example1.json"), "milp", formulation="moirai",
                       solver="cpsat", time_limit=60)
    assert (s.status, s.makespan) == ("optimal", 30)
    ports = Problem.from_dict({
        "name": "ports", "devices": [{"name": "gpu"}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 0.5}],
        "tasks": [{"name": "a", "durations": {"gpu": 1, "cpu": 3}, "pin": ["gpu"]},
                  {"name": "b", "durations": {"gpu": 5, "cpu": 1}},
                  {"name": "c", "durations": {"gpu": 5, "cpu": 1}}],
        "edges": [{"src": "a", "dst": "b", "size": 4}, {"src": "a", "dst": "c", "size": 4}]})
    free = BLOCKS[:4] + ["channels"]
    for blocks, optimum in ((free, 5.5), (free + [{"congestion": {"resource": "port"}}], 6.0)):
        s = schedkit.solve(ports, "milp", formulation=Formulation.from_data({"blocks": blocks}), solver="cpsat")
        assert (s.status, s.makespan) == ("optimal", optimum)


def test_times_that_no_power_of_ten_makes_whole_are_rounded_up_and_said():
    p = Problem.from_dict({"name": "thirds", "devices": [{"name": "d0"}, {"name": "d1"}],
                           "links": [{"src": "d0", "dst": "d1", "bandwidth": 3}],
                           "tasks": [{"name": "a", "durations": {"d0": 1 / 3, "d1": 2 / 3}},
                                     {"name": "b", "durations": {"d0": 1 / 3, "d1": 1 / 7}},
                                     {"name": "c", "durations": {"d0": 2 / 7, "d1": 1 / 3}}],
                           "edges": [{"src": "a", "dst": "c", "size": 1}]})
    ticks = Ticks.choose(p, horizon=2.0)
    assert not ticks.exact and ticks.up(1 / 3) == ticks.scale // 3 + 1
    exact = schedkit.solve(p, "milp", solver="highs", threads=1)
    cp = schedkit.solve(p, "milp", solver="cpsat")
    assert cp.bound <= exact.makespan + 1e-9 <= cp.makespan + 2e-9       # a valid bound, a valid schedule
    assert cp.makespan == pytest.approx(exact.makespan, rel=1e-4)         # optimal up to the rounding
    assert cp.status == "optimal"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(max_tasks=7, max_devices=3, channels=True, transfer_times=True),
       st.sampled_from([None, "channel", "port", "both"]))
def test_cpsat_and_highs_agree_on_random_problems(data, resource):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        assume(False)
    blocks = list(BLOCKS) + ([] if resource is None else ["channels", {"congestion": {"resource": resource}}])
    f = Formulation.from_data({"blocks": blocks})
    try:
        highs = schedkit.solve(p, "milp", formulation=f, solver="highs", threads=1, time_limit=30)
    except SchedkitError:
        assume(False)  # no schedule at all (memory): nothing to compare
    cp = schedkit.solve(p, "milp", formulation=f, solver="cpsat", time_limit=30)
    assume(highs.status == "optimal")
    assert cp.status == "optimal"   # validated by solve() before it is returned
    assert cp.makespan == pytest.approx(highs.makespan, rel=1e-4, abs=1e-9)


def test_a_fixed_seed_and_worker_count_give_the_same_schedule():
    p = Problem.load("examples/hetero20.yaml")
    runs = [schedkit.solve(p, "milp", solver="cpsat", threads=1, seed=7) for _ in range(2)]
    assert [r.model_dump(exclude={"solve_seconds"}) for r in runs][0] == \
        [r.model_dump(exclude={"solve_seconds"}) for r in runs][1]


def test_auto_reports_which_solver_proved_it():
    s = schedkit.solve(Problem.load("examples/la02.json"), "milp", formulation="jssp", solver="auto",
                       threads=2, time_limit=60)
    assert (s.status, s.makespan) == ("optimal", 655)
    assert "proved optimal by" in (s.message or "")


def test_auto_is_highs_alone_with_one_thread_or_without_ortools(monkeypatch):
    assert choose_solver("auto", threads=1) == "highs"
    assert choose_solver(None, threads=2) == "auto"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ortools" else real(name, *a))
    assert choose_solver("auto", threads=2) == "highs"
    with pytest.raises(OptionError, match=r"schedkit\[cpsat\]"):
        schedkit.methods.METHODS.get("milp")(solver="cpsat")


@pytest.fixture
def rows_only_block():
    @register_block("keep_first_device")
    class KeepFirstDevice(Block):
        """Every task runs on its first device (MILP rows only, no CP-SAT form)."""

        requires = frozenset({"x"})
        builds_rows = True
        template = r"$$x_{i,d_0} = 1$$"

        def build(self, ctx, blk):
            x = ctx.family("x")
            for i, allowed in enumerate(ctx.problem.allowed):
                if x.col(i, allowed[0]) is not None:
                    blk.add("first", (ctx.problem.tasks[i],), [x.col(i, allowed[0])], [1.0], lower=1.0)

        def violations(self, problem, schedule):
            return [f"task {r.task} is not on its first device" for r in schedule.tasks
                    if problem.device_index[r.device] != problem.allowed[problem.task_index[r.task]][0]]

    yield
    from schedkit.blocks import BLOCKS as REGISTRY
    REGISTRY.unregister("keep_first_device")


def test_a_block_without_a_cp_form_is_named_and_auto_falls_back_to_highs(rows_only_block, tmp_path, capsys):
    spec = tmp_path / "f.yaml"
    spec.write_text("name: first\nblocks: [assignment, precedence, no_overlap, keep_first_device]\n")
    out = tmp_path / "s.json"
    assert main(["solve", "examples/tiny.yaml", "-m", "milp", "--solver", "cpsat", "-f", str(spec), "-o", str(out)]) != 0
    (err,) = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert "keep_first_device" in err and "CP-SAT" in err and "Traceback" not in err
    assert not out.exists()
    s = schedkit.solve(Problem.load("examples/tiny.yaml"), "milp", formulation=str(spec), solver="auto")
    assert s.status == "optimal"


def test_the_worker_streams_each_improving_schedule_then_answers():
    from schedkit.cpsat import Worker, make_job
    from schedkit.milp.formulation import get_formulation

    p = Problem.load("examples/la02.json")
    job = make_job(p, get_formulation("jssp"), None, time_limit=60)
    found = []
    answer = Worker().solve(job, improving=found.append)
    assert answer.status == "OPTIMAL" and answer.objective == 655
    objectives = [a.objective for a in found]
    assert objectives and objectives == sorted(objectives, reverse=True) and objectives[-1] == 655
    assert all(a.status == "FEASIBLE" and len(a.starts) == len(p.tasks) for a in found)


def test_the_worker_streams_each_better_bound():
    from schedkit.cpsat import Worker

    job = make_job(Problem.load("examples/la02.json"), get_formulation("jssp"), None, time_limit=60)
    bounds = []
    answer = Worker().solve(job, bounded=bounds.append)
    assert answer.status == "OPTIMAL" and bounds
    assert bounds == sorted(bounds) and bounds[-1] <= 655


def test_a_worker_that_dies_is_named_in_one_line():
    from schedkit.errors import SolverError
    from schedkit.cpsat import Worker, make_job
    from schedkit.milp.formulation import get_formulation

    worker = Worker()
    worker.process.kill()
    job = make_job(Problem.load("examples/ft06.json"), get_formulation("jssp"), None)
    with pytest.raises(SolverError, match="the CP-SAT worker stopped without an answer"):
        worker.solve(job)


#: A module that prints as it is imported, named as a standard module the worker imports
#: (``subprocess`` imports ``grp``): it stands for any library that writes on stdout.
CHATTY_GRP = "print('not a frame of the worker ' * 1000)\n"


def test_the_worker_answers_from_a_folder_whose_files_shadow_standard_modules(tmp_path, monkeypatch):
    from schedkit.cpsat import Worker

    job = make_job(Problem.load("examples/ft06.json"), get_formulation("jssp"), None, time_limit=60)
    (tmp_path / "grp.py").write_text(CHATTY_GRP)
    monkeypatch.chdir(tmp_path)          # (a user's folder: the worker must not import from it)
    answer = Worker().solve(job)
    assert answer.status == "OPTIMAL" and answer.objective == 55


def test_what_the_worker_prints_on_stdout_is_not_read_as_its_reply(tmp_path, monkeypatch):
    from schedkit.cpsat import Worker

    (tmp_path / "grp.py").write_text(CHATTY_GRP)
    monkeypatch.syspath_prepend(str(tmp_path))   # (the worker gets this import path: it prints)
    job = make_job(Problem.load("examples/ft06.json"), get_formulation("jssp"), None, time_limit=60)
    found = []
    answer = Worker().solve(job, improving=found.append)
    assert answer.status == "OPTIMAL" and answer.objective == 55 and found


def test_the_worker_imports_from_the_working_directory_where_the_caller_does(tmp_path, monkeypatch):
    # (a notebook's import path holds its folder as ''; a job that carries an object of a
    # module there unpickles in the worker, as a user block of that module would)
    from schedkit.cpsat import Worker

    job = make_job(Problem.load("examples/ft06.json"), get_formulation("jssp"), None, time_limit=60)
    (tmp_path / "notebook_helpers.py").write_text("class Note:\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend("")
    import notebook_helpers

    job.note = notebook_helpers.Note()
    answer = Worker().solve(job)
    assert answer.status == "OPTIMAL" and answer.objective == 55


def test_a_spare_worker_waits_loaded_for_the_next_solve():
    from schedkit.cpsat.worker import SPARE

    p = Problem.load("examples/ft06.json")
    schedkit.solve(p, "milp", formulation="jssp", solver="cpsat")
    spare = SPARE.worker
    assert spare is not None and spare.process.poll() is None      # loaded, waiting
    schedkit.solve(p, "milp", formulation="jssp", solver="cpsat")  # ... and taken by this solve
    assert spare.process.poll() is not None and SPARE.worker is not spare
    assert SPARE.worker.process.poll() is None


def test_the_spare_worker_says_when_it_has_loaded():
    from schedkit.cpsat.worker import Spare

    spare = Spare()
    try:
        assert spare.wait(timeout=60)               # OR-Tools loaded, before any job is sent
        worker = spare.worker
        assert worker.process.poll() is None and spare.wait(timeout=0)   # the same worker, still waiting
        assert spare.worker is worker
        answer = spare.take().solve(make_job(Problem.load("examples/ft06.json"), get_formulation("jssp"), None))
        assert answer.status == "OPTIMAL" and answer.objective == 55
    finally:
        spare.close()


def test_optional_intervals_of_different_sizes_on_one_task_find_the_optimum():
    # OR-Tools 9.15 called this feasible model (optimum 7: t1, t3, t2 on g0, t4 on g1 from 6)
    # infeasible when t1's and t4's optional intervals shared their task's end variable and
    # the horizon was below 8 (here: the horizon of a list schedule, 7).
    p = Problem.from_dict({
        "name": "shared-end", "devices": [{"name": "g0"}, {"name": "g1"}],
        "links": [{"src": "g0", "dst": "g1", "bandwidth": 2.0, "latency": 0.5}],
        "tasks": [{"name": "t0", "durations": {"g0": 0.0}},
                  {"name": "t1", "durations": {"g0": 1.0, "g1": 2.0}},
                  {"name": "t2", "durations": {"g0": 2.0}},
                  {"name": "t3", "durations": {"g0": 2.0}},
                  {"name": "t4", "durations": {"g0": 3.0, "g1": 1.0}}],
        "edges": [{"src": "t0", "dst": "t2", "size": 1}, {"src": "t1", "dst": "t2", "size": 1},
                  {"src": "t0", "dst": "t3", "size": 2}, {"src": "t1", "dst": "t3", "size": 2},
                  {"src": "t2", "dst": "t4", "size": 1}, {"src": "t3", "dst": "t4", "size": 2}]})
    s = schedkit.solve(p, "milp", solver="cpsat", threads=1)
    assert (s.status, s.makespan) == ("optimal", 7)


def test_a_claim_of_infeasibility_beside_a_valid_start_is_not_passed_on(monkeypatch):
    import schedkit.milp.portfolio as portfolio
    from schedkit.schedule import Quality, Result, Termination

    def infeasible(problem, formulation, job, answer, method):
        return Result(termination=Termination.FINISHED, quality=Quality.INFEASIBLE, method=method,
                      problem=problem.name)

    monkeypatch.setattr(portfolio, "read_answer", infeasible)
    p = Problem.load("examples/tiny.yaml")
    s = schedkit.solve(p, "milp", solver="cpsat", threads=1)
    assert s.status == "feasible" and s.tasks and "not a proof" in s.message
    assert s.violations(p) == []


def test_the_bound_of_a_model_whose_memory_was_rounded_is_not_passed_on():
    # Memory in thirds is no whole number in any unit: CP-SAT's model rounds task memory up
    # and capacity down, so at most one task fits on d0 there, where two fit (optimum 3: two
    # on d0, one on d1). That model's optimum, 6, bounds nothing of the problem's.
    from schedkit.cpsat import read_answer
    from schedkit.cpsat.worker import Answer

    p = Problem.from_dict({"format": "schedkit/v1", "name": "thirds",
                           "devices": [{"name": "d0", "memory": 2 / 3}, {"name": "d1"}],
                           "tasks": [{"name": n, "durations": {"d0": 1, "d1": 3}, "memory": 1 / 3} for n in "abc"],
                           "edges": []})
    f = get_formulation("latency")
    job = make_job(p, f, 6.0)
    claimed = Answer(status="OPTIMAL", objective=6, bound=6, devices=[0, 1, 1], starts=[0, 0, 3], rounded=True)
    result = read_answer(p, f, job, claimed, "milp:latency")
    assert result.quality.value == "feasible" and result.bound <= 3.0
    assert schedkit.solve(p, "milp", solver="highs").makespan == 3.0
