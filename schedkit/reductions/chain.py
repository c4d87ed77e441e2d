"""Chains of reductions, and :func:`combine`: the one rule for what a decomposition has proven.

A :class:`Chain` applies 1 -> 1 reductions one after the other and may end in a split
(cvxpy's ``Chain``): the parts it returns are solved by some method, and
:meth:`Chain.invert` replays the inverse data backwards, the split's first, and hands
the inverted schedule to :func:`combine`, which decides its quality, bound and
termination from the exactness of the steps and the results of the parts.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.reductions import Part, Reduction, run_parts
>>> class Identity(Reduction):
...     '''Leave the problem as it is.'''
...     name = "identity_chain_example"
...     exactness = "equivalent"
...     def apply(self, problem, blocks=None):
...         return problem, self.inverse(problem)
...     def invert(self, results, inverse):
...         return results[0]
>>> p = Problem.load("examples/tiny.yaml")
>>> chain = Chain([Identity(), Identity()])
>>> chain.name, chain.exactness
('identity_chain_example+identity_chain_example', ('equivalent', 'equivalent'))
>>> parts, inverse = chain.apply(p)
>>> results = run_parts([Part.of(q, "milp", {"time_limit": 30}) for q in parts])
>>> result = chain.invert(results, inverse, problem=p)
>>> result.status, result.provenance, result.objective == result.bound
('optimal', 'decomposition', True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedkit.reductions.reduction import (EXACTNESS, DecompositionOutOfTime, DecompositionRefused, Exactness,
                                          InverseData, Reduction, Split, fingerprint)
from schedkit.errors import SchedkitError
from schedkit.numerics import OPTIMAL_GAP, closed
from schedkit.problem import Problem
from schedkit.schedule import Quality, Result, Termination

#: Terminations from the most to the least telling: a combined result reports the first
#: one any of its parts reports.
SEVERITY = (Termination.ERROR, Termination.INTERRUPTED, Termination.TIME_LIMIT, Termination.GAP,
            Termination.FINISHED)


def combine(exactness: Iterable[Exactness], parts: Sequence[Result], inverted: Result | None = None,
            *, method: str = "", problem: str = "", optional: bool = False) -> Result:
    """The result of a decomposition, from the exactness of its steps and its parts' results.

    This is the only place where a decomposition's quality is decided. ``invert``
    methods supply the schedule (and a bound); they never claim optimality themselves.

    Rules:

    - **Optimal** if every step is ``equivalent`` and every part is ``optimal`` (the
      bound is then the objective), or if no step is a ``restriction`` and the bound of
      ``inverted`` meets its objective (within :data:`~schedkit.numerics.OPTIMAL_GAP`,
      as an exact solver's proof): a valid lower bound that the schedule reaches proves it
      optimal (``bridge_dp``'s DP over the parts' bounds), unless every part is a
      heuristic's, which says ``heuristic`` as its parts would, gap 0 or not.
    - Otherwise **feasible** when every part has a schedule and the steps inverted them
      into one (``inverted``).
    - The **bound** of ``inverted`` is kept when no step is a ``restriction``: the bound
      of an ``equivalent`` or ``relaxation`` step is a valid lower bound of the input;
      a ``restriction`` (a coarsening) gives none.
    - A part without a schedule makes the whole result schedule-less: **infeasible**
      only if every step is ``equivalent`` and that part *proved* infeasibility, else
      **none** (the file says ``no_solution``), with a message naming the part.
    - The **termination** is the most telling among the parts' (:data:`SEVERITY`):
      ``finished`` only if every part finished.
    - The **provenance** is ``heuristic`` when every part's is (the schedule file then
      says ``heuristic``, as the parts' method would), else ``decomposition``.
    - With ``optional`` parts (a split that chooses among alternatives, such as
      ``bridge_dp``'s device pairs), a part without a schedule does not make the result
      schedule-less when the split still inverted the others into one; the result is
      then optimal only if every such part was *proven* infeasible.

    Parameters
    ----------
    exactness : iterable of {"equivalent", "restriction", "relaxation"}
        One word per step of the decomposition.
    parts : sequence of Result
        The results of the parts, in order.
    inverted : Result, optional
        What the steps' ``invert`` made of them (``None`` when a part had no schedule).
    method, problem : str
        Names for the combined result (default: those of ``inverted``).
    optional : bool
        The split may do without some parts (see above).

    Examples
    --------
    >>> from schedkit.schedule import Schedule, TaskRun
    >>> rows = Schedule(problem="p", method="m", status="optimal",
    ...                 tasks=[TaskRun(task="a", device="d", start=0, end=2)])
    >>> optimal = Result(termination="finished", quality="optimal", schedule=rows, bound=2)
    >>> combine(["equivalent"], [optimal], optimal).status
    'optimal'
    >>> r = combine(["restriction"], [optimal], optimal)
    >>> r.status, r.bound
    ('feasible', None)
    >>> stopped = optimal.model_copy(update={"quality": "feasible", "termination": "time_limit"})
    >>> combine(["equivalent"], [stopped], optimal).status      # the bound still meets it
    'optimal'
    >>> listed = Result(termination="finished", quality="feasible", schedule=rows, provenance="heuristic")
    >>> combine(["restriction"], [listed], listed).status
    'heuristic'
    >>> lost = Result.nothing("milp", "p/1", "time_limit", message="time limit, no schedule")
    >>> r = combine(["equivalent"], [optimal, lost], method="split", problem="p")
    >>> r.status, r.termination.value, r.message
    ('no_solution', 'time_limit', "part 2 of 2 ('p/1') found no schedule: time limit, no schedule")
    """
    words = tuple(exactness)
    for word in words:
        if word not in EXACTNESS:
            raise SchedkitError(f"exactness '{word}' is not one of {', '.join(EXACTNESS)}")
    exact = all(word == "equivalent" for word in words)
    found = {r.termination for r in parts} | ({inverted.termination} if inverted is not None else set())
    termination = next(t for t in SEVERITY if t in found or t is Termination.FINISHED)
    names = {"method": method or (inverted.method if inverted is not None else ""),
             "problem": problem or (inverted.problem if inverted is not None else ""),
             "provenance": "heuristic" if parts and all(r.provenance == "heuristic" for r in parts)
             else "decomposition"}
    missing = [k for k, r in enumerate(parts) if r.schedule is None]
    usable = optional and inverted is not None and inverted.schedule is not None
    if missing and not usable:
        proofs = [k for k in missing if parts[k].quality is Quality.INFEASIBLE]
        k = proofs[0] if proofs else missing[0]
        what = "is infeasible" if parts[k].quality is Quality.INFEASIBLE else "found no schedule"
        why = f": {parts[k].message}" if parts[k].message else ""
        message = f"part {k + 1} of {len(parts)} ('{parts[k].problem}') {what}{why}"
        quality = Quality.INFEASIBLE if exact and proofs else Quality.NONE
        return Result(termination=termination, quality=quality, message=message, **names)
    if inverted is None or inverted.schedule is None:
        why = inverted.message if inverted is not None and inverted.message else "no schedule"
        return Result(termination=termination, quality=Quality.NONE,
                      message=f"the decomposition could not combine its parts: {why}", **names)
    optimal = exact and all(r.quality is Quality.OPTIMAL or (optional and r.quality is Quality.INFEASIBLE)
                            for r in parts)
    bound = None if "restriction" in words else inverted.bound
    optimal = optimal or (names["provenance"] != "heuristic" and closed(inverted.objective, bound, OPTIMAL_GAP))
    if optimal:
        bound = inverted.objective
    return Result(termination=termination, quality=Quality.OPTIMAL if optimal else Quality.FEASIBLE,
                  schedule=inverted.schedule, objective=inverted.objective, bound=bound,
                  message=inverted.message, **names)


class Chain:
    """1 -> 1 reductions applied in order, ending in an optional split.

    Parameters
    ----------
    reductions : sequence of Reduction
        Applied first to last.
    split : Split, optional
        Applied last; without one, the chain has one part (the reduced problem).
    name : str, optional
        Default: the steps' names joined by ``+``.
    """

    def __init__(self, reductions: Sequence[Reduction] = (), split: Split | None = None,
                 name: str | None = None):
        for step in reductions:
            if not isinstance(step, Reduction):
                raise TypeError(f"{step!r} is not a Reduction (a Split may only end a chain)")
        if split is not None and not isinstance(split, Split):
            raise TypeError(f"{split!r} is not a Split")
        self.reductions = tuple(reductions)
        self.split = split
        self.steps = self.reductions + ((split,) if split is not None else ())
        self.name = name or "+".join(step.name for step in self.steps) or "chain"

    @classmethod
    def of(cls, step: Reduction | Split) -> Chain:
        """The chain of one step."""
        if isinstance(step, Split):
            return cls((), step, name=step.name)
        return cls((step,), name=step.name)

    @property
    def exactness(self) -> tuple[Exactness, ...]:
        """The exactness of every step, in order."""
        return tuple(step.exactness for step in self.steps)

    def __repr__(self) -> str:
        return f"Chain({self.name!r}: {', '.join(map(repr, self.steps))})"

    def accepts(self, problem: Problem, blocks: list | None = None) -> bool:
        """Whether the first step accepts ``problem`` (each step is asked again in :meth:`apply`)."""
        return not self.steps or self.steps[0].accepts(problem, blocks)

    def apply(self, problem: Problem, blocks: list | None = None) -> tuple[list[Problem], InverseData]:
        """Apply every step; return the parts (of the first round) and the chain's inverse data.

        Raises :class:`~schedkit.reductions.reduction.DecompositionRefused` (one line, with
        the step's reason) when a step does not accept its input, and its subclass
        :class:`~schedkit.reductions.reduction.DecompositionOutOfTime` when a step cannot
        end before its deadline.
        """
        trail = []
        current = problem
        output = None
        for step in self.steps:
            why = step.refusal(current, blocks)
            if why is None and not step.accepts(current, blocks):
                why = "it does not accept it"
            if why is not None:
                raise DecompositionRefused(f"decomposition '{step.name}' does not accept problem "
                                           f"'{current.name}': {why}")
            late = step.out_of_time(current, blocks)
            if late is not None:
                raise DecompositionOutOfTime(f"decomposition '{step.name}' cannot end in time on problem "
                                             f"'{current.name}': {late}")
            output, inverse = step.apply(current, blocks)
            trail.append((inverse, current))
            if isinstance(step, Reduction):
                current = output
        parts = list(output) if self.split is not None else [current]
        payload = {"steps": tuple(trail), "parts": len(parts), "problem": problem.name}
        return parts, InverseData(made_by=self.name, problem=fingerprint(problem), payload=payload)

    def advance(self, results: Sequence[Result], inverse: InverseData) -> tuple[list[Problem], InverseData] | None:
        """The next round of parts of the chain's split (see :meth:`Split.advance`), made
        from the results of every part so far, and the updated inverse data; ``None`` when
        the split has no further round (or the chain has no split, or a part has no schedule).
        """
        payload = inverse.payload
        if self.split is None or len(results) != payload["parts"]:
            return None
        if not self.split.optional_parts and any(r.schedule is None for r in results):
            return None
        trail = list(payload["steps"])
        split_inverse, split_input = trail[-1]
        split_inverse.check(self.split, split_input)
        step = self.split.advance(list(results), split_inverse)
        if step is None:
            return None
        parts, split_inverse = step
        trail[-1] = (split_inverse, split_input)
        payload = dict(payload, steps=tuple(trail), parts=payload["parts"] + len(parts))
        return list(parts), InverseData(made_by=inverse.made_by, problem=inverse.problem,
                                        payload=payload, exactness=inverse.exactness)

    def round_share(self, inverse: InverseData) -> float:
        """The current round's share of the time left (see :meth:`Split.round_share`)."""
        if self.split is None:
            return 1.0
        split_inverse, _ = inverse.payload["steps"][-1]
        return self.split.round_share(split_inverse)

    def invert_seconds(self, left: float) -> float:
        """The seconds out of ``left`` that the steps' ``invert`` want for work of their own."""
        return min(left, sum(step.invert_seconds(left) for step in self.steps))

    def achieved(self, inverse: InverseData) -> tuple[Exactness, ...]:
        """The exactness of every step as applied: a step's inverse data may say it achieved
        less than it declares (see :attr:`InverseData.exactness`)."""
        trail = inverse.payload["steps"]
        return tuple(step_inverse.exactness or step.exactness
                     for step, (step_inverse, _) in zip(self.steps, trail))

    def invert(self, results: Sequence[Result], inverse: InverseData, *, problem: Problem | None = None,
               method: str = "") -> Result:
        """The result of the original problem from the results of the parts.

        The inverse data of every step is checked against the step and the problem it was
        made from, and replayed backwards; :func:`combine` decides the quality. With
        ``problem``, the chain's inverse data is checked against it too.
        """
        if problem is not None:
            inverse.check(self, problem)
        elif inverse.made_by != self.name:
            raise SchedkitError(f"inverse data of reduction '{inverse.made_by}' used by '{self.name}'")
        payload = inverse.payload
        if len(results) != payload["parts"]:
            raise SchedkitError(f"decomposition '{self.name}' made {payload['parts']} parts, "
                                f"got {len(results)} results")
        results = list(results)
        optional = self.split is not None and self.split.optional_parts
        names = {"method": method or self.name, "problem": payload["problem"], "optional": optional}
        exactness = self.achieved(inverse)
        if not optional and any(r.schedule is None for r in results):
            return combine(exactness, results, None, **names)
        trail = payload["steps"]
        current: Result | None = None
        for k in reversed(range(len(self.steps))):
            step = self.steps[k]
            step_inverse, step_input = trail[k]
            step_inverse.check(step, step_input)
            if step is self.split:
                current = step.invert(results, step_inverse)
            else:
                current = step.invert([current if current is not None else results[0]], step_inverse)
            if not isinstance(current, Result):
                raise TypeError(f"decomposition '{step.name}': invert() returned "
                                f"{type(current).__name__}, not a schedkit.schedule.Result")
            if current.schedule is None:
                break
        if not self.steps:
            current = results[0]
        return combine(exactness, results, current, **names)

