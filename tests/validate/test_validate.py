"""The validator rejects every non-finite or inconsistent schedule, reporting every layer."""

import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Problem, Schedule, TaskRun
from schedkit.cli.main import main
from schedkit.testing.strategies import problems
from schedkit.validate import status_violations, violations

TINY = "examples/tiny.yaml"


@pytest.fixture(scope="module")
def solved():
    problem = Problem.load(TINY)
    return problem, schedkit.solve(problem, "milp", threads=1)


def with_rows(schedule, **changes):
    return schedule.model_copy(update=changes)


@pytest.mark.parametrize("field", ["start", "end"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_times_are_refused_when_read(tmp_path, solved, field, value):
    _, schedule = solved
    data = json.loads(schedule.to_json())
    data["tasks"][2][field] = value
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))            # Python writes NaN and Infinity
    with pytest.raises(schedkit.ScheduleError, match=f"task '{data['tasks'][2]['task']}' {field}: .*finite"):
        Schedule.load(path)
    assert main(["validate", TINY, str(path)]) == 1


@pytest.mark.parametrize("field", ["makespan", "bound", "objective"])
def test_non_finite_numbers_anywhere_are_reported(solved, field):
    problem, schedule = solved
    broken = schedule.model_copy(update={field: math.nan})   # a copy skips pydantic's checks
    assert any(f"{field} is nan" in m for m in violations(problem, broken))


@pytest.mark.parametrize("status", ["infeasible", "no_solution"])
def test_a_status_without_schedule_cannot_carry_rows(solved, status):
    problem, schedule = solved
    assert violations(problem, with_rows(schedule, status=status)) == \
        [f"status '{status}' but the schedule has {len(schedule.tasks)} task rows"]


@pytest.mark.parametrize("status", ["optimal", "feasible", "heuristic"])
def test_a_status_with_a_schedule_needs_rows(status):
    empty = Schedule(problem="tiny", method="m", status=status)
    assert status_violations(empty) == [f"status '{status}' but the schedule has no task rows"]


@pytest.mark.parametrize("bound,ok", [(4.51625, True), (4.5161, True), (4.4, False), (3.3, False), (None, False)])
def test_optimal_needs_a_bound_within_the_solver_gap(solved, bound, ok):
    problem, schedule = solved
    found = violations(problem, with_rows(schedule, bound=bound))
    assert (found == []) is ok, found


def test_a_task_on_a_device_it_cannot_run_on_is_named_as_such(solved):
    problem, schedule = solved
    rows = [r.model_copy(update={"device": "gpu0"}) if r.task == "sample" else r for r in schedule.tasks]
    found = violations(problem, schedule.model_copy(update={"tasks": rows}))
    assert "assignment: task 'sample' may not run on gpu0" in found
    assert any(m.startswith("transfer logits->sample: goes gpu0->cpu but the tasks sit on gpu0->gpu0")
               for m in found)


def test_the_validator_judges_by_the_recorded_formulation(tmp_path):
    problem = Problem.load("examples/ft06.json")
    schedule = schedkit.solve(problem, "milp", formulation="jssp", threads=1)
    assert schedule.formulation["name"] == "jssp"
    path = tmp_path / "s.json"
    schedule.write(path)
    assert main(["validate", "examples/ft06.json", str(path)]) == 0
    assert main(["validate", "examples/ft06.json", str(path), "-f", "latency"]) == 0


CORRUPTIONS = ("nan", "inf", "shift", "device", "drop_transfer")


def corrupt(problem, schedule, kind, k):
    """``schedule`` broken by ``kind`` at task (or transfer) number ``k``; ``None`` when it does not apply."""
    data = json.loads(schedule.to_json())
    rows = data["tasks"]
    row = rows[k % len(rows)]
    if kind in ("nan", "inf"):
        row["start"] = math.nan if kind == "nan" else math.inf
    elif kind == "shift":                     # starts later, ends as before: the wrong duration
        row["start"] += 1.0
    elif kind == "device":
        i = problem.task_index[row["task"]]
        here = problem.device_index[row["device"]]
        others = [d for d in range(len(problem.devices)) if d != here
                  and problem.durations[i].get(d) != problem.durations[i][here]]
        if not others:
            return None
        row["device"] = problem.devices[others[k % len(others)]]
    else:
        needed = [t for t in data.get("transfers", []) if t["end"] > t["start"]]
        if not needed:
            return None
        data["transfers"].remove(needed[k % len(needed)])
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=problems(max_tasks=7, max_devices=3), kind=st.sampled_from(CORRUPTIONS), k=st.integers(0, 50))
def test_every_corrupted_schedule_is_rejected_by_validate(tmp_path, data, kind, k):
    try:
        problem = Problem.from_dict(data)
        schedule = schedkit.solve(problem, "heft")
    except schedkit.ProblemError:
        assume(False)
    broken = corrupt(problem, schedule, kind, k)
    assume(broken is not None)
    problem_file, schedule_file = tmp_path / "p.json", tmp_path / "s.json"
    problem_file.write_text(json.dumps(data))
    schedule_file.write_text(json.dumps(broken))
    assert main(["validate", str(problem_file), str(schedule_file)]) != 0
