"""The DualPipe pipeline generator (She et al. 2025), DualPipe's own schedule and ``generate pipeline``."""

import json

import pytest

from schedkit import Problem, ProblemError, Schedule
from schedkit.cli.main import main
from schedkit.generators import dump, dualpipe_schedule, pipeline
from schedkit.generators.pipeline import bubble
from schedkit.timing.fixed_order import retime


def expected_device(stage, m, pp, M):
    # Written out again rather than calling device_of: the test must not share the code it checks.
    return f"gpu{stage}" if m < M // 2 else f"gpu{pp - 1 - stage}"


def expected_edges(pp, M):
    edges = set()
    for m in range(M):
        edges |= {(f"F_s{s}_m{m}", f"F_s{s + 1}_m{m}") for s in range(pp - 1)}
        edges.add((f"F_s{pp - 1}_m{m}", f"I_s{pp - 1}_m{m}"))
        edges |= {(f"I_s{s + 1}_m{m}", f"I_s{s}_m{m}") for s in range(pp - 1)}
        edges |= {(f"I_s{s}_m{m}", f"W_s{s}_m{m}") for s in range(pp)}
    return edges


@pytest.mark.parametrize("pp,M", [(2, 2), (2, 4), (4, 8), (4, 2), (8, 16)])
def test_structure_tasks_edges_pins(pp, M):
    data = pipeline(pp, M)
    p = Problem.from_dict(data)
    assert len(p.tasks) == 3 * pp * M and len(p.devices) == pp
    assert {(e["src"], e["dst"]) for e in data["edges"]} == expected_edges(pp, M)
    assert len(data["edges"]) == M * (3 * pp - 1)                 # no edge listed twice
    assert [(l["src"], l["dst"]) for l in data["links"]] == [(f"gpu{i}", f"gpu{i + 1}") for i in range(pp - 1)]
    per_device = {f"gpu{i}": {"F": 0, "I": 0, "W": 0} for i in range(pp)}
    for t in data["tasks"]:
        kind, s, m = t["name"][0], int(t["name"].split("_")[1][1:]), int(t["name"].split("_")[2][1:])
        assert list(t["durations"]) == [expected_device(s, m, pp, M)]   # pinned to one device
        per_device[expected_device(s, m, pp, M)][kind] += 1
    # Device i hosts stage i of one direction and stage PP-1-i of the other: M of each kind.
    assert all(counts == {"F": M, "I": M, "W": M} for counts in per_device.values())
    for e in data["edges"]:                                       # every hop joins neighbours
        a, b = (p.device_index[list(p.spec.tasks[p.task_index[n]].durations)[0]] for n in (e["src"], e["dst"]))
        assert abs(a - b) <= 1


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_memory_fields_and_bound(share):
    pp, M = 4, 8
    data = pipeline(pp, M, weights=3.0, activation=2.0, weight_share=share)
    Problem.from_dict(data)
    weights = {f"gpu{i}": 0.0 for i in range(pp)}
    balance = {f"gpu{i}": 0.0 for i in range(pp)}
    for t in data["tasks"]:
        device = list(t["durations"])[0]
        weights[device] += t.get("weight_memory", 0.0)
        balance[device] += t["activation_memory"]
        assert t["activation_memory"] == {"F": 2.0, "I": -2.0 * (1 - share), "W": -2.0 * share}[t["name"][0]]
        assert "weight_memory" not in t or t["name"][0] == "F"
    assert set(weights.values()) == {6.0}                        # two stage copies per device
    assert set(balance.values()) == {0.0}                        # every activation is released
    assert {d["memory"] for d in data["devices"]} == {2 * 3.0 + (pp + 1) * 2.0}
    assert {d["memory"] for d in pipeline(pp, M, memory=9.5)["devices"]} == {9.5}


def test_transfers_have_size_on_hops_only():
    pp, M = 4, 4
    data = pipeline(pp, M, transfer=0.25)
    Problem.from_dict(data)

    def device(name):
        _, s, m = name.split("_")
        return expected_device(int(s[1:]), int(m[1:]), pp, M)

    hops = [e for e in data["edges"] if device(e["src"]) != device(e["dst"])]
    assert len(hops) == 2 * M * (pp - 1)                          # F and I chains cross every link
    assert all(e.get("size") == 0.25 for e in hops)
    assert all("size" not in e for e in data["edges"] if e not in hops)
    assert all("size" not in e for e in pipeline(pp, M)["edges"])  # default: no transfers at all


@pytest.mark.parametrize("call,message", [
    (lambda: pipeline(3, 4), "stages: needs an even integer >= 2, got 3"),
    (lambda: pipeline(0, 4), "stages: needs an even integer >= 2, got 0"),
    (lambda: pipeline(4, 5), "microbatches: needs an even integer >= 2, got 5"),
    (lambda: pipeline(4, 8, forward=0), "forward: needs a finite number > 0"),
    (lambda: pipeline(4, 8, weight_backward=float("nan")), "weight_backward: needs a finite number > 0"),
    (lambda: pipeline(4, 8, weights=-1), "weights: needs a finite number >= 0"),
    (lambda: pipeline(4, 8, weight_share=1.5), r"weight_share: needs a finite number in \[0, 1\]"),
    (lambda: pipeline(4, 8, transfer=-1), "transfer: needs a finite number >= 0"),
    (lambda: pipeline(4, 8, memory=2.5), "memory: 2.5 cannot hold"),
    (lambda: dualpipe_schedule(4, 6), "DualPipe needs at least 2 \\* stages = 8, got 6"),
])
def test_bad_parameters(call, message):
    with pytest.raises(ProblemError, match=message):
        call()


def activation_peaks(data, schedule):
    """Deltas semantics written out independently: resident weights, +A at start, -A at end,
    releases before additions at equal times; the largest level of each device."""
    tasks = {t["name"]: t for t in data["tasks"]}
    events, level = {}, {}
    for row in schedule["tasks"]:
        t = tasks[row["task"]]
        level[row["device"]] = level.get(row["device"], 0.0) + t.get("weight_memory", 0.0)
        a = t["activation_memory"]
        at, order = (row["start"], 1) if a > 0 else (row["end"], 0)
        events.setdefault(row["device"], []).append((at, order, a))
    peaks = {}
    for device, evs in events.items():
        peak = value = level[device]
        for _, _, a in sorted(evs):
            value += a
            peak = max(peak, value)
        peaks[device] = peak
    return peaks


@pytest.mark.parametrize("pp,M", [(2, 4), (2, 6), (4, 8), (4, 12), (6, 12), (8, 16), (8, 20)])
def test_dualpipe_schedule_makespan_bubble_memory(pp, M):
    data = pipeline(pp, M)
    problem = Problem.from_dict(data)
    raw = dualpipe_schedule(pp, M)
    schedule = Schedule.model_validate(raw)
    assert schedule.violations(problem) == []
    # DualPipe's bubble 2 (PP/2 - 1) with F&B = 3, B = 2 and W = 1 (its README's table).
    assert schedule.makespan == 3 * M + pp - 2
    assert bubble(schedule.makespan, M) == 2 * (pp // 2 - 1)
    for d in problem.devices:                                    # the same idle time everywhere
        rows = [r for r in schedule.tasks if r.device == d]
        assert len(rows) == 3 * M and sum(r.end - r.start for r in rows) == 3 * M
        assert max(r.end for r in rows) == schedule.makespan
    # PP + 1 activations at the peak, whatever the split of the release: the bound binds.
    for share in (0.0, 0.5, 1.0):
        peaks = activation_peaks(pipeline(pp, M, weight_share=share), raw)
        assert set(peaks.values()) == {2 + pp + 1.0}
    # The same device orders timed as early as the edges allow: She et al.'s (PP/2 - 1), and
    # still PP + 1 activations at the peak.
    early = retime(problem, schedule, "asap")
    assert early.makespan == 3 * M + pp // 2 - 1
    assert set(activation_peaks(data, early.model_dump()).values()) == {2 + pp + 1.0}


def test_dualpipe_schedule_other_durations_and_transfers():
    s = dualpipe_schedule(4, 8, forward=2.0)
    assert bubble(s["makespan"], 8, forward=2.0) == 5.0            # as the module says
    p = Problem.from_dict(pipeline(4, 8, transfer=0.5))
    s = Schedule.model_validate(dualpipe_schedule(4, 8, transfer=0.5))
    assert len(s.transfers) == 2 * 8 * (4 - 1)                    # one per hop of every micro-batch
    assert all(t.end - t.start == 0.5 for t in s.transfers)
    assert s.violations(p) == []
    assert s.makespan > 3 * 8 + 4 - 2


def test_dualpipe_schedule_under_fdjssp():
    from schedkit.milp.formulation import get_formulation

    blocks = get_formulation("fdjssp").blocks
    s = Schedule.model_validate(dualpipe_schedule(4, 8))
    assert s.violations(Problem.from_dict(pipeline(4, 8)), blocks) == []
    tight = Problem.from_dict(pipeline(4, 8, memory=2 + 4))       # PP activations: one too few
    assert any("memory_timeline" in v for v in s.violations(tight, blocks))


def test_cli_writes_loadable_problem_and_schedule(tmp_path, capsys):
    out, dp = tmp_path / "p.yaml", tmp_path / "dp.json"
    assert main(["generate", "pipeline", "--stages", "4", "--microbatches", "8", "--weight-share", "1",
                 "-o", str(out), "--dualpipe", str(dp)]) == 0
    assert Problem.load(out).spec == Problem.from_dict(pipeline(4, 8, weight_share=1.0)).spec
    assert Schedule.load(dp).makespan == 26
    assert main(["validate", str(out), str(dp)]) == 0
    assert capsys.readouterr().err == (  # judged by the problem's own semantics: says what it skipped
        "schedkit: note: the problem gives weights and activations over time, which the formulation "
        "ignores (it has no 'memory_timeline' block)\n")
    assert main(["generate", "pipeline", "--stages", "2", "--microbatches", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(dump(pipeline(2, 2)))
    # A memory below DualPipe's peak: both files written, one warning line.
    assert main(["generate", "pipeline", "--stages", "4", "--microbatches", "8", "--memory", "6",
                 "-o", str(out), "--dualpipe", str(dp)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "warning" in err[0] and "fdjssp" in err[0]


@pytest.mark.parametrize("argv,message", [
    (["--stages", "3", "--microbatches", "4"], "stages: needs an even integer >= 2, got 3"),
    (["--stages", "0", "--microbatches", "4"], "stages: needs an even integer >= 2, got 0"),
    (["--stages", "4", "--microbatches", "7"], "microbatches: needs an even integer >= 2, got 7"),
    (["--stages", "4", "--microbatches", "6", "--dualpipe", "DP"], "DualPipe needs at least 2 * stages"),
    (["--stages", "4", "--microbatches", "8", "--weight-share", "2"], "weight_share"),
    (["--stages", "4", "--microbatches", "8", "--dualpipe", "OUT"], "name the same file"),
])
def test_cli_bad_input_one_line_no_file(tmp_path, capsys, argv, message):
    out = tmp_path / "p.json"
    argv = [a.replace("DP", str(tmp_path / "dp.json")).replace("OUT", str(out)) for a in argv]
    assert main(["generate", "pipeline", *argv, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("schedkit: error: ") and message in err
    assert list(tmp_path.iterdir()) == []                        # neither file, nor a temporary one


@pytest.mark.parametrize("pp,M", [(2, 3), (4, 8)])
def test_one_way_pins_stage_s_to_gpu_s_with_one_stage_of_weights(pp, M):
    data = pipeline(pp, M, two_way=False) if M % 2 == 0 else None
    if data is None:  # (an odd M is DualPipe's refusal: the halves; one way it is still refused)
        with pytest.raises(ProblemError, match="microbatches: needs an even integer"):
            pipeline(pp, M, two_way=False)
        return
    problem = Problem.from_dict(data)
    assert data["name"] == f"oneway-pp{pp}-m{M}" and len(problem.tasks) == 3 * pp * M
    for task in data["tasks"]:
        stage = int(task["name"].split("_")[1][1:])
        assert list(task["durations"]) == [f"gpu{stage}"]
    weights = [t["name"] for t in data["tasks"] if t.get("weight_memory")]
    assert weights == [f"F_s{s}_m0" for s in range(pp)]            # one copy per stage, on its device
    assert {d["memory"] for d in data["devices"]} == {1 + (pp + 1) * 1}


def test_one_way_on_the_command_line_exports_to_pytorch(tmp_path, capsys):
    problem, schedule, actions = tmp_path / "p.json", tmp_path / "s.json", tmp_path / "a.csv"
    assert main(["generate", "pipeline", "--stages", "4", "--microbatches", "4", "--one-way", "-o", str(problem)]) == 0
    assert main(["solve", str(problem), "-m", "heft", "-o", str(schedule)]) == 0
    assert main(["export-torch", str(problem), str(schedule), "-o", str(actions)]) == 0
    rows = actions.read_text().splitlines()
    assert len(rows) == 4 and all(sum(1 for c in row.split(",") if c) == 3 * 4 for row in rows)
    assert main(["generate", "pipeline", "--stages", "4", "--microbatches", "8", "--one-way", "--dualpipe",
                 str(tmp_path / "d.json"), "-o", str(tmp_path / "q.json")]) == 1
    assert "DualPipe's schedule is of the two-way instance" in capsys.readouterr().err
    assert not (tmp_path / "q.json").exists()
