"""The validator cannot be talked out of a check (issue 27): a forged formulation, a method label,
an unverifiable status, tolerances that add up, duplicate keys, and data it does not check."""

import json

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import schedkit
from schedkit import Problem, Schedule
from schedkit.cli.main import main
from schedkit.testing.strategies import problems
from schedkit.validate import violations

TINY, FT06, HETERO = "examples/tiny.yaml", "examples/ft06.json", "examples/hetero20.yaml"

#: A problem with weights and activations over time (the ``memory_timeline`` block's data).
TIMELINE = {"name": "timeline",
            "devices": [{"name": "gpu", "memory": 8.0}, {"name": "cpu", "memory": 8.0}],
            "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1.0}],
            "tasks": [{"name": "a", "durations": {"gpu": 1.0, "cpu": 2.0}, "weight_memory": 1.0,
                       "activation_memory": 2.0},
                      {"name": "b", "durations": {"gpu": 1.0, "cpu": 2.0}, "weight_memory": 1.0,
                       "activation_memory": 1.0}],
            "edges": [{"src": "a", "dst": "b", "size": 1.0}]}


def run(argv, capfd):
    code = main([str(a) for a in argv])
    out, err = capfd.readouterr()
    return code, out, err


def heft_data(path):
    return json.loads(schedkit.solve(Problem.load(path), "heft").to_json())


def write(tmp_path, data, name="s.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def overlap(data):
    """``data`` with its second task moved onto the first's device and time (same duration there)."""
    rows = data["tasks"]
    first = next(r for r in rows if r["device"] == "gpu0")
    second = next(r for r in rows if r["device"] == "gpu0" and r is not first)
    length = second["end"] - second["start"]
    second["start"], second["end"] = first["start"], first["start"] + length
    return data


def too_early(data):
    """``data`` with ``sample`` started as soon as ``logits`` ends on the other device, its
    transfer dropped: only the communication delay is broken."""
    rows = {r["task"]: r for r in data["tasks"]}
    length = rows["sample"]["end"] - rows["sample"]["start"]
    rows["sample"]["start"] = rows["logits"]["end"]
    rows["sample"]["end"] = rows["sample"]["start"] + length
    data["transfers"] = []
    data["makespan"] = data["objective"] = max(r["end"] for r in data["tasks"])
    return data


# ---------------------------------------------------------------------- 1. the recorded formulation
@pytest.mark.parametrize("blocks, method, corrupt, named", [
    (["cuts"], "heft", overlap, "assignment"),                                 # the case
    (["cuts"], "milp:latency", overlap, "no_overlap"),
    (["assignment", "precedence", "memory"], "heft", overlap, "no_overlap"),  # no_overlap dropped
    (["assignment", "placement", "precedence", "no_overlap"], "heft", None, "memory"),
    (["assignment", "placement", {"precedence": {"communication": False}}, "no_overlap", "memory"],
     "heft", too_early, "precedence"),                                        # weakened by a parameter
    (["assignment", {"precedence": {"communication": False}}, "no_overlap"],  # jssp's blocks ...
     "milp:latency", None, "memory"),                                         # ... under latency's label
])
def test_a_recorded_formulation_adds_checks_and_never_removes_them(tmp_path, capfd, blocks, method,
                                                                     corrupt, named):
    data = heft_data(TINY)
    if corrupt is not None:
        data = corrupt(data)
    data["method"], data["formulation"] = method, {"name": "forged", "blocks": blocks}
    problem, schedule = Problem.load(TINY), Schedule.model_validate(data)
    found = violations(problem, schedule)
    assert any(m.startswith("formulation:") and f"'{named}'" in m for m in found), found
    code, out, _ = run(["validate", TINY, write(tmp_path, data)], capfd)
    assert code == 3 and f"'{named}'" in out


@pytest.mark.parametrize("path, preset", [(TINY, "jssp"), (FT06, "jssp"), (TINY, "moirai"),
                                          (TINY, "throughput"), (TINY, "latency")])
def test_a_preset_that_omits_a_block_is_an_honest_recorded_choice(tmp_path, capfd, path, preset):
    schedule = schedkit.solve(Problem.load(path), "milp", formulation=preset, threads=1)
    code, out, _ = run(["validate", path, write(tmp_path, json.loads(schedule.to_json()))], capfd)
    assert code == 0 and out.startswith("valid:")


# ---------------------------------------------------------------------- 2. one verdict, not the label
@pytest.mark.parametrize("method", ["milp:jssp", "external:jssp", "milp:fdjssp-not-a-preset"])
@pytest.mark.parametrize("recorded", [True, False])
def test_report_plot_and_trace_reach_validates_verdict_whatever_the_label(tmp_path, capfd, method,
                                                                             recorded):
    data = too_early(heft_data(TINY))
    data["method"] = method
    if not recorded:
        del data["formulation"]
    path = write(tmp_path, data)
    code, out, _ = run(["validate", TINY, path], capfd)
    assert code == 3
    for command, name in (("report", "r.html"), ("trace", "t.json"), ("plot", "g.svg")):
        if command == "plot":
            pytest.importorskip("matplotlib")
        code, out, _ = run([command, TINY, path, "-o", tmp_path / name], capfd)
        assert code == 0 and "(invalid: " in out, (command, out)


# ---------------------------------------------------------------------- 3. unverifiable claims
@pytest.mark.parametrize("path", [TINY, FT06, HETERO])
@pytest.mark.parametrize("claim", ["infeasible", "no_solution", "rows with inputs"])
def test_a_claim_the_validator_cannot_check_is_not_valid(tmp_path, capfd, path, claim):
    data = heft_data(path)
    if claim == "rows with inputs":             # the problem has no workload of several inputs
        data["transfers"] = []                  # (a batched schedule carries none)
        for row in data["tasks"]:
            row["inputs"] = [0]
    else:
        data.update(status=claim, tasks=[], transfers=[])
        for key in ("makespan", "objective", "bound"):
            data.pop(key, None)
    found = violations(Problem.load(path), Schedule.model_validate(data))
    assert found, claim
    code, _, _ = run(["validate", path, write(tmp_path, data)], capfd)
    assert code == 3


# ---------------------------------------------------------------------- 4. tolerances do not add up
def chain(n):
    return {"name": "chain", "devices": [{"name": "d"}],
            "tasks": [{"name": f"t{i}", "durations": {"d": 1.0}} for i in range(n)],
            "edges": [{"src": f"t{i}", "dst": f"t{i + 1}"} for i in range(n - 1)]}


@pytest.mark.parametrize("n, how", [(2000, "shorten every task"), (2000, "shorten one task"),
                                    (500, "shorten every task"), (2000, "overlap every edge"),
                                    (300, "overlap every edge")])
def test_tolerances_do_not_add_up(tmp_path, capfd, n, how):
    step, rows, clock = 0.9 * 1e-6 * n, [], 0.0   # each change under the old per-row tolerance
    for i in range(n):
        length = 1.0 - step if how == "shorten every task" or (how == "shorten one task" and i == n // 2) \
            else 1.0
        rows.append({"task": f"t{i}", "device": "d", "start": clock, "end": clock + length})
        clock += length - (step if how == "overlap every edge" else 0.0)
    end = rows[-1]["end"]
    data = {"problem": "chain", "method": "forged", "status": "optimal", "makespan": end, "bound": end,
            "tasks": rows}
    found = violations(Problem.from_dict(chain(n)), Schedule.model_validate(data))
    assert found
    problem_file = tmp_path / "chain.json"
    problem_file.write_text(json.dumps(chain(n)))
    code, _, _ = run(["validate", problem_file, write(tmp_path, data)], capfd)
    assert code == 3


# ---------------------------------------------------------------------- 5. duplicate keys
@pytest.mark.parametrize("key, where", [("status", "top"), ("makespan", "top"), ("start", "row"),
                                        ("device", "row"), ("end", "transfer")])
def test_a_key_given_twice_in_a_schedule_file_is_an_error(tmp_path, capfd, key, where):
    data = heft_data(TINY)
    text = json.dumps(data)
    if where == "top":
        text = text.replace(f'"{key}": ', f'"{key}": {json.dumps(data[key])}, "{key}": ', 1)
    else:
        row = data["tasks"][0] if where == "row" else data["transfers"][0]
        first = json.dumps(row)
        text = text.replace(first, first.replace(f'"{key}": ', f'"{key}": {json.dumps(row[key])}, "{key}": ', 1))
    assert text.count(f'"{key}"') > json.dumps(data).count(f'"{key}"')
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(schedkit.ScheduleError, match=f"duplicate key '{key}'"):
        Schedule.load(path)
    code, _, err = run(["validate", TINY, path], capfd)
    assert code == 1 and f"duplicate key '{key}'" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------- 6. what validate did not check
@pytest.mark.parametrize("case", ["jssp on tiny", "heft on a timeline problem", "latency on a timeline problem"])
def test_validate_says_once_which_data_it_did_not_check(tmp_path, capfd, case):
    if case == "jssp on tiny":
        path, expected = TINY, "memory capacities, which the formulation ignores (it has no 'memory' block)"
        schedule = schedkit.solve(Problem.load(TINY), "milp", formulation="jssp", threads=1)
    else:
        path = tmp_path / "timeline.json"
        path.write_text(json.dumps(TIMELINE))
        expected = "weights and activations over time, which the formulation ignores (it has no " \
                   "'memory_timeline' block)"
        if case.startswith("heft"):
            schedule = schedkit.solve(Problem.load(path), "heft")
        else:
            schedule = schedkit.solve(Problem.load(path), "milp", formulation="latency", threads=1)
    code, out, err = run(["validate", path, write(tmp_path, json.loads(schedule.to_json()))], capfd)
    assert code == 0 and out.startswith("valid:")
    notes = 2 if case == "jssp on tiny" else 1    # (jssp ignores the edges' data too)
    assert err.count("schedkit: note:") == notes and err.count(expected) == 1, err


# ---------------------------------------------------------------------- every corruption, every family
FAMILIES = {  # name: (strategy options, how the data is completed, method options)
    "plain": (dict(memory=False, min_devices=2), None, {}),
    "memory": (dict(memory=True), None, {}),
    "congestion": (dict(memory=False, min_devices=2, channels=True, transfer_times=True), None,
                   {"formulation": "moirai"}),
    "memory_timeline": (dict(memory=False, colocate=False), "timeline", {"formulation": "fdjssp"}),
    "batching": (dict(memory=True, colocate=False, transfer_times=False), "workload", {}),
}
CORRUPTIONS = ("shift", "shrink", "device", "drop_transfer", "formulation", "status")


def complete(data, how, draw):
    if how == "timeline":
        for device in data["devices"]:
            device["memory"] = draw(st.sampled_from([6.0, 12.0, 40.0]))
        for task in data["tasks"]:
            task["weight_memory"] = draw(st.sampled_from([0.0, 1.0, 2.0]))
            task["activation_memory"] = draw(st.sampled_from([-1.0, 0.0, 1.0, 2.0]))
    elif how == "workload":
        data["workload"] = {"inputs": draw(st.integers(2, 3))}
    return data


def corrupt(problem, data, kind, k):
    """``data`` (a valid schedule's) broken by ``kind`` at row ``k``; ``None`` when it does not apply."""
    rows = data["tasks"]
    row = rows[k % len(rows)]
    if kind == "shift":                       # starts later, ends as before: the wrong duration
        row["start"] += 1.0
    elif kind == "shrink":                    # a millionth short: under any per-row tolerance
        if row["end"] - row["start"] <= 0:
            return None
        row["end"] = row["start"] + (row["end"] - row["start"]) * (1 - 1e-6)
    elif kind == "device":
        i, here = problem.task_index[row["task"]], problem.device_index[row["device"]]
        others = [d for d in range(len(problem.devices)) if d != here
                  and problem.durations[i].get(d) != problem.durations[i][here]]
        if not others:
            return None
        row["device"] = problem.devices[others[k % len(others)]]
    elif kind == "drop_transfer":
        needed = [t for t in data.get("transfers", []) if t["end"] > t["start"]]
        if not needed:
            return None
        data["transfers"].remove(needed[k % len(needed)])
    elif kind == "formulation":               # drop a block the problem's semantics need, or all
        from schedkit.blocks import block_from_data
        from schedkit.validate import semantic_blocks

        needed = {b.kind for b in semantic_blocks(problem)}
        recorded = [block_from_data(b) for b in data["formulation"]["blocks"]]
        droppable = [b for b in recorded if b.kind in needed
                     and not any(b.kind in other.subsumes for other in recorded)]
        if k % 3 == 0 or not droppable:
            data["formulation"] = {"name": "forged", "blocks": ["cuts"]}
        else:
            dropped = droppable[k % len(droppable)]
            data["formulation"]["blocks"] = [b.to_data() for b in recorded if b is not dropped]
    elif k % 2:                               # a claim without rows
        data.update(status="infeasible" if k % 4 == 1 else "no_solution", tasks=[], transfers=[])
        for key in ("makespan", "objective", "bound"):
            data.pop(key, None)
    else:                                     # a bound above the makespan, called optimal
        data.update(status="optimal", bound=data["makespan"] * 1.5 + 1.0)
    return data


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(kind=st.sampled_from(CORRUPTIONS), k=st.integers(0, 50), draw=st.data())
def test_every_corruption_of_every_family_is_refused_by_validate_and_report(tmp_path_factory, capfd, family,
                                                                             kind, k, draw):
    options, how, method = FAMILIES[family]
    data = complete(draw.draw(problems(max_tasks=6, max_devices=3, **options)), how, draw.draw)
    try:
        problem = Problem.from_dict(data)
        schedule = schedkit.solve(problem, "heft", **method)
    except schedkit.SchedkitError:
        assume(False)
    assert violations(problem, schedule) == []   # the schedule as written is valid
    broken = corrupt(problem, json.loads(schedule.to_json()), kind, k)
    assume(broken is not None)
    event(f"{family} {kind}")
    assert violations(problem, Schedule.model_validate(broken)), (kind, broken)
    folder = tmp_path_factory.mktemp("case")
    problem_file, schedule_file = folder / "p.json", write(folder, broken)
    problem_file.write_text(json.dumps(data))
    assert run(["validate", problem_file, schedule_file], capfd)[0] == 3
    code, out, _ = run(["report", problem_file, schedule_file, "-o", folder / "r.html"], capfd)
    assert code == 0 and "(invalid: " in out
