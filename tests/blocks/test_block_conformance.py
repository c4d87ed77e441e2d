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
