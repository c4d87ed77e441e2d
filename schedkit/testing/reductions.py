"""Conformance of decompositions: apply, solve the parts, invert, validate on the original problem.

:func:`check_reduction` runs a registered decomposition on random problems (the
:func:`~schedkit.testing.strategies.problems` strategy, which needs hypothesis) and on
given instances:

- every problem (half of them put in :func:`series`: two random graphs joined by one
  task) is refused in one line, or split into parts that are plain problems;
- the parts, solved by a heuristic (HEFT by default), invert into a schedule of the
  *original* problem that its own semantics accept, with a bound no higher than the
  makespan, and never ``optimal`` (a heuristic proves nothing);
- the inverse data is tied to the problem and the decomposition that made it;
- exactness claims hold on the ``exact`` instances, solved by an exact method: an
  application that is ``equivalent`` gives the monolithic optimum and says ``optimal``;
  any schedule is no shorter than the optimum; a ``relaxation``'s bound is no higher.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.generators import rwnn
>>> check_reduction("bridge_dp", examples=20, exact=[Problem.from_dict(rwnn(2, 3, seed=1))])
"""

from __future__ import annotations

from typing import Sequence

from schedkit.reductions import DECOMPOSITIONS, Chain, Part, PartError, run_parts
from schedkit.errors import ProblemError, SchedkitError
from schedkit.methods import METHODS
from schedkit.numerics import time_tolerance
from schedkit.problem import Problem
from schedkit.schedule import Result
from schedkit.validate import semantic_blocks, violations

__all__ = ["check_reduction", "run_chain"]


def run_chain(chain: Chain, problem: Problem, method: str = "heft", options: dict | None = None,
              blocks: list | None = None) -> Result:
    """Apply ``chain`` to ``problem``, solve every round of parts serially with ``method``,
    and invert: the decomposition's result, not yet validated."""
    parts, inverse = chain.apply(problem, blocks)
    results: list[Result] = []
    while True:
        results += run_parts([Part.of(q, method, options) for q in parts])
        step = chain.advance(results, inverse)
        if step is None:
            break
        parts, inverse = step
    inverse.check(chain, problem)
    return chain.invert(results, inverse, problem=problem, method=f"{chain.name}:{method}")


def series(data: dict, cut: int) -> dict:
    """Random problem ``data`` put in series at task index ``cut``: the edges that cross the cut
    are dropped, and a junction task ``join`` follows every last task before the cut and
    precedes every first task after it (a chain of two modules, as splits expect).

    Examples
    --------
    >>> data = {"devices": [{"name": "d"}], "tasks": [{"name": f"t{i}", "work": 1} for i in range(3)],
    ...         "edges": [{"src": "t0", "dst": "t2"}]}
    >>> [(e["src"], e["dst"]) for e in series(data, 1)["edges"]]
    [('t0', 'join'), ('join', 't1'), ('join', 't2')]
    """
    tasks = [t["name"] for t in data["tasks"]]
    if not 0 < cut < len(tasks):
        return data
    first, second = set(tasks[:cut]), set(tasks[cut:])
    edges = [e for e in data.get("edges", []) if ({e["src"], e["dst"]} <= first or {e["src"], e["dst"]} <= second)]
    sinks = [t for t in tasks[:cut] if not any(e["src"] == t for e in edges)]
    sources = [t for t in tasks[cut:] if not any(e["dst"] == t for e in edges)]
    join = "join"
    while join in tasks:
        join += "_"
    edges = ([e for e in edges if e["src"] in first] + [{"src": t, "dst": join, "size": 1.0} for t in sinks]
             + [{"src": join, "dst": t, "size": 1.0} for t in sources] + [e for e in edges if e["src"] in second])
    return dict(data, tasks=data["tasks"][:cut] + [{"name": join, "work": 1.0}] + data["tasks"][cut:],
                edges=edges)


def _one(name: str, options: dict, problem: Problem, method: str, method_options: dict | None,
         blocks: list | None = None) -> Result | None:
    """The checked result of decomposition ``name`` on ``problem``, or ``None`` when refused."""
    step = DECOMPOSITIONS.get(name)(**options)
    why = step.refusal(problem, blocks)
    if why is not None:
        assert isinstance(why, str) and why and "\n" not in why, \
            f"decomposition '{name}': a refusal must be one line, got {why!r}"
        return None
    chain = Chain.of(step)
    parts, _ = chain.apply(problem, blocks)
    assert all(isinstance(q, Problem) for q in parts), f"decomposition '{name}': parts must be problems"
    try:
        result = run_chain(chain, problem, method, method_options, blocks)
    except (PartError, ProblemError):
        return None  # the heuristic could not place a part (memory, collocation): not the split's fault
    label = f"decomposition '{name}' on {problem.name}"
    # (``heuristic`` when every part was a heuristic's: the schedule file says what they would)
    assert result.provenance in ("decomposition", "heuristic"), f"{label}: provenance {result.provenance}"
    if result.schedule is None:
        return result
    schedule = result.to_schedule()
    found = violations(problem, schedule, semantic_blocks(problem, blocks))
    assert found == [], f"{label}: invalid schedule: {found[:3]}"
    tol = time_tolerance(schedule.makespan)
    if schedule.bound is not None:
        assert schedule.bound <= schedule.makespan + tol, \
            f"{label}: bound {schedule.bound} above the makespan {schedule.makespan}"
    return result


def check_reduction(name: str, options: dict | None = None, *, examples: int = 30,
                    max_tasks: int = 9, exact: Sequence[Problem] = (), inner: str = "heft",
                    exact_method: str = "milp", exact_options: dict | None = None) -> None:
    """Check a registered decomposition (see the module text); raise ``AssertionError`` naming it.

    Parameters
    ----------
    name : str
        A name in :data:`~schedkit.reductions.DECOMPOSITIONS`.
    options : dict, optional
        The decomposition's own options (``{"nodes": 3}`` for ``merge``).
    examples : int
        Random problems to try (0: none; needs hypothesis otherwise).
    max_tasks : int
        Size of the random problems.
    exact : sequence of Problem
        Instances for the exactness claims, solved by ``exact_method``.
    inner : str
        The heuristic that solves the parts of the random problems.
    exact_method, exact_options
        The exact method (``milp`` with one thread by default).
    """
    options = dict(options or {})
    cls = DECOMPOSITIONS.get(name)
    assert cls.name == name, f"decomposition '{name}' is registered under another name ({cls.name})"
    assert name in METHODS and METHODS.get(name).decomposition is cls, \
        f"decomposition '{name}' has no method of its name"
    accepted = [0]
    if examples:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st

        from schedkit.testing.strategies import problems

        @settings(max_examples=examples, database=None, derandomize=True, deadline=None,
                  phases=(Phase.explicit, Phase.generate, Phase.shrink),
                  suppress_health_check=list(HealthCheck))
        @given(problems(max_tasks=max_tasks), st.integers(0, max_tasks))
        def random_problems(data, cut):
            try:
                problem = Problem.from_dict(series(data, cut))
            except ProblemError:
                return
            try:
                result = _one(name, options, problem, inner, None)
            except SchedkitError as exc:  # a one-line refusal raised by apply
                assert "\n" not in str(exc), f"decomposition '{name}': a multi-line error: {exc}"
                return
            if result is not None:
                accepted[0] += 1
                assert result.status != "optimal", \
                    f"decomposition '{name}' with {inner} inside claims optimality"
        random_problems()
        assert accepted[0] > 0, f"decomposition '{name}' accepted none of {examples} random problems"
    exact_options = {"threads": 1, **(exact_options or {})}
    for problem in exact:
        result = _one(name, options, problem, exact_method, exact_options)
        assert result is not None, f"decomposition '{name}' refuses the exact case {problem.name}"
        best = METHODS.get(exact_method)(**exact_options).result(problem)
        assert best.status == "optimal", f"{exact_method} does not prove {problem.name}: pick a smaller case"
        label = f"decomposition '{name}' on {problem.name}"
        tol = time_tolerance(best.objective)
        chain = Chain.of(cls(**options))
        _, inverse = chain.apply(problem)
        achieved = chain.achieved(inverse)
        assert result.schedule is not None, f"{label}: no schedule with {exact_method} inside"
        assert result.objective >= best.objective - tol, \
            f"{label}: makespan {result.objective} below the optimum {best.objective}"
        if result.bound is not None:
            assert result.bound <= best.objective + tol, \
                f"{label}: bound {result.bound} above the optimum {best.objective}"
        if all(word == "equivalent" for word in achieved):
            assert result.status == "optimal" and abs(result.objective - best.objective) <= tol, \
                f"{label}: an equivalent split with {exact_method} gives {result.objective} " \
                f"({result.status}), the optimum is {best.objective}"
        else:
            assert result.status != "optimal" or abs(result.objective - best.objective) <= tol, \
                f"{label}: claims optimality at {result.objective}, the optimum is {best.objective}"
