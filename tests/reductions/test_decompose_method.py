"""A registered decomposition is a method: parts by an inner method, validated on the original problem."""

import pytest
from pydantic import BaseModel

from helpers.decompose_cases import OPTIMUM, Coarse, Components, Identity, two_chains
from schedkit import InvalidScheduleError, Problem, SchedkitError, solve
from schedkit.reductions import register_decomposition, unregister_decomposition
from schedkit.methods import METHODS, Method, list_methods, register_method
from schedkit.schedule import Quality, Result, Termination
from schedkit.validate import semantic_blocks


class Nothing(Method):
    """Gives up on every problem."""

    def run(self, problem):
        return Result.nothing(self.name, problem.name, Termination.TIME_LIMIT, message="gave up")


class Refuted(Method):
    """Claims every problem is infeasible."""

    def run(self, problem):
        return Result(termination=Termination.FINISHED, quality=Quality.INFEASIBLE, method=self.name,
                      problem=problem.name, message="proved")


class Lossy(Components):
    """Forgets the last task of the merged schedule."""

    def invert(self, results, inverse):
        merged = super().invert(results, inverse)
        rows = merged.schedule.model_copy(update={"tasks": merged.schedule.tasks[:-1], "makespan": None})
        return merged.model_copy(update={"schedule": rows.model_validate(rows.model_dump())})


class Recorder(Method):
    """heft, recording the options it was made with."""

    made = []

    def run(self, problem):
        Recorder.made.append(self.options)
        return METHODS.get("heft")().run(problem)


class LimitOptions(BaseModel):
    model_config = {"extra": "forbid", "frozen": True}
    most: int = 5
    """At most this many parts."""


class Limited(Components):
    """Components, refusing problems with more than `most` of them."""

    Options = LimitOptions

    def accepts(self, problem, blocks=None):
        seen.append(self.options.most)
        return super().accepts(problem, blocks) and self.options.most >= 2


seen = []

DECOMPOSITIONS = {"identity": Identity, "coarse": Coarse, "components": Components,
                  "test_lossy": Lossy, "test_limited": Limited}
INNER = {"test_nothing": Nothing, "test_refuted": Refuted, "test_recorder": Recorder}


@pytest.fixture(autouse=True)
def registered():
    for name, cls in DECOMPOSITIONS.items():
        register_decomposition(name)(cls)
    for name, cls in INNER.items():
        register_method(name)(cls)
    yield
    for name in DECOMPOSITIONS:
        unregister_decomposition(name)
    for name in INNER:
        METHODS.unregister(name)


def test_a_split_with_a_heuristic_inside_gives_a_validated_schedule():
    p = two_chains()
    s = solve(p, "components", inner="heft", executor="serial")
    s.validate(p)
    # heft's parts, heft's word
    assert (s.problem, s.method, s.status) == ("two_chains", "components:heft", "heuristic")
    assert s.makespan == OPTIMUM and s.bound == 4.0  # the larger of the parts' bounds
    assert sorted(r.task for r in s.tasks) == ["a1", "a2", "a3", "b1", "b2"]
    assert [(t.src, t.from_, t.to) for t in s.transfers][0] == ("a1", "gpu0", "cpu0")


def test_an_exact_split_with_milp_inside_is_optimal_and_equals_the_monolithic_optimum():
    p = two_chains()
    s = solve(p, "components", inner="milp")
    assert (s.status, s.makespan, s.bound) == ("optimal", OPTIMUM, OPTIMUM)
    assert solve(p, "milp").makespan == s.makespan


def test_a_process_pool_gives_the_serial_schedule():
    p = two_chains()
    serial = solve(p, "components", inner="milp")
    pooled = solve(p, "components", inner="milp", executor="process:2")
    serial.solve_seconds = pooled.solve_seconds = None
    assert pooled.to_json() == serial.to_json()


def test_a_restriction_proves_nothing():
    p = two_chains()
    assert solve(p, "identity", inner="milp").status == "optimal"
    s = solve(p, "coarse", inner="milp")
    assert (s.status, s.bound, s.makespan) == ("feasible", None, OPTIMUM)


def test_a_part_without_schedule_makes_no_solution_with_a_message():
    p = two_chains()
    result = METHODS.get("components")(inner="test_nothing", executor="serial").result(p)
    assert (result.status, result.termination, result.provenance) == \
        ("no_solution", Termination.TIME_LIMIT, "decomposition")
    assert result.message == "part 1 of 2 ('two_chains/0') found no schedule: gave up"
    s = solve(p, "components", inner="test_nothing", executor="serial")
    assert (s.status, s.tasks, s.problem) == ("no_solution", [], "two_chains")


@pytest.mark.parametrize("name, status", [("components", "infeasible"), ("identity", "infeasible"),
                                          ("coarse", "no_solution")])
def test_infeasible_only_when_every_step_is_equivalent(name, status):
    result = METHODS.get(name)(inner="test_refuted", executor="serial").result(two_chains())
    assert result.status == status
    assert result.message.endswith("is infeasible: proved")


def test_the_inverted_schedule_is_validated_on_the_original_problem():
    with pytest.raises(InvalidScheduleError, match="task 'b2' is not scheduled"):
        solve(two_chains(), "test_lossy", inner="heft")


def test_validation_uses_the_inner_method_blocks():
    p = two_chains()
    formulation = {"name": "loose", "blocks": ["assignment", {"precedence": {"communication": True}}]}
    method = METHODS.get("components")(inner="milp", inner_options={"formulation": formulation})
    assert [b.kind for b in semantic_blocks(p, method.blocks(p))] == ["assignment", "precedence"]
    result = method.result(p)
    assert result.method == "components:milp" and result.schedule is not None
    latency = METHODS.get("components")(inner="milp", inner_options={"formulation": "latency"})
    assert [b.kind for b in latency.blocks(p)] == [b.kind for b in METHODS.get("milp")().blocks(p)]
    heft = METHODS.get("components")(inner="heft")
    assert [b.kind for b in heft.blocks(p)] == [b.kind for b in semantic_blocks(p)]
    assert "no_overlap" in [b.kind for b in heft.blocks(p)]


def test_the_parts_get_one_thread_and_the_progress_is_reported():
    calls = []
    method = METHODS.get("components")(inner="milp", executor="serial",
                                        progress=lambda done, total: calls.append((done, total)))
    assert method.inner.options.threads == 1
    method.result(two_chains())
    assert calls == [(0, 2), (1, 2), (2, 2)]


def test_a_decomposition_options_become_method_options():
    p = two_chains()
    seen.clear()
    assert solve(p, "test_limited", inner="heft", most=3).status == "heuristic"
    assert seen == [3]
    with pytest.raises(SchedkitError, match="does not accept problem 'two_chains'"):
        solve(p, "test_limited", inner="heft", most=1)
    with pytest.raises(SchedkitError, match="method 'test_limited' takes no option 'least'"):
        solve(p, "test_limited", least=1)
    assert "most" in METHODS.get("test_limited").Options.model_fields


def test_the_method_is_listed_with_the_decomposition_summary():
    assert ("components", "One part per component of the task graph; exact when components share "
                          "no device.") in list_methods()


@pytest.mark.parametrize("options, message", [
    ({"inner": "components"}, "the inner method cannot be 'components' itself"),
    ({"inner": "nope"}, "unknown method 'nope'"),
    ({"executor": "threads"}, "unknown executor 'threads'"),
    ({"executor": "dask://host"}, "executor 'dask://host': a Dask scheduler is named dask://HOST:PORT"),
    ({"executor": "process:0"}, "the number of workers must be a whole number >= 1"),
    ({"inner_options": "time_limit"}, "expected a JSON object or key=value pairs"),
    ({"inner": "milp", "inner_options": {"formulation": "nope"}}, "nope"),
    ({"inner": "heft", "inner_options": {"gap": 0.1}}, "method 'heft' takes no option 'gap'"),
])
def test_bad_options_fail_before_anything_runs(options, message):
    with pytest.raises(SchedkitError, match=message):
        METHODS.get("components")(**options)


def test_a_problem_the_split_does_not_accept_is_an_error():
    data = two_chains().spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for task in data["tasks"]:
        task.pop("pin", None)
        task["durations"] = {"gpu0": 1, "cpu1": 1}
    with pytest.raises(SchedkitError, match="decomposition 'components' does not accept problem"):
        solve(Problem.from_dict(data), "components", inner="heft")


def test_inner_options_may_be_text():
    method = METHODS.get("components")(inner="milp", inner_options='{"time_limit": 5, "gap": 0.1}')
    assert method.options.inner_options == {"time_limit": 5, "gap": 0.1}
    method = METHODS.get("components")(inner="milp", inner_options="time_limit=5, formulation=jssp")
    assert method.options.inner_options == {"time_limit": 5, "formulation": "jssp"}
    assert method.inner.options.formulation == "jssp" and method.inner.options.threads == 1


def test_the_default_executor_is_a_process_pool_and_it_is_reused():
    from schedkit.reductions import executor_for

    assert METHODS.get("components").Options().executor == "process"
    with executor_for("process:2") as first:
        pass
    with executor_for("process:2") as second:
        assert second is first  # kept for the next run
    p = two_chains()
    assert solve(p, "components", inner="heft").makespan == OPTIMUM


def test_a_nested_decomposition_runs_its_parts_serially():
    from schedkit.reductions import part_options

    assert part_options("components", {}) == {"executor": "serial", "threads": 1}
    assert part_options("components", {"executor": "process:2"}) == {"executor": "process:2", "threads": 1}


def test_a_method_registered_at_run_time_is_unknown_to_worker_processes():
    with pytest.raises(SchedkitError, match="method 'test_nothing' is not registered in this process"):
        solve(two_chains(), "components", inner="test_nothing", executor="process:2")


def test_the_seed_reaches_the_inner_method_unless_its_options_set_one():
    Recorder.made.clear()
    solve(two_chains(), "components", inner="test_recorder", seed=7, executor="serial")
    solve(two_chains(), "components", inner="test_recorder", seed=7, inner_options={"seed": 3},
          executor="serial")
    assert [o.seed for o in Recorder.made] == [7, 7, 3, 3]


def test_threads_bound_the_workers(monkeypatch):
    import schedkit.reductions.method as method

    asked = []
    real = method.executor_for
    monkeypatch.setattr(method, "executor_for", lambda spec: asked.append(spec) or real("serial"))
    for executor in ("process:8", "dask:3", "serial"):
        solve(two_chains(), "components", inner="heft", executor=executor, threads=2)
    assert asked == ["process:2", "dask:2", "serial"]


def test_a_part_without_schedule_under_a_time_limit_is_finished_by_heft():
    result = METHODS.get("components")(inner="test_nothing", executor="serial", time_limit=30).result(two_chains())
    assert (result.status, result.termination) == ("heuristic", Termination.TIME_LIMIT)
    assert result.message == "the time limit ran out: 2 of 2 parts were finished by heft (a heuristic)"
    assert len(result.schedule.tasks) == 5
