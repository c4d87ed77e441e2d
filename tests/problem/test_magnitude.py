"""A problem's times must add up to a number every method can time (schedkit.problem.magnitude)."""

import pytest

import schedkit
from schedkit import Problem, ProblemError
from schedkit.problem.magnitude import LARGEST_HORIZON, serial_time
from schedkit.timing.events import simulate


def _chain(duration: float, bandwidth: float = 1.0, size: float = 1.0, inputs: int | None = None) -> dict:
    data = {"devices": [{"name": "a"}, {"name": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": bandwidth}],
            "tasks": [{"name": "x", "durations": {"a": duration, "b": 2 * duration}},
                      {"name": "y", "durations": {"a": duration, "b": duration}}],
            "edges": [{"src": "x", "dst": "y", "size": size}]}
    if inputs is not None:
        data["workload"] = {"inputs": inputs}
    return data


@pytest.mark.parametrize("path", ["examples/tiny.yaml", "examples/hetero20.yaml", "examples/topcuoglu2002.json",
                                  "examples/googlenet_moirai.json"])
def test_the_serial_time_is_no_less_than_a_schedule_on_the_fastest_devices(path):
    # A schedule that never idles while a task is ready ends by the sum of its runs and transfers.
    problem = Problem.load(path)
    fastest = [min(table, key=table.get) for table in problem.durations]
    start = simulate(problem, fastest)
    makespan = max(s + problem.durations[i][fastest[i]] for i, s in enumerate(start))
    assert sum(problem.min_duration) < serial_time(problem)
    assert makespan <= serial_time(problem) * (1 + 1e-12)


def test_a_problem_just_under_the_limit_is_solved_and_valid():
    problem = Problem.from_dict(_chain(LARGEST_HORIZON / 10))
    schedule = schedkit.solve(problem, "heft")
    assert schedule.violations(problem) == []
    assert schedule.makespan == pytest.approx(2 * LARGEST_HORIZON / 10)


def test_a_huge_duration_on_a_device_the_task_need_not_use_is_accepted():
    data = _chain(1.0)
    data["tasks"][0]["durations"] = {"a": 1e308, "b": 1.0}
    schedule = schedkit.solve(Problem.from_dict(data), "heft")
    assert schedule.makespan == pytest.approx(2.0)


@pytest.mark.parametrize("data,words", [
    (_chain(LARGEST_HORIZON), ["task 'x' lasts at least 1e+300", "add up to 2e+300"]),
    (_chain(1.0, bandwidth=1e-250, size=1e52), ["edge x->y takes up to 1e+302"]),
    (_chain(LARGEST_HORIZON / 3, inputs=2), ["task 'x' lasts at least 3.33333e+299", "add up to 1.33333e+300"]),
], ids=["durations", "transfer", "inputs"])
def test_a_problem_whose_times_add_up_past_the_limit_is_refused_naming_the_longest(data, words):
    with pytest.raises(ProblemError) as info:
        Problem.from_dict(data)
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in words), message
