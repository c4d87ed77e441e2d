"""Parts stopped on their time limit are solved again with the time the others left."""

import time

from schedkit.reductions.retry import kept, retry_unproven, unproven
from schedkit.schedule import Result, Schedule, TaskRun


def _result(end, bound, quality="feasible", termination="time_limit", provenance="exact"):
    rows = None if end is None else Schedule(problem="p", method="m", status="feasible",
                                             tasks=[TaskRun(task="a", device="d", start=0, end=end)])
    return Result(termination=termination, quality=quality, schedule=rows, bound=bound,
                  provenance=provenance, method="m", problem="p")


def test_only_exact_parts_stopped_by_their_limit_are_retried():
    assert unproven(_result(5, 3)) and unproven(_result(None, 3, quality="none"))
    assert not unproven(_result(5, 5, quality="optimal", termination="finished"))
    assert not unproven(_result(5, 3, provenance="heuristic"))
    assert not unproven(_result(5, 3, termination="finished"))


def test_the_better_schedule_and_the_larger_bound_are_kept():
    old, new = _result(5, 3), _result(4, 3.5)
    both = kept(old, new)
    assert (both.objective, both.bound, both.status) == (4, 3.5, "feasible")
    assert kept(old, _result(6, 2)) is old                       # nothing better: the old result itself
    assert kept(old, _result(None, None, quality="infeasible", termination="finished")).status == "infeasible"


def test_retries_run_while_time_is_left_and_a_part_improves():
    calls = []

    def again(todo, until):
        calls.append(list(todo))
        return [_result(4, 4, quality="optimal", termination="finished") if k == 1 else _result(5, 3) for k in todo]

    first = [_result(5, 3), _result(5, 3), _result(2, 2, quality="optimal", termination="finished")]
    done = retry_unproven(first, again, time.time() + 30)
    assert calls == [[0, 1], [0]]                               # part 0 never improves: one more try, then stop
    assert [r.status for r in done] == ["feasible", "optimal", "optimal"] and done[1].objective == 4
    assert retry_unproven(first, again, time.time() + 0.5) == first   # too little time: no retry
    assert retry_unproven(first, again, None) == first                # no limit: a part's own limit stands
