"""Modules alike in the series search: one relaxation of the class's least part, pinned alike,
bounds every member with the same ends, never above a member's own optimum."""

import pytest

from schedkit.auto.alike import alike
from schedkit.auto.relaxation import relaxation_bound
from schedkit.auto.series_alike import relax_alike
from schedkit.auto.series_chain import Module
from schedkit.methods import METHODS
from schedkit.problem.series_cuts import chain_cuts, modules
from schedkit.reductions.subproblem import module_part
from schedkit.semantics import get_formulation

from helpers.series_cases import chain_of_four

MOIRAI = get_formulation("moirai")


def test_one_relaxation_bounds_every_module_alike_with_the_same_ends():
    p = chain_of_four(grow=1)
    groups, cuts = modules(p, chain_cuts(p))
    chain = [Module(tasks, None if t == 0 else cuts[t - 1].head, bool(t and cuts[t - 1].twin),
                    None if t == len(cuts) else cuts[t].tail) for t, tasks in enumerate(groups)]
    classes = alike(p, [m.tasks for m in chain], [m.entry if m.twin else None for m in chain])
    diamonds = next(c for c in classes if len(c) > 1)
    assert len(diamonds) == 3     # (the diamonds after the first, each after a twin of the last task)
    rules, asked = MOIRAI.timing_rules(p), []

    def relax(part, floor, seconds):
        asked.append(part.name)
        return relaxation_bound(part, rules, seconds, floor)

    t = diamonds[1][0]
    found = relax_alike(p, chain, classes, t, ("pair", (1, 0)), MOIRAI.blocks, relax, 10,
                        own=lambda: pytest.fail("a module alike others is relaxed on their least part"))
    # (the last diamond has no exit to pin: the pair does not apply to it)
    assert len(asked) == 1 and sorted(m for m, _ in found) == [m for m, _ in diamonds if chain[m].exit is not None]
    milp = METHODS.get("milp")(formulation="moirai", solver="highs", threads=1, time_limit=30)
    for m, bound in found:
        module = chain[m]
        own = module_part(p, module.tasks, "own", module.entry, module.exit, module.twin, 1, 0)
        assert 0 < bound <= milp.result(own).objective + 1e-6
