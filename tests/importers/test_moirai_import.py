"""MOIRAI importer: the five published tables convert exactly, bad tables are one-line errors."""

from __future__ import annotations

import io
import json
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import xlrd

import schedkit
from schedkit.cli.main import main
from schedkit.errors import ProblemError, SchedkitError
from schedkit.importers import IMPORTERS, convert
from schedkit.importers.moirai import Moirai, parse_moirai
from schedkit.schedule.schedule import Schedule, TaskRun, Transfer

DATA = Path(__file__).resolve().parents[2] / "data" / "moirai"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: devices, tasks (with the virtual source), data flows, as in data/moirai/README.md.
COUNTS = {"example-1": (3, 14, 13), "GoogLeNet": (4, 141, 166), "inceptionv4": (4, 491, 544),
          "transformer": (4, 1374, 1816), "yolov5x": (4, 419, 460)}


def _split(cell) -> list[str]:
    return [] if cell == "" else [repr(cell)] if isinstance(cell, float) else str(cell).split(",")


@lru_cache(maxsize=None)
def table(stem: str) -> dict:
    """The table read independently of the importer: tasks, flows and their times."""
    sheet = xlrd.open_workbook(str(DATA / f"{stem}.xls"), logfile=io.StringIO()).sheet_by_index(0)
    header = sheet.row_values(0)
    k = sum(1 for h in header if h[:1] == "p" and h[1:].isdigit())
    tasks, flows, edges = {}, {}, 0
    for r in range(1, sheet.nrows):
        row = dict(zip(header, sheet.row_values(r)))
        if row["task"] == "":
            break
        tid = int(row["task"])
        tasks[tid] = {"p": [float(row[f"p{d}"]) for d in range(k)], "mi": float(row["mi"])}
        if r == 1:
            memory = [float(row[f"m{d}"]) for d in range(k)]
        ids = [int(float(x)) for x in _split(row["c_task"])]
        succs = [int(float(x)) for x in _split(row["dir_succ"])]
        edges += len(succs)
        for n, q in enumerate(ids):
            flows[q] = (tid, succs[n], {(a, b): float(_split(row[f"pc{a}{b}"])[n])
                                        for a in range(k) for b in range(k) if a != b})
    return {"k": k, "tasks": tasks, "flows": flows, "edges": edges, "memory": memory}


@lru_cache(maxsize=None)
def converted(stem: str) -> tuple[dict, schedkit.Problem]:
    data = convert("moirai", DATA / f"{stem}.xls")
    return data, schedkit.Problem.from_dict(json.loads(json.dumps(data)))


def test_registered():
    cls = IMPORTERS.get("moirai")
    assert cls is Moirai and cls.suffixes == (".xls",) and cls.extra == "moirai"


@pytest.mark.parametrize("stem", sorted(COUNTS))
def test_table_converts_with_its_counts(stem):
    devices, tasks, flows = COUNTS[stem]
    data, problem = converted(stem)
    ref = table(stem)
    assert data["name"] == stem
    assert problem.devices == [f"d{k}" for k in range(devices)]
    assert len(problem.tasks) == tasks == len(ref["tasks"])
    assert len(ref["flows"]) == flows
    # One edge per (task, successor): the flows, and the virtual sources' plain precedences.
    assert len(problem.edges) == ref["edges"]
    moving = sum(any(t > 0 for t in times.values()) for _, _, times in ref["flows"].values())
    assert sum(1 for e in data["edges"] if "transfer_times" in e) == moving
    assert sum(1 for e in data["edges"] if e["size"] > 0) == moving
    # Each direction of each pair is its own one-way link, hence its own channel.
    assert len(data["links"]) == devices * (devices - 1)
    assert all(link["bidirectional"] is False for link in data["links"])
    assert sorted(problem.channels) == sorted(f"d{a}->d{b}" for a in range(devices)
                                              for b in range(devices) if a != b)


@pytest.mark.parametrize("stem", sorted(COUNTS))
def test_every_flow_time_is_reproduced_exactly(stem):
    _, problem = converted(stem)
    ref = table(stem)
    size_of = {(problem.tasks[i], problem.tasks[j]): size for i, j, size in problem.edges}
    for q, (src, dst, times) in ref["flows"].items():
        size = size_of[f"t{src}", f"t{dst}"]
        for (a, b), t in times.items():
            assert problem.comm_time(size, a, b) == t, (stem, q, a, b)
            assert problem.moves(size, a, b) == (t > 0)


@pytest.mark.parametrize("stem", sorted(COUNTS))
def test_durations_and_memory_are_carried(stem):
    _, problem = converted(stem)
    ref = table(stem)
    assert problem.device_memory == ref["memory"]
    for i, name in enumerate(problem.tasks):
        task = ref["tasks"][int(name[1:])]
        assert [problem.durations[i][k] for k in range(ref["k"])] == task["p"]
        assert problem.task_memory[i] == task["mi"]


@pytest.mark.parametrize("stem", ["GoogLeNet", "inceptionv4", "transformer", "yolov5x"])
def test_real_models_are_factor_times_size(stem):
    """The README's observation: a size per flow and a bandwidth per direction explain every
    time, to the tables' rounding (5 decimals) and the factors' estimate (1e-5 of the size)."""
    data, problem = converted(stem)
    assert len({link["bandwidth"] for link in data["links"]}) > 1
    for i, j, size in problem.edges:
        for (a, b), t in getattr(size, "times", {}).items():
            assert abs(float(size) * problem.inv_bandwidth[a][b] - t) <= 1e-5 + 1.01e-5 * size


def test_hand_made_example_keeps_unit_bandwidths():
    data, _ = converted("example-1")
    assert {link["bandwidth"] for link in data["links"]} == {1}


def test_several_sources_and_sinks():
    _, transformer = converted("transformer")
    sources = [transformer.tasks[i] for i, p in enumerate(transformer.preds) if not p]
    assert len(sources) == 8 and sources[:2] == ["t0", "t1"]
    _, yolo = converted("yolov5x")
    assert [yolo.tasks[i] for i, s in enumerate(yolo.succs) if not s] == ["t876", "t877", "t878"]


def test_example_stops_at_the_first_empty_task_cell():
    sheet = xlrd.open_workbook(str(DATA / "example-1.xls"), logfile=io.StringIO()).sheet_by_index(0)
    assert sheet.nrows > 15 and "MILP" in sheet.cell_value(sheet.nrows - 1, 0)  # the note
    data, _ = converted("example-1")
    assert data["tasks"][-1] == {"name": "t26", "durations": {"d0": 0, "d1": 0, "d2": 0}}
    assert data["tasks"][0]["durations"] == {"d0": 0, "d1": 0, "d2": 0}  # the virtual source


def _hand_drawn_schedule(problem) -> Schedule:
    """Sheet 2 of example-1: rows ``task, _, flow, channel, S, C, K`` below the Gantt drawing."""
    sheet = xlrd.open_workbook(str(DATA / "example-1.xls"), logfile=io.StringIO()).sheet_by_index(1)
    first = [r for r in range(sheet.nrows) if sheet.cell_value(r, 0) == "task"][0] + 1
    runs = {}
    for r in range(first, sheet.nrows):
        row = sheet.row_values(r)
        runs[f"t{int(row[0])}"] = TaskRun(task=f"t{int(row[0])}", device=f"d{int(row[6])}",
                                          start=row[4], end=row[5])
    transfers = []
    for i, j, size in problem.edges:
        a, b = runs[problem.tasks[i]], runs[problem.tasks[j]]
        u, v = problem.device_index[a.device], problem.device_index[b.device]
        if problem.moves(size, u, v):
            end = a.end + problem.comm_time(size, u, v)
            transfers.append(Transfer(src=a.task, dst=b.task, to=b.device, start=a.end, end=end,
                                      **{"from": a.device}))
    return Schedule(problem=problem.name, method="hand", status="heuristic",
                    tasks=list(runs.values()), transfers=transfers)


def test_hand_drawn_schedule_of_example_1_is_valid():
    """MOIRAI's drawn schedule (makespan 31, memory filled exactly) fits the converted times."""
    _, problem = converted("example-1")
    schedule = _hand_drawn_schedule(problem)
    assert schedule.makespan == 31
    assert schedule.violations(problem) == []
    assert sum(problem.task_memory) == sum(problem.device_memory) == 44


def test_heft_on_googlenet_beats_one_device():
    _, problem = converted("GoogLeNet")
    schedule = schedkit.solve(problem, "heft")
    assert schedule.violations(problem) == []
    best_single = min(sum(d[k] for d in problem.durations) for k in range(len(problem.devices)))
    assert schedule.makespan < best_single


def test_heft_on_example_1():
    """Example-1's memory is filled exactly (44 of 44), which greedy placement cannot find;
    HEFT schedules its times without the capacities, the MILP with them."""
    data, problem = converted("example-1")
    free = json.loads(json.dumps(data))
    for device in free["devices"]:
        del device["memory"]
    relaxed = schedkit.Problem.from_dict(free)
    schedule = schedkit.solve(relaxed, "heft")
    assert schedule.violations(relaxed) == [] and schedule.makespan <= 31
    exact = schedkit.solve(problem, "milp", time_limit=20)
    assert exact.violations(problem) == [] and exact.makespan <= 31


def test_shipped_examples_are_current():
    for stem, name in (("example-1", "moirai_example1"), ("GoogLeNet", "googlenet_moirai")):
        assert json.loads((EXAMPLES / f"{name}.json").read_text()) == converted(stem)[0]


def test_missing_xlrd_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "xlrd", None)
    with pytest.raises(SchedkitError, match=r"'moirai' extra: pip install 'schedkit\[moirai\]'"):
        convert("moirai", DATA / "example-1.xls")


HEADER = ["task", "c_task", "dir_succ", "dir_succ_add", "p0", "p1",
          "pc00", "pc01", "pc10", "pc11", "mi", "m0", "m1"]
ROWS = [[0, "", 1, 1, 0, 0, "", "", "", "", 0, 10, 8],
        [1, "2,3", "4,5", "2,3,4,5", 3, 5, "0,0", "2,4", "1,2", "0,0", 6, "", ""],
        [4, "", "", "", 2, 1, "", "", "", "", 2, "", ""],
        [5, "", "", "", 2, 2, "", "", "", "", 0, "", ""]]


def _write_xls(path: Path, header: list, rows: list) -> Path:
    xlwt = pytest.importorskip("xlwt")
    book = xlwt.Workbook()
    sheet = book.add_sheet("Sheet1")
    for r, row in enumerate([header] + rows):
        for c, value in enumerate(row):
            if value != "":
                sheet.write(r, c, value)
    book.save(str(path))
    return path


def test_small_table_through_the_cli(tmp_path, capsys):
    src = _write_xls(tmp_path / "small.xls", HEADER, ROWS)
    assert main(["convert", "moirai", str(src), "-o", str(tmp_path / "small.json")]) == 0
    problem = schedkit.Problem.load(tmp_path / "small.json")
    assert problem.comm_time(problem.edges[2][2], 0, 1) == 4
    assert problem.comm_time(problem.edges[2][2], 1, 0) == 2
    assert "wrote" in capsys.readouterr().out


def _cells(**changes) -> tuple[list, list]:
    header, rows = list(HEADER), [list(r) for r in ROWS]
    for key, value in changes.items():
        if key == "header":
            header = value
        else:  # r{row}_{column}: a data row (0 = first) and a column name
            r, column = key[1:].split("_", 1)
            rows[int(r)][HEADER.index(column)] = value
    return header, rows


BAD = {
    "no pc column": (_cells(header=[h if h != "pc01" else "pcx" for h in HEADER]),
                     "header: missing column 'pc01'"),
    "p columns out of step": (_cells(header=[h if h != "p1" else "q1" for h in HEADER]),
                              "header: expected the pc columns pc00 .. pc00 for 1 device"),
    "no p at all": (_cells(header=[h if h not in ("p0", "p1") else "x" + h for h in HEADER]),
                    "header: missing column 'p0'"),
    "no m column": (_cells(header=HEADER[:-1] + ["capacity"]), "header: missing column 'm1'"),
    "flow joins no edge": (_cells(r1_c_task="2,3,7", r1_dir_succ_add="2,3,7,4,5", r1_pc00="0,0,0",
                                  r1_pc01="2,4,1", r1_pc10="1,2,1", r1_pc11="0,0,0"),
                           "row 3 (task 1): flow 7 joins no edge"),
    "flow to no task": (_cells(r1_dir_succ="4,9", r1_dir_succ_add="2,3,4,9"),
                        "row 3 (task 1): flow 3 joins task 1 to 9, which is not a task"),
    "flow not in dir_succ_add": (_cells(r1_dir_succ_add="2,4,5"),
                                 "row 3 (task 1): 3 is missing from dir_succ_add"),
    "non-numeric time": (
        _cells(r1_p1="fast"), "row 3, column p1: expected a number >= 0, got 'fast'"),
    "non-numeric flow time": (_cells(r1_pc10="1,x"), "row 3, column pc10: expected a number"),
    "non-numeric memory": (_cells(r2_mi="lots"), "row 4, column mi: expected a number >= 0"),
    "non-numeric capacity": (_cells(r0_m1="big"), "row 2, column m1: expected a number >= 0"),
    "pc list too long": (
        _cells(r1_pc01="2,4,6"), "row 3, column pc01: 3 time(s) for the 2 flow(s)"),
    "pc list too short": (_cells(r1_pc10=1), "row 3, column pc10: 1 time(s) for the 2 flow(s)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_table_is_a_one_line_cli_error(case, tmp_path, capfd):
    (header, rows), message = BAD[case]
    src = _write_xls(tmp_path / "bad.xls", header, rows)
    out = tmp_path / "bad.json"
    assert main(["convert", "moirai", str(src), "-o", str(out)]) != 0
    err = capfd.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{src}: " in err and message in err, err
    assert not out.exists()


@pytest.mark.parametrize("content", [b"not a spreadsheet\n", b""])
def test_unreadable_file_is_a_one_line_cli_error(content, tmp_path, capfd):
    src = tmp_path / "junk.xls"
    src.write_bytes(content)
    out = tmp_path / "junk.json"
    assert main(["convert", "moirai", str(src), "-o", str(out)]) != 0
    err = capfd.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{src}: not a readable .xls file" in err
    assert not out.exists()


def test_parse_errors_name_the_item():
    with pytest.raises(ProblemError, match=r"^t: row 3 \(task 1\): successor 5 has no flow"):
        parse_moirai([HEADER] + _cells(r1_c_task=2, r1_pc01=2, r1_pc10=1, r1_pc00=0, r1_pc11=0,
                                       r1_dir_succ_add="2,4,5")[1], name="t")
    with pytest.raises(ProblemError, match=r"^t: row 4: task 1 repeats row 3"):
        parse_moirai([HEADER] + _cells(r2_task=1)[1], name="t")
    with pytest.raises(ProblemError, match=r"^t: no task rows below the header"):
        parse_moirai([HEADER], name="t")
