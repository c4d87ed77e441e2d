"""TimingRules: what each block asks of timing, derived once, honoured by every method."""

import pytest

from schedkit import Problem, solve
from schedkit.blocks import (BLOCKS, Assignment, Block, Congestion, Memory, MemoryTimeline, NoOverlap, Placement,
                             Precedence, register_block)
from schedkit.errors import FormulationError
from schedkit.milp.formulation import get_formulation
from schedkit.timing import TimingRules
from schedkit.validate import violations

TINY = Problem.load("examples/tiny.yaml")

#: A device whose capacity makes the memory timeline apply (finite memory, activations).
LEVELLED = Problem.from_dict({"name": "levelled", "devices": [{"name": "d", "memory": 3}],
                              "tasks": [{"name": "f", "work": 1, "activation_memory": 2}]})

#: One producer on d0 sending to two consumers on d1 and d2 at once: with send ports
#: congested one transfer waits (makespan 4), without both leave together (makespan 3).
FORK = Problem.from_dict({
    "name": "fork",
    "devices": [{"name": "d0"}, {"name": "d1"}, {"name": "d2"}],
    "links": [{"src": "d0", "dst": "d1", "bandwidth": 1.0}, {"src": "d0", "dst": "d2", "bandwidth": 1.0}],
    "tasks": [{"name": "a", "durations": {"d0": 1}}, {"name": "b", "durations": {"d1": 1}},
              {"name": "c", "durations": {"d2": 1}}],
    "edges": [{"src": "a", "dst": "b", "size": 1.0}, {"src": "a", "dst": "c", "size": 1.0}]})


@pytest.mark.parametrize("block, problem, expected", [
    (Assignment(), TINY, TimingRules()),
    (Placement(), TINY, TimingRules()),
    (NoOverlap(), TINY, TimingRules()),
    (Memory(), TINY, TimingRules()),
    (Precedence(), TINY, TimingRules(ordered_edges=True, communication=True)),
    (Precedence(communication=False), TINY, TimingRules(ordered_edges=True)),
    (Congestion(), TINY, TimingRules(congestion="channel")),
    (Congestion(resource="both"), TINY, TimingRules(congestion="both")),
    (MemoryTimeline(), LEVELLED, TimingRules(memory="deltas")),
    (MemoryTimeline(mode="lifetime"), LEVELLED, TimingRules(memory="lifetime")),
    (MemoryTimeline(), FORK, TimingRules()),           # no finite capacity: nothing to wait for
])
def test_each_block_contributes_its_rules(block, problem, expected):
    assert block.timing_rules(TimingRules(), problem) == expected


def test_every_registered_block_answers_the_hook():
    for kind, cls in BLOCKS.items():
        try:
            block = cls()
        except Exception:  # (a block with required parameters)
            continue
        assert isinstance(block.timing_rules(TimingRules(), TINY), TimingRules), kind


def test_the_presets_rules():
    rules = {name: get_formulation(name).timing_rules(TINY) for name in ("latency", "jssp", "moirai")}
    assert rules["latency"] == TimingRules(ordered_edges=True, communication=True)
    assert rules["moirai"].congestion == "port"
    assert rules["jssp"].congestion is None


def test_rules_are_checked_and_frozen():
    with pytest.raises(ValueError, match="memory 'peak'"):
        TimingRules(memory="peak")
    rules = TimingRules()
    with pytest.raises(AttributeError):
        rules.congestion = "port"
    assert rules.replace(congestion="port").changed() == {"congestion"}
    assert rules.levels(TINY) is None and not rules.transfers(TINY).congested


@pytest.fixture
def one_send():
    """A user block that asks for congested send ports through the hook alone: its MILP
    form writes no rows, so only the timing engines make its schedules valid."""

    @register_block("test_one_send")
    class OneSend(Block):
        """A device sends one transfer at a time (stands for a user's block that changes timing)."""

        requires = frozenset({"x", "timing", "transfer"})
        builds_rows = True

        def build(self, ctx, rows):
            pass

        def timing_rules(self, rules, problem):
            return rules.replace(congestion="port")

        def violations(self, problem, schedule):
            return Congestion(resource="port").violations(problem, schedule)

    try:
        yield {"name": "one_send", "blocks": ["assignment", "precedence", "no_overlap", "channels",
                                              "test_one_send"]}
    finally:
        BLOCKS.unregister("test_one_send")


def test_a_user_block_that_changes_timing_is_honoured_by_a_heuristic(one_send):
    free = solve(FORK, "heft", formulation={**one_send, "blocks": one_send["blocks"][:-1]})
    assert free.makespan == 3.0 and Congestion(resource="port").violations(FORK, free)
    s = solve(FORK, "heft", formulation=one_send)
    assert s.makespan == 4.0 and violations(FORK, s, get_formulation(one_send).blocks) == []


def test_a_user_block_that_changes_timing_is_honoured_by_the_milp_read_back(one_send):
    s = solve(FORK, "milp", formulation=one_send, solver="highs", warm_start="none")
    assert s.makespan == 4.0 and violations(FORK, s, get_formulation(one_send).blocks) == []


def test_a_user_block_without_timing_rules_is_not_honoured_by_a_heuristic():
    @register_block("test_no_rules")
    class NoRules(Block):
        """Says nothing about timing; a heuristic cannot know what it means."""

        requires = frozenset({"x"})

        def build(self, ctx, rows):
            pass

        def violations(self, problem, schedule):
            return []

    try:
        with pytest.raises(FormulationError, match="cannot honour block 'test_no_rules'"):
            solve(FORK, "heft", formulation={"blocks": ["assignment", "precedence", "test_no_rules"]})
    finally:
        BLOCKS.unregister("test_no_rules")
