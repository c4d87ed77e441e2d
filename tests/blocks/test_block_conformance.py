"""Every registered block passes the conformance kit on the tiny instance of block_cases."""

from pathlib import Path

import pytest
from helpers.block_cases import OPTIMAL, cases, problem, schedule

from schedkit.blocks import BLOCKS
from schedkit.testing import check_block

TESTS = Path(__file__).resolve().parents[1]


def builtin_blocks():
    return [kind for kind, cls in BLOCKS.items() if cls.__module__.startswith("schedkit.")]


def test_the_builtin_blocks_are_registered():
    assert {"assignment", "placement", "precedence", "no_overlap", "memory", "cuts", "channels",
            "congestion"} <= set(builtin_blocks())


@pytest.mark.parametrize("kind", builtin_blocks())
def test_block_conformance(kind):
    instance, feasible, infeasible = cases(kind)
    if BLOCKS.get(kind).role == "semantic":
        assert infeasible is not None, f"block_cases.INFEASIBLE has no case for '{kind}'"
    check_block(kind, instance, feasible, infeasible)


@pytest.mark.parametrize("kind", builtin_blocks())
def test_every_block_has_a_golden_lp_and_a_test_file(kind):
    assert (TESTS / "golden" / f"{kind}.lp").is_file(), f"tests/golden/{kind}.lp is missing"
    assert (TESTS / "blocks" / f"test_{kind}.py").is_file(), f"tests/blocks/test_{kind}.py is missing"


def test_the_kit_catches_a_block_that_rejects_nothing():
    with pytest.raises(AssertionError, match="accepts the infeasible schedule"):
        check_block("memory", problem(), schedule(OPTIMAL), schedule(OPTIMAL))


def test_the_kit_catches_a_block_that_says_it_holds_on_parts_and_does_not():
    from schedkit.blocks import Block, register_block

    @register_block("test_every_task")
    class EveryTask(Block):
        """The schedule runs every task of the problem: three of three, never on a part of two."""

        requires = frozenset({"x"})
        holds_on_parts = True       # (wrongly: a part of the tasks runs fewer)
        builds_rows = True

        def build(self, ctx, rows):
            pass        # (its rows are not what the kit's part check is about)

        def violations(self, problem, schedule):
            n = len({r.task for r in schedule.tasks})
            return [] if n >= 3 else [f"runs {n} tasks, fewer than 3"]

    try:
        with pytest.raises(AssertionError, match="says it holds on parts, but rejects the first half"):
            whole = schedule(OPTIMAL)
            check_block("test_every_task", problem(), whole, whole.model_copy(update={"tasks": whole.tasks[:2]}))
    finally:
        BLOCKS.unregister("test_every_task")
