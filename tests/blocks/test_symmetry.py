"""Block ``symmetry``: golden LPs, relabelling, the problem check, equal optima on both solvers."""

import copy
import importlib.util

import pytest
from helpers.block_cases import TWINS, TWINS_CANONICAL, TWINS_MIRROR, check_golden, problem, schedule

import schedkit
from schedkit import Formulation, Problem, ProblemError, Schedule, TaskRun
from schedkit.blocks import Symmetry
from schedkit.blocks.interchangeable import first_difference
from schedkit.generators import rwnn
from schedkit.generators.platform import nodes, platform
from schedkit.importers.platform import parse_platform
from schedkit.milp import Milp
from schedkit.milp.readback import warm_values
from schedkit.validate import canonical, violations

BASE = ["assignment", "placement", {"precedence": {"communication": True}}, "no_overlap", "memory"]
BYS = ["tasks", "batches", "busy_time"]


def formulation(by=None, blocks=BASE):
    return Formulation.from_data({"blocks": list(blocks) + ([{"symmetry": {"by": by}}] if by else [])})


def twins_schedule(rows):
    return schedule(rows, "symmetry")


def test_golden_lp(tmp_path):
    text = check_golden("symmetry", tmp_path)
    assert "symmetry.order(g0_g1): +1 x(a_g0) -1 x(a_g1) +1 x(b_g0) -1 x(b_g1) +1 x(c_g0) -1 x(c_g1) >= 0" in text
    assert "x(a_cpu)" not in text.split("symmetry.order")[1].split("\n")[0]  # the cpu is in no group


def test_golden_lp_busy_time(tmp_path):
    text = check_golden("symmetry_busy_time", tmp_path)
    assert "symmetry.order(g0_g1): +1 x(a_g0) -1 x(a_g1) +2 x(b_g0) -2 x(b_g1) +1 x(c_g0) -1 x(c_g1) >= 0" in text


@pytest.mark.parametrize("by", BYS)
def test_a_mirror_image_is_valid_and_relabelled_with_its_transfers(by):
    p = problem("symmetry")
    mirror, canon = twins_schedule(TWINS_MIRROR), twins_schedule(TWINS_CANONICAL)
    block = Symmetry(by=by)
    assert block.violations(p, mirror) == [] and violations(p, mirror, [*formulation(by).blocks]) == []
    relabelled = block.canonicalize(p, mirror)
    assert relabelled.tasks == canon.tasks
    (moved,) = relabelled.transfers   # a -> c now leaves g0 for g1, over the mirrored route
    assert (moved.from_, moved.to, moved.route) == ("g0", "g1", ["g0->g1"])
    assert relabelled.transfers == canon.transfers
    assert block.canonicalize(p, canon) is canon   # already canonical: unchanged
    assert block.canonicalize(p, relabelled) == relabelled


def test_the_measures_can_disagree_and_ties_keep_file_order():
    # g0 runs two short tasks (2 tasks, busy 2), g1 one long one (1 task, busy 5).
    data = copy.deepcopy(TWINS)
    data["tasks"] = [{"name": n, "durations": {"g0": t, "g1": t}} for n, t in (("s1", 1), ("s2", 1), ("long", 5))]
    data["edges"] = []
    p = Problem.from_dict(data)
    s = Schedule(problem="twins", method="manual", status="heuristic",
                 tasks=[TaskRun(task="s1", device="g0", start=0, end=1), TaskRun(task="s2", device="g0", start=1, end=2),
                        TaskRun(task="long", device="g1", start=0, end=5)])
    assert Symmetry(by="tasks").canonicalize(p, s) is s
    assert Symmetry(by="batches").canonicalize(p, s) is s   # unbatched: each task one batch
    busy = Symmetry(by="busy_time").canonicalize(p, s)
    assert [(r.task, r.device) for r in busy.tasks] == [("s1", "g1"), ("s2", "g1"), ("long", "g0")]
    tie = s.model_copy(update={"tasks": [TaskRun(task="s1", device="g1", start=0, end=1),
                                         TaskRun(task="long", device="g0", start=0, end=5)]})
    assert Symmetry(by="tasks").canonicalize(Problem.from_dict({**data, "tasks": data["tasks"][::2]}), tie) is tie


def test_warm_starts_are_canonical_and_satisfy_the_rows():
    p = problem("symmetry")
    mirror = twins_schedule(TWINS_MIRROR)
    built = Milp(formulation=formulation("tasks")).formulation.build(p, horizon=mirror.makespan, warm=mirror)
    assert [r.device for r in built.warm.tasks] == ["g0", "g0", "g1"]
    assert built.linear.violated_rows(warm_values(built, mirror)) == []   # relabelled on the way in
    assert canonical(p, mirror, formulation().blocks) is mirror            # no symmetry block: unchanged


def test_every_method_returns_the_canonical_order():
    p = problem("symmetry")
    f = formulation("busy_time")
    for method, options in (("heft", {}), ("greedy", {}), ("annealing", {"iterations": 200}), ("milp", {"threads": 1}),
                            ("milp", {"threads": 1, "warm_start": "heft"})):
        s = schedkit.solve(p, method, formulation=f, **options)
        busy = Symmetry(by="busy_time").measures(p, s)
        assert busy[0] >= busy[1], (method, s.tasks)
        assert violations(p, s, list(f.blocks)) == []


def nodes_problem(servers=2, gpus=2, modules=1, size=6, seed=1):
    return Problem.from_dict(parse_platform(nodes(servers, gpus)).retarget(rwnn(modules=modules, nodes=size, seed=seed)))


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_the_optimum_is_the_same_with_every_ordering(solver):
    if solver == "cpsat" and importlib.util.find_spec("ortools") is None:
        pytest.skip("OR-Tools is not installed")
    p = nodes_problem()
    found = {by: schedkit.solve(p, "milp", formulation=formulation(by), solver=solver, threads=1, time_limit=60)
             for by in [None, *BYS]}
    assert {s.status for s in found.values()} == {"optimal"}
    free = found.pop(None).makespan
    for by, s in found.items():
        assert s.makespan == pytest.approx(free, rel=1e-6), by
        measure = Symmetry(by=by).measures(p, s)
        for group in ([0, 1], [2, 3]):
            assert measure[group[0]] >= measure[group[1]], (by, s.tasks)


def test_twins_optimum_on_both_solvers():
    p = problem("symmetry")
    solvers = ["highs"] + (["cpsat"] if importlib.util.find_spec("ortools") else [])
    for solver in solvers:
        for by in BYS:
            s = schedkit.solve(p, "milp", formulation=formulation(by), solver=solver, threads=1)
            assert (s.status, s.makespan) == ("optimal", pytest.approx(3.5))
            assert [(r.task, r.device) for r in s.tasks] == [("a", "g0"), ("b", "g0"), ("c", "g1")]


# ---------------------------------------------------------------------- the problem check
def differing(change):
    data = copy.deepcopy(TWINS)
    change(data)
    return Problem.from_dict(data)


@pytest.mark.parametrize("change, words", [
    (lambda d: d["devices"][1].update(memory=8), "memory unlimited and 8"),
    (lambda d: d["devices"][1].update(speed=2), "speed 1 and 2"),
    (lambda d: d["devices"][1].update(batch_sizes=[1, 2]), "batch sizes None and [1, 2]"),
    (lambda d: d["tasks"][1]["durations"].update(g1=3), "task 'b' lasts 2 on g0 and 3 on g1"),
    (lambda d: d["tasks"][2].update(pin=["g0", "cpu"]), "task 'c' may run on g0 but not on g1"),
    (lambda d: d["links"][2].update(bandwidth=3), "g0->cpu has bandwidth 1 and latency 0, g1->cpu bandwidth 3"),
    (lambda d: d["links"][1].update(bidirectional=False), "cpu->g0 has bandwidth 1 and latency 0.5, cpu->g1 bandwidth 1 and latency 0"),
    (lambda d: d["links"].__setitem__(0, {**d["links"][0], "bidirectional": False}), "g0->g1 has bandwidth 2 and latency 0.5, g1->g0 bandwidth 1"),
    (lambda d: d["links"][1].update(channel="pcie"), "share channels differently"),
    (lambda d: d["edges"][0].update(transfer_times={"g0->g1": 3}), "edge a->b gives transfer time 3 for g0->g1 "
                                                                    "and none for g1->g0"),
], ids=["memory", "speed", "batch_sizes", "duration", "pin", "bandwidth", "one_way", "between", "channel",
        "transfer_times"])
def test_group_members_that_differ_are_named_with_the_first_difference(change, words):
    p = differing(change)
    with pytest.raises(ProblemError) as error:
        Symmetry().applies_to(p)
    message = str(error.value)
    assert message.startswith("block 'symmetry': group 'gpu': devices g0 and g1 are not interchangeable: ")
    assert words in message and "\n" not in message
    # Without the block the problem is fine: a group alone asks nothing.
    assert schedkit.solve(p, "heft").tasks


def test_shared_channels_used_alike_pass():
    data = copy.deepcopy(TWINS)
    for link in data["links"][1:]:
        link["channel"] = "pcie"   # both GPUs hang off one PCIe switch
    assert first_difference(Problem.from_dict(data)) is None


def test_generated_platforms_with_groups_are_interchangeable():
    for data in (platform(cpus=1, gpus=4, gpu_model="a100,t4"), platform(gpus=3, gpu_link="none"),
                 platform(cpus=2, gpus=0), nodes(3, 2)):
        p = Problem.from_dict(parse_platform(data).retarget(rwnn(modules=1, nodes=3)))
        assert first_difference(p) is None, data["name"]
    # With GPUs, which hang off the first CPU only, the CPUs are not twins: no group for them.
    data = platform(cpus=2, gpus=1)
    assert [d.get("group") for d in data["devices"]] == [None, None, None]
    grouped = {**data, "devices": [{**d, "group": "cpu"} if d["name"].startswith("cpu") else d
                                   for d in data["devices"]]}
    p = Problem.from_dict(parse_platform(grouped).retarget(rwnn(modules=1, nodes=3)))
    assert first_difference(p).startswith("group 'cpu': devices cpu0 and cpu1 are not interchangeable: "
                                          "cpu0->gpu0 has bandwidth")


def test_a_problem_without_a_group_is_refused_by_name():
    with pytest.raises(ProblemError, match="block 'symmetry': no two devices of problem 'blocks' share a 'group'"):
        schedkit.solve(problem(), "milp", formulation=formulation("tasks"))
    with pytest.raises(ProblemError, match="block 'symmetry'"):
        schedkit.solve(problem(), "heft", formulation=formulation("tasks"))
