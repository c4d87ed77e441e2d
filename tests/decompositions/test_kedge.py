"""kedge: k-edge-connected modules in topological order; DiviML's bound never above the optimum."""

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.reductions import Chain, DecompositionRefused
from schedkit.decompositions.kedge import Kedge, choose_k, kedge_modules
from schedkit.generators import rwnn

from helpers.split_rounds import run_rounds


def test_modules_of_a_multi_channel_network_follow_its_modules():
    p = Problem.from_dict(rwnn(4, 8, channels=2, dependency="sdep", seed=0))
    modules = kedge_modules(p, 3)
    assert len(modules) == 4
    for t, tasks in enumerate(modules, 1):
        # every inner node of module t is in module t (inputs/outputs may join a neighbour)
        inner = {p.task_index[f"m{t}_n{i}"] for i in range(8)}
        assert inner <= set(tasks)
    k, chosen = choose_k(p)
    assert k == 3 and chosen == modules


@pytest.mark.parametrize("data", [rwnn(3, 4, channels=2, seed=1), rwnn(2, 4, channels=2, seed=0),
                                  rwnn(2, 3, channels=3, dependency="wdep", seed=0)],
                         ids=["c2-sdep", "c2-small", "c3-wdep"])
def test_the_bound_is_never_above_the_optimum(data):
    p = Problem.from_dict(data)
    s = solve(p, "kedge", inner="milp", executor="serial")
    best = solve(p, "milp", threads=1)
    assert best.status == "optimal"
    assert s.status == "feasible"  # a relaxation: a bound, never a proof
    assert s.bound <= best.makespan + 1e-9 <= s.makespan + 1e-9
    s.validate(p)


def test_modules_are_solved_in_rounds_one_per_module():
    p = Problem.from_dict(rwnn(3, 5, channels=2, seed=3))
    chain = Chain.of(Kedge(k=3))
    rounds, results, inverse = run_rounds(chain, p)
    assert len(rounds) == len(kedge_modules(p, 3))
    assert rounds[1][0].name.endswith("/module2") and "~busy:gpu0" in rounds[1][0].tasks
    assert any(name.startswith("~release:") for q in rounds[1][1:] for name in q.tasks)
    result = chain.invert(results, inverse, problem=p)
    assert result.schedule is not None and result.bound <= result.objective


def test_memory_used_by_earlier_modules_is_taken_off_the_capacities():
    data = rwnn(3, 4, channels=2, seed=1)
    for task in data["tasks"]:
        task["memory"] = 1.0
    data["devices"][0]["memory"] = 8.0  # the fast GPU cannot take every task
    p = Problem.from_dict(data)
    s = solve(p, "kedge", inner="milp", executor="serial")
    s.validate(p)
    assert sum(1 for r in s.tasks if r.device == "gpu0") <= 8


def test_a_collocation_group_across_modules_keeps_the_first_module_device():
    data = rwnn(3, 4, channels=2, seed=1)
    data["tasks"][0]["colocate"] = data["tasks"][-1]["colocate"] = "ends"
    p = Problem.from_dict(data)
    s = solve(p, "kedge", inner="heft", executor="serial")
    s.validate(p)
    where = s.placement()
    assert where[data["tasks"][0]["name"]] == where[data["tasks"][-1]["name"]]


def test_bad_k_and_a_single_module_are_refused():
    p = Problem.from_dict(rwnn(2, 4, channels=2, seed=0))
    with pytest.raises(SchedkitError, match="k: Input should be greater than or equal to 1"):
        solve(p, "kedge", k=0)
    with pytest.raises(DecompositionRefused, match="k=1 does not split the task graph into two modules or more"):
        solve(p, "kedge", k=1, inner="heft", executor="serial")


def test_symmetry_in_the_formulation_is_left_out_of_parts_that_tell_the_group_apart():
    from schedkit.generators.platform import nodes
    from schedkit.importers.platform import parse_platform

    p = Problem.from_dict(parse_platform(nodes(2, 2)).retarget(rwnn(2, 4, channels=2, seed=0)))
    symmetric = {"blocks": ["assignment", "placement", {"precedence": {"communication": True}}, "no_overlap",
                            {"symmetry": {"by": "tasks"}}]}
    split = solve(p, "kedge", inner="milp", inner_options={"formulation": symmetric}, executor="serial")
    plain = solve(p, "kedge", inner="milp", executor="serial")
    assert split.makespan == pytest.approx(plain.makespan, rel=1e-6)
    assert split.bound == pytest.approx(plain.bound, rel=1e-6)
    split.validate(p)


ZERO_LENGTH_MODULE = {
    "name": "zero_length_module", "devices": [{"name": "cpu"}],
    "tasks": [{"name": "a", "durations": {"cpu": 1.0}},
              {"name": "z1", "durations": {"cpu": 0.0}}, {"name": "z2", "durations": {"cpu": 0.0}},
              {"name": "z3", "durations": {"cpu": 0.0}}],
    "edges": [{"src": "a", "dst": "z1", "size": 0}, {"src": "z1", "dst": "z2", "size": 0},
              {"src": "z1", "dst": "z3", "size": 0}, {"src": "z2", "dst": "z3", "size": 0}],
}


@pytest.fixture
def rows_backwards():
    """A method whose schedules list their rows last task first (heft's schedule, rows reversed)."""
    from schedkit.methods import METHODS, Method, register_method

    class Backwards(Method):
        """heft, rows reversed."""

        def run(self, problem):
            result = METHODS.get("heft")().result(problem)
            schedule = result.schedule.model_copy(update={"tasks": result.schedule.tasks[::-1]})
            return result.model_copy(update={"schedule": schedule})

    register_method("rows_backwards")(Backwards)
    yield "rows_backwards"
    METHODS.unregister("rows_backwards")


def test_zero_length_tasks_at_one_instant_keep_the_task_graph_order(rows_backwards):
    # Regression (MSR Inception-v3, kedge with milp parts: "the device orders contradict the
    # task graph"): a module's zero-length tasks z1 -> z2 -> z3 all run at t = 1 on one
    # device; ordered by (start, end) in the order the part's rows came, z3 went before z1.
    p = Problem.from_dict(ZERO_LENGTH_MODULE)
    assert kedge_modules(p, 2, min_tasks=1) == [[0], [1, 2, 3]]
    s = solve(p, "kedge", k=2, min_tasks=1, inner=rows_backwards, executor="serial")
    assert s.makespan == pytest.approx(1.0)
    s.validate(p)


def test_a_lookahead_solves_the_next_module_with_each_and_keeps_only_its_own():
    p = Problem.from_dict(rwnn(3, 5, channels=2, seed=3))
    modules = kedge_modules(p, 3)
    chain = Chain.of(Kedge(k=3, lookahead=1))
    parts, inverse = chain.apply(p)
    assert sorted(t for t in parts[0].tasks if not t.startswith("~")) == \
        sorted(p.tasks[i] for i in modules[0] + modules[1])
    s = solve(p, "kedge", k=3, lookahead=1, inner="milp", executor="serial")
    s.validate(p)
    assert sorted(r.task for r in s.tasks) == sorted(p.tasks)


def test_a_module_that_no_longer_fits_the_memory_left_gets_the_whole_problem_by_heft():
    # (memory-tight, with colocation groups and pins: module 2's task t7 fits no device once
    # module 1 took its memory. kedge ended with no schedule, exit 4, where one exists)
    import random

    from schedkit.generators import layered

    rng = random.Random(6)
    data = layered(3, 3, 0.5, 0.2, 3, seed=6, types=2, memory_slack=1.3)
    devices = [d["name"] for d in data["devices"]]
    for task in data["tasks"]:
        draw = rng.random()
        if draw < 0.25:
            task["colocate"] = f"g{rng.randrange(2)}"
        elif draw < 0.35:
            task["pin"] = [rng.choice(devices)]
    problem = Problem.from_dict(data)
    schedule = solve(problem, "kedge")
    assert "module 2 cannot be placed after the modules before it" in schedule.message
    assert schedule.message.endswith("heft's schedule of the whole problem instead")
    assert schedule.status == "heuristic" and schedule.violations(problem) == []
    assert schedule.makespan == solve(problem, "heft").makespan
