"""Conformance checks: what every block, variable family and method must pass.

schedkit's own tests run them over every registered entry; a plug-in's tests call
them on its own blocks, families and methods. Each check raises ``AssertionError``
with a message naming the entry and the broken duty.

Examples
--------
>>> from schedkit.testing import check_family, check_method
>>> from schedkit.testing.instances import instance
>>> check_method("heft", [instance("fork_join"), instance("chain")])
>>> check_family("order", instance("topcuoglu2002").problem())
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from schedkit.blocks import BLOCKS, Block, block_from_data
from schedkit.blocks.base import has_cp_form
from schedkit.cpsat import accepts
from schedkit.errors import ProblemError
from schedkit.methods import METHODS
from schedkit.milp.families import FAMILIES
from schedkit.milp.formulation import Formulation
from schedkit.milp.portfolio import cpsat_installed
from schedkit.milp.readback import read_schedule, warm_values
from schedkit.numerics import time_tolerance
from schedkit.problem import Problem
from schedkit.schedule import Quality, Schedule
from schedkit.testing.instances import CATALOGUE, Instance
from schedkit.timing import list_schedule, to_schedule
from schedkit.validate import semantic_blocks, violations

__all__ = ["check_block", "check_family", "check_holds_on_parts", "check_method", "check_method_on", "formulation_for"]


def formulation_for(blocks: Iterable[Block | str | dict] = (), families: Iterable[str] = (),
                    name: str = "conformance") -> Formulation:
    """The smallest formulation with ``blocks`` that defines every family they use.

    Every family a block requires whose meaning another block defines (``x`` is defined by
    ``assignment``) brings that block (with its default parameters), recursively;
    ``families`` adds families directly.

    Examples
    --------
    >>> [b.kind for b in formulation_for(["no_overlap"]).blocks]
    ['assignment', 'no_overlap', 'cuts']
    """
    given = {b.kind: b for b in map(block_from_data, blocks)}
    chosen: list[str] = []

    def need_family(family: str) -> None:
        cls = FAMILIES.get(family)
        for required in cls.requires:
            need_family(required)
        if cls.defined_by is not None:
            need_block(cls.defined_by)

    def need_block(kind: str) -> None:
        if kind in chosen:
            return
        chosen.append(kind)
        for family in sorted(BLOCKS.get(kind).requires):
            need_family(family)

    for kind in given:
        need_block(kind)
    for family in families:
        need_family(family)
    # Blocks that define families first, in the order the requirements found them.
    ordered = [given.get(kind) or BLOCKS.get(kind)() for kind in reversed(chosen)]
    return Formulation(name=name, blocks=tuple(ordered))


def check_block(block: Block | str | dict, problem: Problem, feasible: Schedule,
                infeasible: Schedule | None = None) -> None:
    """Check a block's duties on ``problem``.

    - it is registered under its kind and round-trips through formulation data;
    - ``describe()`` renders its template and names it;
    - ``violations`` accepts ``feasible`` and, for a semantic block, finds one-line
      messages in ``infeasible``;
    - built into the smallest formulation that defines its families, its rows (and every
      other row) accept ``feasible``: the MILP never cuts off a valid schedule; nor does
      its CP-SAT form (:meth:`~schedkit.blocks.Block.build_cp`, where it has one and
      OR-Tools is installed);
    - where it claims :attr:`~schedkit.blocks.Block.holds_on_parts`, it accepts ``feasible``
      cut down to the first and to the last half of the tasks (in topological order), each
      judged on a problem of those tasks alone (:func:`check_holds_on_parts`).

    ``feasible`` must satisfy every block of that formulation.
    """
    block = block_from_data(block)
    kind = block.kind
    assert kind and BLOCKS.get(kind) is type(block), f"block '{kind}' is not registered under its kind"
    assert block.role in ("semantic", "cut", "symmetry"), f"block '{kind}': unknown role {block.role!r}"
    assert block_from_data(block.to_data()) == block, f"block '{kind}' does not round-trip through data"
    text = block.describe()
    assert f"`{kind}`" in text and text.strip(), f"block '{kind}': describe() does not name the block"
    found = block.violations(problem, feasible)
    assert found == [], f"block '{kind}' rejects the feasible schedule: {found}"
    if block.role == "semantic":
        assert infeasible is not None, f"block '{kind}': a semantic block needs an infeasible case"
        found = block.violations(problem, infeasible)
        assert found, f"block '{kind}' accepts the infeasible schedule"
        assert all(isinstance(m, str) and m and "\n" not in m for m in found), \
            f"block '{kind}': violations must be one-line messages: {found}"
    formulation = formulation_for([block], name=f"conformance_{kind}")
    others = violations(problem, feasible, formulation.blocks)
    assert others == [], \
        f"block '{kind}': the feasible schedule breaks the formulation {formulation.to_data()}: {others}"
    built = formulation.build(problem, horizon=feasible.makespan, warm=feasible)
    broken = built.linear.violated_rows(warm_values(built, feasible))
    assert broken == [], f"block '{kind}': rows cut off the feasible schedule: {broken[:5]}"
    if block.role != "cut" and has_cp_form(block) and cpsat_installed():
        assert accepts(problem, formulation, feasible), \
            f"block '{kind}': its CP-SAT form cuts off the feasible schedule"
    if block.holds_on_parts:
        check_holds_on_parts(block, problem, feasible)


def check_holds_on_parts(block: Block, problem: Problem, feasible: Schedule) -> None:
    """A block that says it holds on parts accepts ``feasible`` cut down to a part: the first
    and the last half of the tasks in topological order, each on a problem of those tasks
    alone (the edges among them), the schedule keeping their rows and the transfers between
    them. What the whole problem allows, a part must allow.

    Examples
    --------
    >>> from schedkit import solve
    >>> from schedkit.blocks import Memory
    >>> from schedkit.testing.instances import instance
    >>> p = instance("fork_join").problem()
    >>> check_holds_on_parts(Memory(), p, solve(p, "heft"))
    """
    from schedkit.reductions.subproblem import sub_problem

    order = problem.topological_order
    half = max(1, len(order) // 2)
    for name, keep in (("first", order[:half]), ("last", order[half:] or order)):
        part = sub_problem(problem, keep, f"{problem.name}/{name}-half")
        inside = set(part.tasks)
        cut = feasible.model_copy(update={
            "tasks": [r for r in feasible.tasks if r.task in inside],
            "transfers": [t for t in feasible.transfers if t.src in inside and t.dst in inside]})
        found = block.violations(part, cut)
        assert found == [], (f"block '{block.kind}' says it holds on parts, but rejects the {name} half "
                             f"of a valid schedule on those tasks alone: {found[:3]}")


def semi_active(problem: Problem) -> Schedule:
    """A left-shifted list schedule of ``problem`` that honours its own semantics."""
    rank = [float(len(problem.tasks) - i) for i in range(len(problem.tasks))]
    device_of, start = list_schedule(problem, rank)
    return to_schedule(problem, device_of, start, "conformance")


def check_family(name: str, problem: Problem, schedule: Schedule | None = None) -> None:
    """Check a variable family on ``problem``.

    - it is registered, and built into the smallest formulation that defines it;
    - :meth:`~schedkit.milp.families.Family.warm` gives every one of its columns a value
      for a valid ``schedule``, and those values satisfy every row of the model;
    - :meth:`~schedkit.milp.families.Family.read` of those values, followed by the
      read-back's exact timing, reproduces ``schedule``.

    ``schedule`` must be left-shifted (every task starts as early as its device order and
    inputs allow); by default a list schedule of the problem's own semantics.
    """
    cls = FAMILIES.get(name)
    assert cls.name == name, f"family '{name}' is registered under another name ({cls.name})"
    schedule = schedule or semi_active(problem)
    formulation = formulation_for(families=[name], name=f"conformance_{name}")
    found = violations(problem, schedule, formulation.blocks)
    assert found == [], f"family '{name}': the schedule breaks {formulation.to_data()}: {found}"
    built = formulation.build(problem, horizon=schedule.makespan, warm=schedule)
    family = built.context.family(name)
    values = warm_values(built, schedule)
    assert None not in values, f"family '{name}': warm() leaves columns of the model's families without a value"
    broken = built.linear.violated_rows(values)
    assert broken == [], f"family '{name}': warm values of a valid schedule break {broken[:5]}"
    again = read_schedule(built, values, schedule.method)
    tol = time_tolerance(schedule.makespan)
    before = {r.task: r for r in schedule.tasks}
    for row in again.tasks:
        old = before[row.task]
        assert row.device == old.device and math.isclose(row.start, old.start, abs_tol=tol), \
            f"family '{type(family).__name__}': read(warm(s)) moves '{row.task}' from {old.device} " \
            f"at {old.start:g} to {row.device} at {row.start:g}"


def check_method(name: str, instances: Sequence[Instance] | None = None, **options) -> None:
    """Check a registered method on catalogue instances with known optima.

    Every schedule is valid under the method's blocks, labelled with the method, no
    shorter than the optimum; ``optimal`` only at the optimum; the same options give the
    same schedule twice (``solve_seconds`` aside). ``instances``: by default the small ones.
    A decomposition may refuse a case (one line, ``DecompositionRefused``), not all of them.
    """
    from schedkit.reductions.reduction import DecompositionRefused

    cls = METHODS.get(name)
    cases = [c for c in CATALOGUE if c.small] if instances is None else list(instances)
    solved = 0
    for case in cases:
        problem = case.problem()
        method = cls(**_with_formulation(cls, case, options))
        try:
            schedule = method.solve(problem)
        except DecompositionRefused:
            continue  # a decomposition that does not apply says so; it must apply to some case
        solved += 1
        label = f"method '{name}' on {case.name}"
        assert schedule.tasks, f"{label}: no schedule (status {schedule.status})"
        assert schedule.method.split(":")[0] == name, f"{label}: schedule labelled '{schedule.method}'"
        found = violations(problem, schedule, method.blocks(problem))
        assert found == [], f"{label}: invalid schedule: {found[:3]}"
        tol = time_tolerance(case.optimum)
        assert schedule.makespan >= case.optimum - tol, \
            f"{label}: makespan {schedule.makespan} below the optimum {case.optimum}"
        if schedule.status == "optimal":
            assert schedule.makespan <= case.optimum * (1 + 1e-4) + tol, \
                f"{label}: 'optimal' at {schedule.makespan}, the optimum is {case.optimum}"
        if schedule.bound is not None:
            assert schedule.bound <= case.optimum + tol, f"{label}: bound {schedule.bound} above the optimum"
        again = cls(**_with_formulation(cls, case, options)).solve(problem)
        assert _rows(again) == _rows(schedule), f"{label}: two runs with the same options differ"
    assert solved or not cases, f"method '{name}' refuses every case: {', '.join(c.name for c in cases)}"


def check_method_on(data: dict, name: str, **options) -> Schedule | None:
    """Run method ``name`` on random problem ``data``: its valid schedule, or ``None``.

    ``None`` when the data is not a valid problem, or the method found no placement (a
    ``ProblemError``) or no schedule. Only an exact method may claim ``infeasible``; every
    schedule is valid under the method's blocks (checked by the method) and under the
    problem's own semantics.
    """
    try:
        problem = Problem.from_dict(data)
    except ProblemError:
        return None
    try:
        result = METHODS.get(name)(**options).result(problem)
    except ProblemError:
        return None
    if result.quality is Quality.INFEASIBLE:
        assert result.provenance == "exact", f"method '{name}' ({result.provenance}) claims infeasibility"
    if result.schedule is None:
        return None
    schedule = result.to_schedule()
    found = violations(problem, schedule, semantic_blocks(problem))
    assert found == [], f"method '{name}': invalid schedule: {found[:3]}"
    return schedule


def _with_formulation(cls, case: Instance, options: dict) -> dict:
    if "formulation" in cls.Options.model_fields and "formulation" not in options:
        return {**options, "formulation": case.formulation}
    return options


def _rows(schedule: Schedule) -> list:
    return [(r.task, r.device, r.start, r.end) for r in schedule.tasks]
