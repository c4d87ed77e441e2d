"""run_parts: serial and on a real process pool give the same schedules; submit/result only."""

from concurrent.futures import Future, ProcessPoolExecutor

import pytest

from helpers.decompose_cases import Components, two_chains
from schedkit import SchedkitError
from schedkit.reductions import Part, PartError, make_executor, parse_executor, run_parts, usable_cores


def parts(method="milp"):
    subproblems, _ = Components().apply(two_chains())
    return [Part.of(q, method) for q in subproblems] + [Part.of(two_chains(), method)]


def rows(result):
    return result.schedule.model_dump(mode="json", by_alias=True, exclude={"solve_seconds"})


def test_serial_results_come_in_the_order_of_the_parts():
    results = run_parts(parts())
    assert [r.problem for r in results] == ["two_chains/0", "two_chains/1", "two_chains"]
    assert [r.objective for r in results] == [8.0, 4.0, 8.0]


@pytest.mark.parametrize("method", ["milp", "heft"])
def test_a_process_pool_gives_the_serial_schedules(method):
    """Integration: the parts cross a process boundary and come back the same."""
    serial = run_parts(parts(method))
    with ProcessPoolExecutor(max_workers=2) as executor:
        pooled = run_parts(parts(method), executor)
    assert [rows(r) for r in pooled] == [rows(r) for r in serial]
    assert [(r.status, r.bound, r.provenance) for r in pooled] == \
        [(r.status, r.bound, r.provenance) for r in serial]


def test_make_executor_process_uses_the_usable_cores():
    with make_executor("process") as executor:
        assert isinstance(executor, ProcessPoolExecutor)
        assert executor._max_workers == usable_cores()
        results = run_parts(parts("heft"), executor)
    assert [r.objective for r in results] == [8.0, 4.0, 8.0]
    with make_executor("process:1") as executor:
        assert executor._max_workers == 1


class Backwards:
    """An executor that only has submit(); its futures finish in reverse order."""

    def __init__(self):
        self.pending = []

    def submit(self, fn, *args):
        future = Future()
        self.pending.append((future, fn, args))
        if len(self.pending) == 3:
            for waiting, job, data in reversed(self.pending):
                waiting.set_result(job(*data))
        return future


def test_results_keep_submission_order_whatever_finishes_first():
    seen = []
    results = run_parts(parts("heft"), Backwards(), progress=lambda done, total: seen.append((done, total)))
    assert [r.problem for r in results] == ["two_chains/0", "two_chains/1", "two_chains"]
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_the_first_failing_part_is_raised_and_the_rest_cancelled():
    class Failing:
        def __init__(self):
            self.futures = []

        def submit(self, fn, payload):
            future = Future()
            if payload["problem"]["name"] == "two_chains/0":
                future.set_exception(PartError("part 'two_chains/0' (heft): broken"))
            self.futures.append(future)
            return future

    executor = Failing()
    with pytest.raises(PartError, match="broken"):
        run_parts(parts("heft"), executor)
    assert all(f.cancelled() for f in executor.futures[1:])


def test_executor_words():
    assert make_executor("serial") is None
    assert parse_executor("process:4") == 4
    assert parse_executor("process") == usable_cores()
    assert parse_executor("dask") == f"local:{usable_cores()}"
    assert parse_executor("dask:3") == "local:3"
    assert parse_executor("dask://scheduler:8786") == "tcp://scheduler:8786"
    for word, message in [("dask://scheduler", "a Dask scheduler is named dask://HOST:PORT"),
                          ("dask:0", "whole number >= 1"), ("ray", "unknown executor 'ray'")]:
        with pytest.raises(SchedkitError, match=message):
            make_executor(word)
    with pytest.raises(SchedkitError, match="unknown executor 'ray'"):
        make_executor("ray")
    with pytest.raises(SchedkitError, match="whole number >= 1"):
        make_executor("process:0")


def hard_parts(count):
    """Parts milp cannot prove in a few seconds (the whole of a 64-task network: > 20 s)."""
    from schedkit import Problem
    from schedkit.generators import rwnn

    return [Part.of(Problem.from_dict(rwnn(2, 30, seed=0)), "milp", {"time_limit": 60})] * count


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "process"])
def test_parts_share_the_time_to_a_deadline(pool):
    import time

    executor = make_executor("process:2") if pool else None  # forkserver: no solver thread forked
    try:
        if executor is not None:
            executor.submit(int).result()  # the workers started: their start is not the parts' time
        began = time.perf_counter()
        results = run_parts(hard_parts(3), executor, deadline=time.time() + 3.0, workers=2)
        seconds = time.perf_counter() - began
    finally:
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    assert seconds <= 3.0 + 2.0
    assert [r.termination.value for r in results] == ["time_limit"] * 3
    assert all(r.schedule is not None for r in results)  # milp's start, at least


def test_a_part_past_its_deadline_is_not_started():
    import time

    from schedkit.reductions.parts import solve_part

    answer = solve_part(hard_parts(1)[0].timed(time.time() - 1).payload())
    assert (answer["quality"], answer["termination"], answer["message"]) == \
        ("none", "time_limit", "not started: the time limit ran out")


def test_a_part_that_does_not_answer_by_the_deadline_is_given_up():
    import time

    from schedkit.reductions.budget import GRACE

    class Silent:
        """An executor whose futures never complete."""

        def submit(self, fn, *args):
            return Future()

    began = time.perf_counter()
    results = run_parts(parts("heft"), Silent(), deadline=time.time() + 0.2)
    assert time.perf_counter() - began <= 0.2 + GRACE + 0.5
    assert {(r.status, r.message) for r in results} == {("no_solution", "no answer by the time limit")}
