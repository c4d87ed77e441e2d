"""A decomposition keeps its time limit as a whole: apply, parts, rounds, invert, refinement.

Each run is made in a child process, killed if it overruns by far, so that a method that
ignores its limit fails the test in seconds instead of running for minutes. The instance,
a randomly wired network of two 30-node modules on three devices, takes the ``milp``
method longer than 20 s whole; without the limit (parts allowed 60 s each by
``inner_options``, serially), ``bridge_dp`` took 88 s, ``kedge`` 101 s and ``merge``
(40 nodes) 26 s, against a limit of 3 s here.
"""

import json
import subprocess
import sys

import pytest

#: The limit of every run here, and the bound it is held to: the issue's target is
#: 1.05 x the limit + 2 s; a second more for a machine busy with other tests.
LIMIT = 3.0
MARGIN = 3.0
BOUND = 1.05 * LIMIT + MARGIN

CHILD = r"""
import json, sys, time
from schedkit import Problem
from schedkit.generators import rwnn
from schedkit.methods import METHODS

method, executor, limit, channels, options = json.loads(sys.argv[1])
problem = Problem.from_dict(rwnn(2, 30, channels=channels, seed=0))
began = time.perf_counter()
result = METHODS.get(method)(executor=executor, time_limit=limit, inner="milp",
                             inner_options={"time_limit": 60}, progress=None, **options).result(problem)
seconds = time.perf_counter() - began
result.to_schedule().validate(problem)
print("RESULT " + json.dumps({"seconds": seconds, "status": result.status, "termination": result.termination,
                              "message": result.message, "tasks": len(result.schedule.tasks),
                              "expected": len(problem.tasks)}))
"""


def timed_run(method: str, executor: str, limit: float, channels: int = 1, **options) -> dict:
    """Run ``method`` in a child process; what it reports (its own wall time in ``seconds``)."""
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([method, executor, limit, channels, options])],
                          capture_output=True, text=True, timeout=limit + 40)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("executor", ["serial", "process:2"])
@pytest.mark.parametrize("method, channels, options", [
    ("bridge_dp", 1, {}),
    ("kedge", 2, {}),
    ("merge", 1, {"nodes": 40}),
], ids=["bridge_dp", "kedge", "merge"])
def test_a_time_limit_bounds_the_whole_method(method, channels, options, executor):
    found = timed_run(method, executor, LIMIT, channels, **options)
    assert found["seconds"] <= BOUND, found
    assert found["tasks"] == found["expected"]
    assert found["status"] == "feasible"  # validated in the child; nothing proven
    assert found["termination"] == "time_limit"


@pytest.mark.parametrize("executor", ["serial", "process:2"])
def test_bridge_dp_finishes_the_parts_left_without_a_schedule_by_heft(executor):
    found = timed_run("bridge_dp", executor, 1.0)
    assert found["seconds"] <= 1.05 * 1.0 + MARGIN, found
    assert found["tasks"] == found["expected"]
    # heft's word when it finished every part, else what milp's parts say without a proof
    assert found["status"] in ("feasible", "heuristic")
    assert "parts were finished by heft" in found["message"]


def test_merge_refinement_keeps_to_the_limit():
    # the refinement alone may take 30 s; the whole method gets LIMIT (and the coarse solve
    # no more than the rest)
    found = timed_run("merge", "serial", LIMIT, nodes=40, refine=30.0)
    assert found["seconds"] <= BOUND, found
    assert found["status"] == "feasible"
