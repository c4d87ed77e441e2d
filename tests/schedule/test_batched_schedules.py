"""Batched schedules (DiviML): every (task, input) in one batch of an allowed size, for that
batch's time; precedence input by input; static memory once per device; bad workloads named."""

import re

import pytest

from schedkit import Problem, Schedule, TaskRun
from schedkit.errors import ProblemError
from schedkit.validate import semantic_blocks, violations

# L = 3 inputs; the gpu runs batches of 1 or 2 (2 take 3, not 4), the cpu one input at a time.
DATA = {"name": "batched", "workload": {"inputs": 3},
        "devices": [{"name": "gpu", "batch_sizes": [1, 2], "memory": 10}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
        "tasks": [{"name": "a", "durations": {"gpu": {1: 2, 2: 3}, "cpu": 4}, "memory": 6},
                  {"name": "b", "durations": {"gpu": {1: 1, 2: 1.5}, "cpu": 2}, "memory": 3}],
        "edges": [{"src": "a", "dst": "b", "size": 1}]}


def schedule(runs) -> Schedule:
    return Schedule(problem="batched", method="manual", status="heuristic",
                    tasks=[TaskRun(task=t, device=d, start=s, end=e, inputs=i) for t, d, s, e, i in runs])


GOOD = [("a", "gpu", 0, 3, [0, 1]), ("a", "cpu", 0, 4, [2]),
        ("b", "gpu", 3, 4.5, [0, 1]), ("b", "gpu", 5, 6, [2])]   # input 2 arrives at 4 + 1


def judged(runs):
    p = Problem.from_dict(DATA)
    return violations(p, schedule(runs), semantic_blocks(p))


def test_a_valid_batched_schedule_passes_and_reports_its_throughput():
    assert judged(GOOD) == []
    assert schedule(GOOD).summary().startswith("manual on batched: status=heuristic makespan=6 throughput=0.5")


@pytest.mark.parametrize("runs,message", [
    (GOOD[:3] + [("b", "gpu", 5, 6, [1])], "input 1 is in two batches"),
    (GOOD[:3] + [("b", "gpu", 5, 6, [2, 2])], "lists an input twice"),
    (GOOD[:3], "task 'b': input 2 is in no batch"),
    (GOOD[:3] + [("b", "gpu", 5, 6, [3])], "input 3 is not one of the workload's 0..2"),
    (GOOD[:3] + [("b", "gpu", 5, 6, None)], "lists no 'inputs'"),
    ([("a", "gpu", 0, 3, [0, 1, 2])] + GOOD[2:], "a batch of 3 on gpu, which runs its batches in sizes 1, 2"),
    ([("a", "gpu", 0, 4, [0, 1])] + GOOD[1:], "task 'a' lasts 4 on gpu, needs 3"),
    (GOOD[:3] + [("b", "gpu", 4.5, 5.5, [2])], "'b' starts at 4.5, before 5"),
    ([("a", "gpu", 0, 3, [0, 1]), ("a", "cpu", 0, 4, [2]), ("b", "cpu", 3.5, 5.5, [0]),
      ("b", "gpu", 5, 6.5, [1, 2])], "'b' starts at 3.5, before 4"),
])
def test_each_broken_batch_is_named(runs, message):
    found = judged(runs)
    assert any(message in line for line in found), found


def test_static_memory_counts_once_per_device_that_runs_a_batch():
    p = Problem.from_dict(DATA)
    # a (6) and b (3) on the gpu: 9 <= 10 although a runs two batches there
    both = [("a", "gpu", 0, 3, [0, 1]), ("a", "gpu", 3, 5, [2]), ("b", "gpu", 5, 6.5, [0, 1]),
            ("b", "gpu", 6.5, 7.5, [2])]
    assert violations(p, schedule(both), semantic_blocks(p)) == []


def test_one_input_is_todays_problem():
    p = Problem.from_dict({**DATA, "workload": {"inputs": 1}})
    plain = Schedule(problem="batched", method="manual", status="heuristic",
                     tasks=[TaskRun(task="a", device="gpu", start=0, end=2), TaskRun(task="b", device="gpu", start=2, end=3)])
    assert violations(p, plain, semantic_blocks(p)) == []
    assert "throughput" not in plain.summary()


@pytest.mark.parametrize("change,message", [
    ({"workload": {"inputs": 3}, "devices": [{"name": "gpu", "batch_sizes": [2]}, {"name": "cpu", "batch_sizes": [2]}]},
     "task 'a': its batch sizes (2,) cannot add up to the workload's 3 inputs"),
    ({"devices": [{"name": "gpu", "batch_sizes": [1, 2, 4]}, {"name": "cpu"}]},
     "task 'a': its durations on 'gpu' give no time for batch size 4, which the device supports"),
    ({"devices": [{"name": "gpu", "batch_sizes": [0, 2]}, {"name": "cpu"}]}, "batch_size #0"),
    ({"workload": {}}, "workload.inputs: Field required"),
    ({"workload": {"inputs": 0}}, "workload.inputs"),
])
def test_bad_workloads_are_named_in_one_line(change, message):
    with pytest.raises(ProblemError, match=re.escape(message)) as caught:
        Problem.from_dict({**DATA, **change})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("args,message", [
    (["-m", "merge"], "method 'merge' does not split inputs into batches: the problem's workload asks for 3 inputs"),
    (["-m", "milp", "-f", "latency"],
     "formulation 'latency' has no 'batching' block for the workload's 3 inputs (use -f throughput)")])
def test_a_method_that_does_not_run_batches_says_so(tmp_path, capfd, args, message):
    import json

    from schedkit.cli.main import main

    src = tmp_path / "batched.json"
    src.write_text(json.dumps(DATA))
    assert main(["solve", str(src), *args, "-o", str(tmp_path / "out.json")]) != 0
    err = capfd.readouterr().err.strip().splitlines()
    assert err == [f"schedkit: error: {message}"] and not (tmp_path / "out.json").exists()


def test_pictures_and_text_show_the_batches(tmp_path):
    from schedkit.cli.main import main
    from schedkit.report.text import format_schedule

    p = Problem.from_dict(DATA)
    s = schedule(GOOD).model_copy(update={"problem": p.name})
    assert "a  inputs 0-1" in format_schedule(s)
    src, out, page = tmp_path / "p.json", tmp_path / "s.json", tmp_path / "r.html"
    import json
    src.write_text(json.dumps(DATA))
    s.write(out)
    assert main(["report", str(src), str(out), "-o", str(page)]) == 0
    assert "0.5 inputs per time unit (3 inputs in 4 batches)" in page.read_text()
