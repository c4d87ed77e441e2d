"""bridge_dp: cuts at bridges and articulation points; the DP equals the monolithic optimum on chains."""

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.reductions import DecompositionRefused
from schedkit.decompositions.bridge_dp import TWIN, BridgeDP
from schedkit.problem.series_cuts import chain_cuts, modules
from schedkit.generators import rwnn
from schedkit.testing import instance

from helpers.no_precedence import CHAIN_OF_FOUR, NO_PRECEDENCE

#: Two diamonds joined at 'x': an articulation point that is not the end of a bridge.
DIAMONDS = {
    "name": "diamonds",
    "devices": [{"name": "fast"}, {"name": "slow"}],
    "links": [{"src": "fast", "dst": "slow", "bandwidth": 2, "latency": 0.5}],
    "tasks": [{"name": n, "durations": {"fast": f, "slow": s}} for n, f, s in
              [("a", 1, 2), ("b", 3, 4), ("c", 3, 4), ("x", 1, 1), ("d", 2, 3), ("e", 2, 3), ("f", 1, 2)]],
    "edges": [{"src": s, "dst": d, "size": 2} for s, d in
              [("a", "b"), ("a", "c"), ("b", "x"), ("c", "x"), ("x", "d"), ("x", "e"), ("d", "f"), ("e", "f")]],
}


def test_cuts_are_bridges_and_twinned_articulation_points():
    p = Problem.from_dict(DIAMONDS)
    cuts = chain_cuts(p)
    assert [(p.tasks[c.tail], p.tasks[c.head], c.twin) for c in cuts] == [("x", "x", True)]
    groups, kept = modules(p, cuts)
    assert [[p.tasks[i] for i in g] for g in groups] == [["a", "b", "c", "x"], ["d", "e", "f"]]
    parts, _ = BridgeDP().apply(p)
    assert len(parts) == 2 + 2  # module 1: one per exit device; module 2: one per entry device
    twin = parts[2]
    assert "x" + TWIN in twin.tasks and twin.durations[twin.task_index["x" + TWIN]] == {0: 0.0}


def test_a_skip_edge_over_a_task_is_no_cut():
    data = dict(DIAMONDS, edges=DIAMONDS["edges"] + [{"src": "b", "dst": "d", "size": 1}])
    assert chain_cuts(Problem.from_dict(data)) == []


@pytest.mark.parametrize("data", [DIAMONDS, rwnn(3, 4, seed=2), rwnn(2, 5, graph="ba", seed=5)],
                         ids=["twin", "rwnn-3x4", "rwnn-ba"])
def test_the_dp_equals_the_monolithic_optimum(data):
    p = Problem.from_dict(data)
    split = solve(p, "bridge_dp", inner="milp", executor="serial")
    whole = solve(p, "milp", threads=1)
    assert whole.status == "optimal"
    assert split.status == "optimal"
    assert split.makespan == pytest.approx(whole.makespan, rel=1e-6)
    assert split.bound == pytest.approx(whole.makespan, rel=1e-6)
    split.validate(p)


def test_with_a_heuristic_inside_the_bound_is_the_dp_of_the_parts_bounds():
    p = Problem.from_dict(rwnn(3, 5, seed=1))
    s = solve(p, "bridge_dp", inner="heft", executor="serial")
    optimum = solve(p, "milp", threads=1).makespan
    assert s.status == "heuristic" and s.bound <= optimum + 1e-9 <= s.makespan + 1e-9  # heft's word


@pytest.fixture
def stops_at_its_gap():
    """``milp`` that stops at its relative gap (1e-6) and says ``feasible``, as a solver does."""
    from schedkit.methods import METHODS, Method, register_method
    from schedkit.schedule import Quality, Termination

    class AtGap(Method):
        """milp, stopped at its gap."""

        def run(self, problem):
            result = METHODS.get("milp")(threads=1).result(problem)
            return result.model_copy(update={"quality": Quality.FEASIBLE, "termination": Termination.GAP,
                                             "bound": result.objective * (1 - 1e-6)})

    register_method("stops_at_its_gap")(AtGap)
    yield "stops_at_its_gap"
    METHODS.unregister("stops_at_its_gap")


def test_a_dp_bound_that_meets_the_schedule_proves_it_optimal(stops_at_its_gap):
    # It said "feasible ... gap=0.00%": no part said optimal, but the DP over the parts'
    # bounds (exact for the chain) meets the DP's schedule.
    p = Problem.from_dict(rwnn(3, 4, seed=2))
    s = solve(p, "bridge_dp", inner=stops_at_its_gap, executor="serial")
    optimum = solve(p, "milp", threads=1).makespan
    assert s.status == "optimal" and s.bound == s.makespan == pytest.approx(optimum, rel=1e-9)
    # heft's parts say what heft says, whatever their bounds
    assert solve(p, "bridge_dp", inner="heft", executor="serial").status == "heuristic"


def test_min_tasks_joins_modules_and_keeps_the_optimum():
    p = Problem.from_dict(rwnn(3, 4, seed=2))
    many, _ = BridgeDP().apply(p)
    few, _ = BridgeDP(min_tasks=6).apply(p)
    assert len(few) < len(many)
    s = solve(p, "bridge_dp", inner="milp", min_tasks=6, executor="serial")
    assert s.status == "optimal" and s.makespan == pytest.approx(solve(p, "milp", threads=1).makespan)


def test_a_graph_without_a_cut_is_refused_with_a_hint():
    p = instance("fork_join").problem()
    with pytest.raises(DecompositionRefused, match="no bridge or articulation point .* try kedge"):
        solve(p, "bridge_dp", inner="heft", executor="serial")


def test_binding_memory_and_split_collocation_groups_are_refused():
    data = rwnn(2, 3, seed=1)
    data["devices"][0]["memory"] = 5.0
    for task in data["tasks"]:
        task["memory"] = 1.0
    assert "block 'memory'" in BridgeDP().refusal(Problem.from_dict(data))
    data = rwnn(2, 3, seed=1)
    data["tasks"][0]["colocate"] = data["tasks"][-1]["colocate"] = "g"
    assert BridgeDP().refusal(Problem.from_dict(data)) == "collocation group 'g' spans two modules"
    data["devices"][0]["memory"] = 1e12  # memory that cannot bind is no reason to refuse
    data["tasks"][-1].pop("colocate")
    assert BridgeDP().refusal(Problem.from_dict(data)) is None


def test_min_tasks_below_one_is_an_error():
    with pytest.raises(SchedkitError, match="min_tasks: Input should be greater than or equal to 1"):
        solve(Problem.from_dict(DIAMONDS), "bridge_dp", min_tasks=0)


def test_a_block_it_does_not_know_is_refused_by_name():
    from schedkit.blocks import BLOCKS, Block, register_block

    @register_block("test_wide_transfers")
    class Wide(Block):
        """Transfers must be wide (a stand-in for a block a decomposition does not understand)."""

        requires = frozenset({"x"})

        def build(self, ctx, blk):
            pass

        def violations(self, problem, schedule):
            return []

    try:
        formulation = {"name": "wide", "blocks": ["assignment", "precedence", "no_overlap",
                                                   "test_wide_transfers"]}
        with pytest.raises(DecompositionRefused) as error:
            solve(Problem.from_dict(DIAMONDS), "bridge_dp", inner="milp", executor="serial",
                  inner_options={"formulation": formulation})
        assert str(error.value) == ("decomposition 'bridge_dp' does not accept problem 'diamonds': block "
                                    "'test_wide_transfers' is not supported by decomposition 'bridge_dp'")
    finally:
        BLOCKS.unregister("test_wide_transfers")


def test_symmetry_in_the_formulation_gives_the_optimum_without_it():
    # Identical GPUs of a server (a symmetry group): each part pins its boundary tasks, which tells
    # them apart, so the parts are solved without the groups; the optimum is the same.
    from schedkit.generators.platform import nodes
    from schedkit.importers.platform import parse_platform

    p = Problem.from_dict(parse_platform(nodes(2, 2)).retarget(rwnn(3, 4, seed=2)))
    symmetric = {"blocks": ["assignment", "placement", {"precedence": {"communication": True}}, "no_overlap",
                            {"symmetry": {"by": "tasks"}}]}
    split = solve(p, "bridge_dp", inner="milp", inner_options={"formulation": symmetric}, executor="serial")
    plain = solve(p, "bridge_dp", inner="milp", executor="serial")
    assert split.status == plain.status == "optimal"
    assert split.makespan == pytest.approx(plain.makespan, rel=1e-6)
    split.validate(p)


def _on_servers(tmp_path, seed):
    from schedkit.cli.main import main

    devices, net = tmp_path / "nodes.yaml", tmp_path / f"rwnn{seed}.json"
    assert main(["generate", "platform", "nodes", "--nodes", "2", "--gpus", "2", "-o", str(devices)]) == 0
    assert main(["generate", "rwnn", "--modules", "3", "--nodes", "3", "--seed", str(seed),
                 "--platform", str(devices), "-o", str(net)]) == 0
    return Problem.load(net)


@pytest.mark.parametrize("seed", [1, 4])
def test_mirror_pairs_of_identical_devices_are_solved_once_with_the_same_optimum(tmp_path, seed):
    p = _on_servers(tmp_path, seed)                  # two servers of two identical GPUs
    parts, inverse = BridgeDP().apply(p)
    pairs = [pair for module in inverse.payload["modules"] for pair in module["pairs"]]
    assert len(parts) < len(pairs)                   # mirrored pairs share a part
    assert any(back is not None for *_, back in pairs)
    mirrored = solve(p, "bridge_dp", inner="milp", inner_options="threads=1", executor="serial")
    whole = solve(p, "milp", threads=1)
    assert mirrored.status == whole.status == "optimal"
    assert mirrored.makespan == pytest.approx(whole.makespan, rel=1e-6)



@pytest.mark.parametrize("method", ["bridge_dp", "kedge"])
def test_a_formulation_that_does_not_order_the_edges_is_refused(method):
    # (bridge_dp summed its modules one after the other and said 'optimal 4', where 2 is best)
    with pytest.raises(DecompositionRefused, match="the formulation does not order the edges"):
        solve(Problem.from_dict(CHAIN_OF_FOUR), method, executor="serial", inner_options={"formulation": NO_PRECEDENCE})

