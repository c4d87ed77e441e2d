"""Random small DAGs: the MILP schedule validates and is never worse than HEFT's."""

import itertools

from hypothesis import HealthCheck, example, given, settings

import schedkit
from schedkit import Problem, ProblemError
from schedkit.testing.strategies import problems

#: Every pair of devices linked and no collocation: only memory can make an instance infeasible.
MILP_PROBLEMS = problems(max_tasks=7, min_devices=2, max_devices=3, sparse_links=False, colocate=False)


def memory_fits(p):
    """Whether some placement of the tasks on their allowed devices fits every memory."""
    for placement in itertools.product(*p.allowed):
        used = [0.0] * len(p.devices)
        for i, d in enumerate(placement):
            used[d] += p.task_memory[i]
        if all(u <= cap for u, cap in zip(used, p.device_memory)):
            return True
    return False


def _zero_duration_case(durations_t5, edges, t6):
    # Found by hypothesis: zero-duration tasks on one device (see the report of the kernel bugs).
    tasks = [{"name": "t0", "durations": {"d0": 1}}] + \
        [{"name": f"t{k}", "durations": {"d0": 0}} for k in range(1, 5)] + \
        [{"name": "t5", "durations": durations_t5}, {"name": "t6", "durations": {"d0": t6}}]
    return {"name": "random", "devices": [{"name": "d0"}, {"name": "d1"}],
            "links": [{"src": "d0", "dst": "d1", "bandwidth": 1, "latency": 0}],
            "tasks": tasks, "edges": [{"src": a, "dst": b, "size": s} for a, b, s in edges]}


#: The MILP answers 'optimal' with makespan 3 (bound 2) where HEFT finds 2.
WORSE_THAN_HEFT = _zero_duration_case({"d0": 1, "d1": 0}, [("t0", "t1", 0), ("t0", "t5", 0), ("t1", "t5", 1)], 1)
#: The MILP raises ScheduleError "the device orders contradict the task graph".
ORDER_CONTRADICTS_GRAPH = _zero_duration_case({"d0": 1}, [("t0", "t5", 0), ("t1", "t5", 0)], 0)
#: The solver puts zero-length t1 at the start of t0 (both start at 0); reading t0 first
#: made the schedule longer than the solver's and the status 'feasible'.
ZERO_LENGTH_AT_START = {
    "name": "random", "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
    "links": [{"src": a, "dst": b, "bandwidth": 1, "latency": 0} for a, b in (("d0", "d1"), ("d0", "d2"), ("d1", "d2"))],
    "tasks": [{"name": "t0", "durations": {"d0": 1, "d1": 0}, "pin": ["d0"]},
              {"name": "t1", "durations": {"d0": 0}, "pin": ["d0"]},
              {"name": "t2", "durations": {"d0": 1, "d1": 0, "d2": 0}}],
    "edges": [{"src": "t1", "dst": "t2", "size": 1}]}
#: The same with the zero-length task at 1e-9, after the longer one's start at 0.
ZERO_LENGTH_WITHIN_TOLERANCE = {
    "name": "random", "devices": [{"name": "d0"}, {"name": "d1"}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 1, "latency": 0}],
    "tasks": [{"name": "t0", "durations": {"d1": 2, "d0": 0}},
              {"name": "t1", "durations": {"d0": 0}, "pin": ["d0"]},
              {"name": "t2", "durations": {"d1": 0}, "pin": ["d1"]},
              {"name": "t3", "durations": {"d0": 1, "d1": 0}, "pin": ["d0"]}],
    "edges": [{"src": "t0", "dst": "t2", "size": 1}]}


@example(data=WORSE_THAN_HEFT)
@example(data=ORDER_CONTRADICTS_GRAPH)
@example(data=ZERO_LENGTH_AT_START)
@example(data=ZERO_LENGTH_WITHIN_TOLERANCE)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MILP_PROBLEMS)
def test_milp_validates_and_beats_heft(data):
    try:
        p = Problem.from_dict(data)
    except ProblemError:
        return  # e.g. memory that no placement fits
    milp = schedkit.solve(p, "milp", time_limit=20)
    if milp.status == "infeasible":
        # Only memory can make these instances infeasible (every pair of devices is linked).
        assert not memory_fits(p), "the MILP says infeasible but a placement fits in memory"
        assert not milp.tasks
        return
    assert milp.violations(p) == []
    assert milp.status == "optimal"
    assert milp.bound <= milp.makespan + 1e-6
    try:
        heft = schedkit.solve(p, "heft")
    except ProblemError:
        return  # HEFT ignores memory and may not find a placement
    assert heft.violations(p) == []
    assert milp.makespan <= heft.makespan + 1e-6
