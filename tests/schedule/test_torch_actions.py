"""``schedkit export-torch``: pipeline schedules as torch.distributed.pipelining's action CSV.

The format tests read the CSV with the grammar of PyTorch's ``_Action.from_str`` (no torch
needed); one test loads it with PyTorch's own runtime loader when torch is installed.
"""

import csv
import json
import re
import types

import pytest

from schedkit import Problem, Schedule
from schedkit.cli.main import main
from schedkit.generators.dualpipe import dualpipe_schedule
from schedkit.generators.pipeline import pipeline
from schedkit.schedule.torch_actions import torch_actions

PP, M = 4, 8
#: PyTorch's action grammar for compute actions: stage, kind, micro-batch (``_action_regex``).
ACTION = re.compile(r"(\d+)(F|I|B|W)(\d*)")


def _one_way(stages, microbatches, name):
    """The generator's instance with stage s on ``gpu{s}`` for every micro-batch: one chain."""
    data = pipeline(stages, microbatches, weights=0, activation=0, name=name)
    for task in data["tasks"]:
        task["durations"] = {"gpu" + re.match(r"\w_s(\d+)_", task["name"])[1]: 1.0}
    return data


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """A 4-stage, 8-micro-batch one-way pipeline solved by HEFT, and its exported CSV."""
    folder = tmp_path_factory.mktemp("torch")
    problem, schedule, out = folder / "p.json", folder / "s.json", folder / "actions.csv"
    problem.write_text(json.dumps(_one_way(PP, M, "oneway")))
    assert main(["solve", str(problem), "-m", "heft", "-o", str(schedule)]) == 0
    assert main(["export-torch", str(problem), str(schedule), "-o", str(out)]) == 0
    return Problem.load(problem), Schedule.load(schedule), out


def _read(path):
    """Rows of ``(column, (stage, kind, micro-batch))`` per rank, as PyTorch's grammar reads them."""
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    parsed = []
    for row in rows:
        cells = []
        for column, cell in enumerate(row):
            if cell.strip():
                match = ACTION.fullmatch(cell)
                assert match and match[3], f"not a compute action of one micro-batch: {cell!r}"
                cells.append((column, (int(match[1]), match[2], int(match[3]))))
        parsed.append(cells)
    return rows, parsed


def test_every_action_once_per_rank_in_start_order(solved):
    problem, schedule, out = solved
    rows, parsed = _read(out)
    assert len(rows) == PP
    runs = {row.task: row for row in schedule.tasks}
    seen = []
    for rank, cells in enumerate(parsed):
        device = f"gpu{rank}"
        names = [f"{kind}_s{s}_m{m}" for _, (s, kind, m) in cells]
        mine = sorted((r for r in schedule.tasks if r.device == device), key=lambda r: r.start)
        assert names == [r.task for r in mine]                          # all of the rank's, in order
        assert {s for _, (s, _, _) in cells} == {rank}                  # stage s on rank s
        starts = [runs[n].start for n in names]
        columns = [c for c, _ in cells]
        assert columns == sorted(set(columns)) and starts == sorted(starts)
        seen += names
    assert sorted(seen) == sorted(problem.tasks)                        # every action exactly once
    column = {f"{k}_s{s}_m{m}": c for cells in parsed for c, (s, k, m) in cells}
    for m in range(M):
        for s in range(PP):
            assert column[f"F_s{s}_m{m}"] < column[f"I_s{s}_m{m}"] < column[f"W_s{s}_m{m}"]
            if s:
                assert column[f"F_s{s - 1}_m{m}"] < column[f"F_s{s}_m{m}"]
                assert column[f"I_s{s}_m{m}"] < column[f"I_s{s - 1}_m{m}"]


def test_columns_are_time_steps_for_unit_actions(solved):
    _, schedule, out = solved
    rows, parsed = _read(out)
    starts = sorted({row.start for row in schedule.tasks})
    runs = {row.task: row for row in schedule.tasks}
    for cells in parsed:
        for column, (s, kind, m) in cells:
            assert starts[column] == runs[f"{kind}_s{s}_m{m}"].start
    assert max(len(row) for row in rows) == len(starts)
    assert all(row[-1] for row in rows)                                 # no trailing idle cells


def test_full_backward_is_written_as_b():
    data = _one_way(2, 2, "full")
    data["tasks"] = [dict(t, name=t["name"].replace("I_", "B_")) for t in data["tasks"]
                     if not t["name"].startswith("W_")]
    data["edges"] = [{"src": e["src"].replace("I_", "B_"), "dst": e["dst"].replace("I_", "B_")}
                     for e in data["edges"] if not e["dst"].startswith("W_")]
    problem = Problem.from_dict(data)
    rows = [{"task": t, "device": "gpu" + t[3], "start": float(at), "end": at + 1.0} for t, at in
            [("F_s0_m0", 0), ("F_s1_m0", 1), ("F_s0_m1", 1), ("B_s1_m0", 2), ("F_s1_m1", 3),
             ("B_s0_m0", 3), ("B_s1_m1", 4), ("B_s0_m1", 5)]]
    schedule = Schedule(problem="full", method="hand", status="heuristic", tasks=rows)
    assert torch_actions(problem, schedule).rows == (("0F0", "0F1", "", "0B0", "", "0B1"),
                                                     ("", "1F0", "1B0", "1F1", "1B1"))


def _cli_error(capfd, tmp_path, problem_data, schedule_data):
    problem, schedule, out = tmp_path / "p.json", tmp_path / "s.json", tmp_path / "a.csv"
    problem.write_text(json.dumps(problem_data))
    schedule.write_text(json.dumps(schedule_data))
    code = main(["export-torch", str(problem), str(schedule), "-o", str(out)])
    captured = capfd.readouterr()
    lines = captured.err.splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("schedkit: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out and not out.exists()
    return lines[0]


def test_dualpipe_is_refused_naming_the_stage(capfd, tmp_path):
    line = _cli_error(capfd, tmp_path, pipeline(PP, M), dualpipe_schedule(PP, M))
    assert "stage 0 runs on 2 devices (gpu0, gpu3)" in line and "DualPipe" in line


def test_schedule_of_another_problem_is_refused(capfd, tmp_path, solved):
    _, schedule, _ = solved
    line = _cli_error(capfd, tmp_path, _one_way(PP, M, "other"), json.loads(schedule.to_json()))
    assert "the schedule is for problem 'oneway', not 'other'" in line


def test_tasks_that_are_not_pipeline_actions_are_named(capfd, tmp_path):
    data = _one_way(2, 2, "extra")
    data["tasks"].append({"name": "optimizer_step", "durations": {"gpu0": 1.0}})
    rows = [{"task": t["name"], "device": next(iter(t["durations"])), "start": float(k),
             "end": k + 1.0} for k, t in enumerate(data["tasks"])]
    line = _cli_error(capfd, tmp_path, data, {"format": "schedkit-schedule/v1", "problem": "extra",
                                             "method": "hand", "status": "heuristic", "tasks": rows})
    assert "1 task(s) are not pipeline actions" in line and "'optimizer_step'" in line


def test_missing_action_and_broken_order_are_named(capfd, tmp_path, solved):
    _, schedule, _ = solved
    data = _one_way(PP, M, "oneway")
    rows = json.loads(schedule.to_json())
    cut = dict(data, tasks=[t for t in data["tasks"] if t["name"] != "W_s2_m5"],
               edges=[e for e in data["edges"] if e["dst"] != "W_s2_m5"])
    cut_rows = dict(rows, tasks=[r for r in rows["tasks"] if r["task"] != "W_s2_m5"])
    assert "missing 'W_s2_m5'" in _cli_error(capfd, tmp_path, cut, cut_rows)
    late = max(r["end"] for r in rows["tasks"])       # F_s3_m0 moved after everything on gpu3:
    for row in rows["tasks"]:                         # I_s3_m0 then starts before it ends
        if row["task"] == "F_s3_m0":
            row["start"], row["end"] = late, late + 1.0
    line = _cli_error(capfd, tmp_path, data, rows)
    assert "task 'I_s3_m0' starts at" in line and "before 'F_s3_m0' ends" in line


def test_pytorch_loads_it_and_refuses_dualpipe_in_any_stage_order(solved, tmp_path):
    """PyTorch's runtime loader reads the same actions; it lowers a DualPipe plan in neither
    the V order of its stages (the only one that keeps each stage on one rank) nor as written."""
    pytest.importorskip("torch")
    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    def load(path, stages, ranks, microbatches):
        # A stand-in stage: the loader reads only these fields of stages[0] (no process group).
        stage = types.SimpleNamespace(num_stages=stages, group_size=ranks, group_rank=0, stage_index=0)
        runtime = _PipelineScheduleRuntime([stage], n_microbatches=microbatches)
        runtime._load_csv(str(path), format="compute_only")
        return runtime

    _, _, out = solved
    runtime = load(out, PP, PP, M)
    rows, _ = _read(out)
    assert {r: [str(a) if a is not None else "" for a in runtime.pipeline_order[r]] for r in range(PP)} \
        == {r: row for r, row in enumerate(rows)}
    assert runtime.stage_index_to_group_rank == {s: s for s in range(PP)}
    assert "1RECV_F0" in [str(a) for a in runtime.pipeline_order_with_comms[1]]   # lowered

    plan = dualpipe_schedule(PP, M)                     # direction 1's stage s as stage PP + s
    by_rank = {r: [] for r in range(PP)}
    for row in sorted(plan["tasks"], key=lambda r: r["start"]):
        kind, s, m = re.fullmatch(r"(\w)_s(\d+)_m(\d+)", row["task"]).groups()
        s, m = int(s), int(m)
        by_rank[int(row["device"][3:])].append(f"{s + PP * (m >= M // 2)}{kind}{m % (M // 2)}")
    v_shape = tmp_path / "v.csv"
    with open(v_shape, "w", newline="") as handle:
        csv.writer(handle).writerows(by_rank.values())
    with pytest.raises(AssertionError, match="Malformed compute schedule"):
        load(v_shape, 2 * PP, PP, M // 2)
