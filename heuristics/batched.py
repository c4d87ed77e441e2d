"""Batched heuristics (DiviML's bMET, bGreedy, bHEFT, SA and (1+1) EA): the best split of the inputs.

With a workload of L inputs, a heuristic is run once per candidate batch size ``b`` on the
problem unrolled into batches of ``b`` inputs (:class:`~schedkit.schedule.unrolled.Unrolled`)
and the shortest schedule is kept, folded back into batch rows. The candidates are
DiviML's splits, L/4, L/2, 3L/4 and L (rounded down), every batch size a device offers,
and 1 (no batching: DiviML's naive baseline runs the inputs one by one)
(:meth:`~schedkit.problem.batches.Batches.splits`); a candidate some task cannot run in (no
device offers that size, or the size of the last, shorter batch) is skipped. The bound is
:meth:`~schedkit.problem.batches.Batches.lower_bound`.

Examples
--------
>>> from schedkit import Problem, solve
>>> p = Problem.from_dict({"name": "b", "workload": {"inputs": 4},
...     "devices": [{"name": "gpu", "batch_sizes": [1, 2, 4]}, {"name": "cpu"}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
...     "tasks": [{"name": "a", "durations": {"gpu": {1: 1, 2: 1.2, 4: 1.5}, "cpu": 2}},
...               {"name": "b", "durations": {"gpu": {1: 1, 2: 1.2, 4: 1.5}, "cpu": 2}}],
...     "edges": [{"src": "a", "dst": "b", "size": 1}]})
>>> s = solve(p, "heft")
>>> s.makespan, sorted(len(r.inputs) for r in s.tasks), s.summary().split()[5]
(3.0, [4, 4], 'throughput=1.33333')
"""

from __future__ import annotations

from schedkit.blocks.batching import Batching, check_batchable
from schedkit.errors import ProblemError
from schedkit.problem import Problem
from schedkit.schedule import Result
from schedkit.schedule.unrolled import Unrolled
from schedkit.validate import violations

__all__ = ["run_batches", "UNBATCHABLE"]

#: Blocks whose meaning under batching is not defined yet (DESIGN, "``batching``"; the one list).
UNBATCHABLE = tuple(sorted(Batching.excludes))


def run_batches(method, problem: Problem) -> Result:
    """``method.run`` on every split of ``problem``'s inputs; the shortest schedule, folded."""
    blocks = method.blocks(problem)
    check_batchable(problem, blocks)  # (Method.result checked already; run_batches may be called alone)
    best, skipped = None, []
    for size in problem.batches.splits(problem):
        try:
            unrolled = Unrolled.uniform(problem, size)
            result = method.run(unrolled.problem)
        except ProblemError as error:
            skipped.append(f"batches of {size}: {error}")
            continue
        if result.schedule is None:
            continue
        folded = unrolled.fold(result.schedule)
        broken = violations(problem, folded, blocks)  # (a formulation's limit of batches per device)
        if broken:
            skipped.append(f"batches of {size}: {broken[0]}")
        elif best is None or folded.makespan < best[0].makespan:
            best = folded, size
    if best is None:
        raise ProblemError(f"method '{method.name}' found no batched schedule (not a proof): "
                           + "; ".join(skipped))
    return Result.heuristic(best[0], bound=problem.batches.lower_bound(problem))
