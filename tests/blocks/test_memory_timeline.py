"""Block ``memory_timeline``: golden LPs, the event sweep of both modes, optima by hand on both
solvers, bad data, and random instances whose MILP optimum is the brute-force one."""

import itertools
import random

import pytest
from helpers.block_cases import JOIN, OWN, PAIRS, check_golden, problem, schedule

from schedkit import Formulation, Problem, Schedule, TaskRun, solve
from schedkit.milp import get_formulation
from schedkit.blocks import MemoryTimeline
from schedkit.errors import ProblemError, SchedkitError
from schedkit.milp.portfolio import cpsat_installed
from schedkit.testing import check_block
from schedkit.timing import fixed_order_times, to_schedule
from schedkit.validate import violations

needs_cpsat = pytest.mark.skipif(not cpsat_installed(), reason="OR-Tools is not installed")


def formulation(mode: str, name: str = "timeline") -> Formulation:
    return Formulation.from_data({"blocks": ["assignment", "placement", "precedence", "no_overlap",
                                             {"memory_timeline": {"mode": mode}}]}, name=name)


def rows(p: Problem, runs) -> Schedule:
    """A schedule of ``(task, device, start, end)`` runs (no transfers: the edges carry nothing)."""
    return Schedule(problem=p.name, method="manual", status="heuristic",
                    tasks=[TaskRun(task=t, device=d, start=s, end=e) for t, d, s, e in runs])


# ---------------------------------------------------------------------- golden LPs
def test_golden_lp_deltas(tmp_path):
    text = check_golden("memory_timeline", tmp_path)
    # f1 and f2 start levels on both devices; b1, b2 release (no check of their own).
    for row in ("level(f1_gpu)", "level(f2_gpu)", "level(f1_cpu)", "level(f2_cpu)"):
        assert f"memory_timeline.{row}" in text
    assert "level(b1" not in text and "level(b2" not in text


def test_golden_lp_lifetime(tmp_path):
    text = check_golden("memory_timeline_lifetime", tmp_path)
    assert "memory_timeline.level(c_gpu)" in text          # c's start on the gpu
    assert "memory_timeline.copy_start(a_cpu)" in text     # a's output read by c on the cpu
    assert "memory_timeline.output_end(a)" in text


# ---------------------------------------------------------------------- violations
def test_deltas_feasible_and_infeasible_schedules():
    _, good, bad = OWN["memory_timeline"]
    p = problem("memory_timeline")
    assert MemoryTimeline().violations(p, schedule(good, "memory_timeline")) == []
    assert MemoryTimeline().violations(p, schedule(bad, "memory_timeline")) == [
        "device gpu: memory level 10 at time 1 exceeds its capacity 6"]


def test_deltas_a_release_at_an_addition_comes_first():
    p = Problem.from_dict(PAIRS)
    # b2 frees f2's activations at 2, when f1 starts: the level is 1 + 1 + 4, not 10.
    s = rows(p, [("f2", "gpu", 0, 1), ("b2", "gpu", 1, 2), ("f1", "gpu", 2, 3), ("b1", "gpu", 3, 4)])
    assert MemoryTimeline().violations(p, s) == []
    late = rows(p, [("f2", "gpu", 0, 1), ("b2", "gpu", 1, 2.5), ("f1", "gpu", 2, 3), ("b1", "gpu", 3, 4)])
    assert MemoryTimeline().violations(p, late) == ["device gpu: memory level 10 at time 2 exceeds its capacity 6"]


def test_deltas_counts_static_memory_as_resident():
    data = {**PAIRS, "tasks": [{**t, "memory": 1} for t in PAIRS["tasks"]]}
    p = Problem.from_dict(data)
    s = rows(p, [("f1", "cpu", 0, 3), ("f2", "gpu", 0, 1), ("b2", "gpu", 3, 4), ("b1", "cpu", 3, 6)])
    # gpu: weights 1 + static 2 + f2's 4 = 7 > 6
    assert MemoryTimeline().violations(p, s) == ["device gpu: memory level 7 at time 0 exceeds its capacity 6",
                                                 "device cpu: memory level 7 at time 0 exceeds its capacity 6"]


def test_lifetime_feasible_and_infeasible_schedules():
    _, good, bad = OWN["memory_timeline_lifetime"]
    p = problem("memory_timeline_lifetime")
    block = MemoryTimeline(mode="lifetime")
    assert block.violations(p, schedule(good, "memory_timeline_lifetime")) == []
    assert block.violations(p, schedule(bad, "memory_timeline_lifetime")) == [
        "device gpu: memory level 7 at time 1 exceeds its capacity 5"]


def test_lifetime_an_output_lives_until_its_last_local_consumer_and_copies_until_theirs():
    p = Problem.from_dict({
        "name": "chain", "devices": [{"name": "gpu", "memory": 6}, {"name": "cpu", "memory": 6}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1, "bidirectional": True}],
        "tasks": [{"name": "a", "durations": {"gpu": 1}, "activation_memory": 4},
                  {"name": "b", "durations": {"gpu": 1, "cpu": 1}, "activation_memory": 2},
                  {"name": "c", "durations": {"gpu": 1, "cpu": 1}, "activation_memory": 1}],
        "edges": [{"src": "a", "dst": "b", "size": 1}, {"src": "a", "dst": "c", "size": 1}]})
    block = MemoryTimeline(mode="lifetime")
    local = rows(p, [("a", "gpu", 0, 1), ("b", "gpu", 1, 2), ("c", "gpu", 2, 3)])
    # at 2: a's output (read by c) 4 + c's 1; b's output died with b at 2
    assert block.violations(p, local) == []
    # b on the cpu: a's copy arrives at the transfer's start (1) and lives until b ends (3):
    # 4 + b's own 2 at 2
    s = rows(p, [("a", "gpu", 0, 1), ("b", "cpu", 2, 3), ("c", "gpu", 1, 2)])
    from schedkit.timing import with_transfers
    s = with_transfers(p, s)
    assert block.violations(p, s) == []
    wide = rows(p, [("a", "gpu", 0, 1), ("b", "cpu", 2, 3), ("c", "cpu", 2.5, 3.5)])
    wide = with_transfers(p, wide)
    # cpu at 2.5: one copy of a for both readers (4) + b's output (2, until b ends at 3) + c's (1)
    assert block.violations(p, wide) == ["device cpu: memory level 7 at time 2.5 exceeds its capacity 6"]


# ---------------------------------------------------------------------- optima
@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_deltas_optimum_puts_the_pairs_on_two_devices(solver):
    p = Problem.from_dict(PAIRS)
    s = solve(p, "milp", formulation=formulation("deltas"), solver=solver, warm_start="none", time_limit=30)
    assert (s.status, s.makespan) == ("optimal", pytest.approx(6.0))
    where = s.placement()
    assert where["f1"] != where["f2"]
    free = solve(p, "milp", formulation=Formulation.from_data(
        {"blocks": ["assignment", "placement", "precedence", "no_overlap"]}), solver="highs", warm_start="none")
    assert free.makespan == pytest.approx(4.0)


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_deltas_releases_fit_what_a_static_sum_cannot(solver):
    # One device, memory 6: the activations add up to 8, but each backward pass frees its
    # forward pass's before the next one starts (no cross edges here).
    data = {**PAIRS, "devices": [{"name": "gpu", "memory": 6}], "links": [],
            "tasks": [{"name": t["name"], "durations": {"gpu": 1}, "activation_memory": t["activation_memory"]}
                      for t in PAIRS["tasks"]],
            "edges": [{"src": "f1", "dst": "b1"}, {"src": "f2", "dst": "b2"}]}
    p = Problem.from_dict(data)
    s = solve(p, "milp", formulation=formulation("deltas"), solver=solver, warm_start="none", time_limit=30)
    assert (s.status, s.makespan) == ("optimal", pytest.approx(4.0))
    order = [r.task for r in sorted(s.tasks, key=lambda r: r.start)]
    assert order.index("b1") < order.index("f2") or order.index("b2") < order.index("f1")
    static = {**data, "tasks": [{**t, "memory": max(t.get("activation_memory", 0), 0)} for t in data["tasks"]]}
    with pytest.raises(SchedkitError):
        solve(Problem.from_dict(static), "milp", formulation=Formulation.from_data(
            {"blocks": ["assignment", "precedence", "no_overlap", "memory"]}), solver="highs", warm_start="none")


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_lifetime_optimum_moves_the_join_to_the_cpu(solver):
    p = Problem.from_dict(JOIN)
    s = solve(p, "milp", formulation=formulation("lifetime"), solver=solver, warm_start="none", time_limit=30)
    assert (s.status, s.makespan) == ("optimal", pytest.approx(4.0))
    assert s.placement()["c"] == "cpu"


def test_the_fdjssp_preset_holds_the_timeline():
    from schedkit.milp import get_formulation

    f = get_formulation("fdjssp")
    assert [b.kind for b in f.blocks] == ["assignment", "placement", "precedence", "no_overlap", "channels",
                                          "congestion", "memory_timeline", "cuts"]
    assert "She et al. 2025" in f.description
    assert "memory_timeline` (mode=deltas)" in f.describe()
    s = solve(Problem.from_dict(PAIRS), "milp", formulation="fdjssp", solver="highs", warm_start="none")
    assert (s.status, s.makespan) == ("optimal", pytest.approx(6.0))


# ---------------------------------------------------------------------- bad data
def test_a_negative_activation_is_a_release_in_deltas_and_an_error_in_lifetime():
    p = Problem.from_dict(PAIRS)
    assert MemoryTimeline(mode="deltas").applies_to(p)
    with pytest.raises(ProblemError) as err:
        MemoryTimeline(mode="lifetime").applies_to(p)
    message = str(err.value)
    assert "\n" not in message and "task 'b1'" in message and "lifetime" in message
    with pytest.raises(ProblemError, match="task 'b1'"):
        solve(p, "milp", formulation=formulation("lifetime"), solver="highs", warm_start="none")


def test_the_command_line_names_the_task_in_one_line(tmp_path, capfd):
    import json

    from schedkit.cli.main import main

    src, formulation_file, out = tmp_path / "pairs.json", tmp_path / "life.yaml", tmp_path / "out.json"
    src.write_text(json.dumps(PAIRS))
    formulation_file.write_text("blocks:\n  - assignment\n  - placement\n  - precedence\n  - no_overlap\n"
                                "  - memory_timeline: {mode: lifetime}\n")
    code = main(["solve", str(src), "-f", str(formulation_file), "-o", str(out), "--solver", "highs"])
    err = capfd.readouterr().err.strip().splitlines()
    assert code != 0 and not out.exists()
    assert err == ["schedkit: error: task 'b1': activation_memory -4 is negative, which memory_timeline mode "
                   "'lifetime' does not allow (it is an output's size)"]


def test_weights_that_fit_no_device_are_named():
    data = {**PAIRS, "tasks": [{**PAIRS["tasks"][0], "weight_memory": 3}] + PAIRS["tasks"][1:]}
    with pytest.raises(ProblemError, match=r"task 'f1': its weights and activations \(7\) fit on none"):
        MemoryTimeline().applies_to(Problem.from_dict(data))


def test_a_problem_without_capacities_gives_the_block_nothing_to_say():
    data = {**PAIRS, "devices": [{"name": "gpu"}, {"name": "cpu"}]}
    p = Problem.from_dict(data)
    assert not MemoryTimeline().applies_to(p)
    assert MemoryTimeline().estimate(p) == 0


def test_the_command_line_notes_once_that_a_timeline_has_no_memory_data(tmp_path, capfd):
    # Chosen: a note, not an error (the block is simply true); the solve goes on.
    import json

    from schedkit.cli.main import main

    src, out = tmp_path / "free.json", tmp_path / "out.json"
    src.write_text(json.dumps({**PAIRS, "devices": [{"name": "gpu"}, {"name": "cpu"}]}))
    assert main(["solve", str(src), "-f", "fdjssp", "-m", "heft", "-o", str(out)]) == 0
    err = capfd.readouterr().err.strip().splitlines()
    assert out.exists() and err == [
        "schedkit: note: block 'memory_timeline' finds no weights and activations over time in the problem "
        "(with a finite capacity where it needs one): it constrains nothing"]


# ---------------------------------------------------------------------- conformance
@pytest.mark.parametrize("kind", ["memory_timeline", "memory_timeline_lifetime"])
def test_both_modes_pass_the_conformance_kit(kind):
    data, good, bad = OWN[kind]
    block = {"memory_timeline": {"mode": "lifetime" if kind.endswith("lifetime") else "deltas"}}
    check_block(block, Problem.from_dict(data), schedule(good, kind), schedule(bad, kind))


# ---------------------------------------------------------------------- random instances
def random_problem(seed: int, mode: str, zero: bool = True) -> Problem:
    """5 tasks on 2 devices with weights, activations and capacities that often bind; with
    ``zero``, some tasks of zero duration (they may sit inside another task)."""
    rng = random.Random(seed)
    caps = [6, 8, 10] if mode == "deltas" else [9, 11, 14]
    amounts = [-4, -3, 0, 2, 3, 4, 5] if mode == "deltas" else [0, 2, 3, 4, 5]
    tasks = []
    for k in range(5):
        durations = {"g0": rng.choice([1, 2, 3]), "g1": rng.choice([1, 2, 3])}
        if rng.random() < 0.2 and zero:
            durations = {"g0": 0, "g1": 0}
        task = {"name": f"t{k}", "durations": durations, "weight_memory": rng.choice([0, 0, 1, 2]),
                "activation_memory": rng.choice(amounts)}
        if rng.random() < 0.3:
            task["pin"] = [rng.choice(["g0", "g1"])]
        tasks.append(task)
    edges = [{"src": f"t{i}", "dst": f"t{j}", "size": rng.choice([0, 1, 2])}
             for j in range(5) for i in range(j) if rng.random() < 0.35]
    return Problem.from_dict({
        "name": f"r{seed}", "devices": [{"name": "g0", "memory": rng.choice(caps)},
                                        {"name": "g1", "memory": rng.choice(caps)}],
        "links": [{"src": "g0", "dst": "g1", "bandwidth": 2, "latency": 0.5, "bidirectional": True}],
        "tasks": tasks, "edges": edges})


def brute_force(p: Problem, blocks) -> float | None:
    """The shortest valid left-shifted schedule over every mapping and every task order."""
    n = len(p.tasks)
    orders = [perm for perm in itertools.permutations(range(n))
              if all(perm.index(i) < perm.index(j) for i, j, _ in p.edges)]
    best = None
    for device_of in itertools.product(*p.allowed):
        seen = set()
        for perm in orders:
            by_device = tuple(tuple(i for i in perm if device_of[i] == d) for d in range(len(p.devices)))
            if by_device in seen:
                continue
            seen.add(by_device)
            s = to_schedule(p, device_of, fixed_order_times(p, device_of, by_device), "brute")
            if (best is None or s.makespan < best - 1e-9) and not violations(p, s, blocks):
                best = s.makespan
    return best


def solver_schedule(built, values) -> Schedule:
    """The schedule of the solver's own times (no read-back re-timing)."""
    from schedkit import Transfer

    p, ctx = built.problem, built.context
    x, timing = ctx.family("x"), ctx.family("timing")
    tasks = []
    for i, name in enumerate(p.tasks):
        d = max(p.allowed[i], key=lambda d: 1.0 if x.col(i, d) is None else values[x.col(i, d)])
        start = values[timing.start_col(i)]
        tasks.append(TaskRun(task=name, device=p.devices[d], start=start, end=start + p.durations[i][d]))
    where = {r.task: p.device_index[r.device] for r in tasks}
    moved = []
    if ctx.has("transfer"):
        tr = ctx.family("transfer")
        for k, (i, j, size) in enumerate(tr.edges):
            u, v = where[p.tasks[i]], where[p.tasks[j]]
            if p.moves(size, u, v):
                begin = values[tr.start_col(k)]
                moved.append(Transfer(src=p.tasks[i], dst=p.tasks[j], **{"from": p.devices[u]}, to=p.devices[v],
                                      start=begin, end=begin + p.comm_time(size, u, v)))
    latest = max(r.end for r in tasks)
    raw = Schedule(problem=p.name, method="raw", status="heuristic", makespan=latest, tasks=tasks,
                   transfers=moved)
    if ctx.has("transfer"):
        return raw
    from schedkit.timing import with_transfers  # without the family: each leaves when its source ends

    return with_transfers(p, raw)


@pytest.mark.parametrize("seed", [0, 4, 9, 15, 21, 26])  # 0, 4 and 15 bind: 11, 6, 5 (8, 5, 4 without)
def test_random_deltas_optima_are_valid_and_match_brute_force(seed):
    # With every duration positive, deltas levels depend on the order on each device only:
    # the left-shifted schedules the brute force tries (and the read-back makes) hold an optimum.
    f = formulation("deltas")
    p = random_problem(seed, "deltas", zero=False)
    best = brute_force(p, f.blocks)
    s = solve(p, "milp", formulation=f, solver="highs", warm_start="none", time_limit=30)
    # (solve validates its schedule against every block: the timeline holds)
    if best is None:
        assert s.status == "infeasible"
    else:
        assert (s.status, s.makespan) == ("optimal", pytest.approx(best))


@needs_cpsat
@pytest.mark.parametrize("mode,seed", [("deltas", 15), ("deltas", 26), ("deltas", 3), ("deltas", 8),
                                       ("lifetime", 0), ("lifetime", 12), ("lifetime", 30), ("lifetime", 31),
                                       ("lifetime", 37), ("lifetime", 67), ("lifetime", 3)])
def test_random_models_agree_and_their_solutions_hold(mode, seed):
    # Under lifetime, or with tasks of zero duration, waiting can pay (a release before an
    # addition), so left-shifted schedules bound the optimum from above only. HiGHS's model
    # and CP-SAT's (an independent one: a reservoir or cumulative intervals) must find the
    # same optimum, and the solver's own times must satisfy the timeline. (The timeline binds
    # on every instance here but one, infeasible.)
    from schedkit.cpsat.solve import make_job
    from schedkit.cpsat.worker import run
    from schedkit.milp.solvers.highs import highs_for

    f = formulation(mode)
    p = random_problem(seed, mode)
    best = brute_force(p, f.blocks)
    built = f.build(p)
    h = highs_for(built.linear)
    h.setOptionValue("output_flag", False)
    h.run()
    job = make_job(p, f, built.horizon, time_limit=30)
    answer = run(job)
    if h.modelStatusToString(h.getModelStatus()) == "Infeasible":
        assert best is None and answer.status == "INFEASIBLE"
        return
    raw = solver_schedule(built, list(h.getSolution().col_value))
    assert violations(p, raw, f.blocks) == []
    assert raw.makespan == pytest.approx(h.getInfo().objective_function_value)
    assert answer.status == "OPTIMAL" and job.ticks.exact
    assert raw.makespan == pytest.approx(answer.objective / job.ticks.scale)
    assert best is None or raw.makespan <= best * (1 + 1e-6)


@pytest.mark.parametrize("mode,seed", [("deltas", 15), ("lifetime", 40)])
def test_the_read_back_keeps_the_waits_the_timeline_needs(mode, seed):
    # The solver's own times hold (test_random_models_agree_and_their_solutions_hold); the
    # schedule read back from them must too: it keeps the waits for releases (no left shift
    # before the solver's times), for HiGHS and CP-SAT alike.
    problem = random_problem(seed, mode)
    found = [solve(problem, "milp", formulation=formulation(mode), solver=solver, warm_start="none",
                   time_limit=30) for solver in ("highs", "cpsat")]
    assert [s.status for s in found] == ["optimal", "optimal"]
    assert found[0].makespan == pytest.approx(found[1].makespan, rel=1e-6)
    for s in found:
        assert s.violations(problem, get_formulation(formulation(mode)).blocks) == []


# A transfer that waits: p must end early (s is long on the gpu), but its copy fits on the cpu
# only after q's output (held until r ends at 10) is gone; the optimum 12 sends p's output at 10.
WAITING = {
    "name": "waiting", "devices": [{"name": "gpu", "memory": 100}, {"name": "cpu", "memory": 10}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1, "bidirectional": True}],
    "tasks": [{"name": "p", "durations": {"gpu": 1}, "activation_memory": 5},
              {"name": "s", "durations": {"gpu": 10}},
              {"name": "q", "durations": {"cpu": 1}, "activation_memory": 6},
              {"name": "r", "durations": {"cpu": 9}},
              {"name": "c", "durations": {"cpu": 1}}],
    "edges": [{"src": "p", "dst": "s"}, {"src": "p", "dst": "c", "size": 1}, {"src": "q", "dst": "r"}]}


@pytest.mark.parametrize("solver", ["highs", pytest.param("cpsat", marks=needs_cpsat)])
def test_a_transfer_that_waits_for_a_release_keeps_its_wait(solver):
    # The read-back once started every transfer when its producer ended: the copy then
    # arrived at 1 beside q's output (11 > 10) and the solve ended in an invalid schedule.
    p = Problem.from_dict(WAITING)
    s = solve(p, "milp", formulation=formulation("lifetime"), solver=solver, warm_start="none", time_limit=30)
    assert (s.status, s.makespan) == ("optimal", pytest.approx(12.0))
    (moved,) = s.transfers
    assert moved.start == pytest.approx(10.0) and s.violations(p, formulation("lifetime").blocks) == []
