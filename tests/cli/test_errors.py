"""One-line errors without output files, and exit statuses, for every command."""

import contextlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.bad_inputs import CASES
from schedkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")


def _check_error(capfd, code, out):
    captured = capfd.readouterr()
    assert code != 0
    lines = captured.err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{captured.err}"
    assert lines[0].startswith("schedkit: error: ")
    assert "Traceback" not in captured.err + captured.out
    assert not out.exists(), f"{out} was written despite the error"
    return lines[0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_problem_file(tmp_path, capfd, case):
    name, suffix, text, words = case
    path = tmp_path / f"{name}{suffix}"
    path.write_text(text)
    out = tmp_path / "out.json"
    line = _check_error(capfd, main(["solve", str(path), "-o", str(out)]), out)
    for word in words:
        assert word in line


@pytest.mark.parametrize("args, words", [
    (["--method", "nosuchmethod"], ["unknown method 'nosuchmethod'"]),
    (["--solver", "nosuchsolver"], ["solver 'nosuchsolver'"]),
    (["--formulation", "nosuchformulation"], ["unknown formulation 'nosuchformulation'"]),
    (["--formulation", "missing.yaml"], ["missing.yaml"]),
    (["--method", "heft", "--solver", "highs"], ["method 'heft' does not take --solver"]),
    (["--time-limit", "-1"], ["time_limit"]),
    (["-m", "milp", "--lns-seconds", "-1"], ["lns_seconds", "must be >= 0"]),
    (["--method", "heft", "--lns-seconds", "1"], ["method 'heft' does not take --lns-seconds"]),
    (["--threads", "0"], ["threads", "greater than or equal to 1"]),
    (["--method", "heft", "--gap", "0.1"], ["method 'heft' does not take --gap"]),
    (["--time-limit", "0"], ["time_limit", "greater than 0"]),
    (["--method", "heft", "--no-insertion", "--iterations", "9"],
     ["method 'heft' does not take --iterations"]),
    (["--method", "annealing", "--initial-acceptance", "2"], ["initial_acceptance", "less than 1"]),
    (["--method", "milp", "--no-insertion"], ["method 'milp' does not take --insertion"]),
], ids=["method", "solver", "formulation", "formulation_file", "option_not_taken", "negative_time_limit",
        "negative_lns", "lns_not_taken", "zero_threads", "gap_not_taken", "zero_time_limit", "iterations_not_taken",
        "acceptance_out_of_range", "bool_not_taken"])
def test_bad_solve_options(tmp_path, capfd, args, words):
    out = tmp_path / "out.json"
    line = _check_error(capfd, main(["solve", TINY, *args, "-o", str(out)]), out)
    for word in words:
        assert word in line


@pytest.mark.parametrize("blocks, words", [
    ("[no_overlap]", ["block 'no_overlap' needs family 'x'"]),
    ("[assignment, assignment]", ["block 'assignment' appears twice"]),
    ("[assignment, nosuchblock]", ["unknown block 'nosuchblock'"]),
], ids=["missing_family", "duplicate_block", "unknown_block"])
def test_bad_formulation_file(tmp_path, capfd, blocks, words):
    formulation = tmp_path / "mine.yaml"
    formulation.write_text(f"objective: makespan\nblocks: {blocks}\n")
    out = tmp_path / "out.json"
    line = _check_error(capfd, main(["solve", TINY, "-f", str(formulation), "-o", str(out)]), out)
    for word in words:
        assert word in line


def test_missing_problem_file(tmp_path, capfd):
    out = tmp_path / "out.json"
    line = _check_error(capfd, main(["solve", str(tmp_path / "absent.yaml"), "-o", str(out)]), out)
    assert "absent.yaml" in line and "no such file" in line


def test_export_of_a_bad_problem_writes_nothing(tmp_path, capfd):
    bad = tmp_path / "cycle.json"
    bad.write_text(CASES[0][2])
    out = tmp_path / "m.lp"
    assert "cycle" in _check_error(capfd, main(["export", str(bad), "-o", str(out)]), out)
    out = tmp_path / "m.txt"
    assert ".lp" in _check_error(capfd, main(["export", TINY, "-o", str(out)]), out)


def test_convert_of_a_bad_jssp_file_writes_nothing(tmp_path, capfd):
    src = tmp_path / "bad.txt"
    src.write_text("2 2\n0 3 1 2\n")
    out = tmp_path / "bad.json"
    line = _check_error(capfd, main(["convert", "jssp", str(src), "-o", str(out)]), out)
    assert "header says 2 jobs" in line


def test_validate_of_a_malformed_schedule(tmp_path, capfd):
    bad = tmp_path / "s.json"
    bad.write_text("{not json")
    line = _check_error(capfd, main(["validate", TINY, str(bad)]), tmp_path / "none")
    assert "malformed JSON" in line


@pytest.mark.parametrize("given", [TINY, str(ROOT / "examples" / "ft06.json")])
def test_validate_of_a_problem_file_given_for_the_schedule_names_the_format(capfd, tmp_path, given):
    # (it listed the 50 fields a schedule has and the problem file lacks: "format: Input should be ...")
    line = _check_error(capfd, main(["validate", TINY, given]), tmp_path / "none")
    assert line.endswith(": unsupported format 'schedkit/v1' (expected 'schedkit-schedule/v1')"), line


def test_console_script_unknown_solver_is_one_line(tmp_path):
    exe = shutil.which("schedkit")
    cmd = [exe] if exe else [sys.executable, "-m", "schedkit.cli"]
    out = tmp_path / "s.json"
    done = subprocess.run(cmd + ["solve", TINY, "--solver", "nosuchsolver", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "WARNING" not in done.stdout
    assert done.stderr.splitlines() == [
        "schedkit: error: --solver nosuchsolver: solver 'nosuchsolver' is not installed or not available to Pyomo "
        "(the default 'highs' is always available)"]
    assert not out.exists()


INFEASIBLE = {
    # three tasks of 6 on two devices of 10
    "memory": "devices: [{name: a, memory: 10}, {name: b, memory: 10}]\n"
              "links: [{src: a, dst: b, bandwidth: 1}]\n"
              "tasks: [{name: x, work: 1, memory: 6}, {name: y, work: 1, memory: 6}, "
              "{name: z, work: 1, memory: 6}]\n",
    # a collocation group of 12 on devices of 10
    "group": "devices: [{name: a, memory: 10}, {name: b, memory: 10}]\n"
             "links: [{src: a, dst: b, bandwidth: 1}]\n"
             "tasks: [{name: x, work: 1, memory: 6, colocate: g}, {name: y, work: 1, memory: 6, colocate: g}]\n"
             "edges: [{src: x, dst: y, size: 1}]\n",
    # a chain whose tasks fit the devices one by one, never all three
    "chain": "devices: [{name: a, memory: 10}, {name: b, memory: 10}, {name: c, memory: 4}]\n"
             "links: [{src: a, dst: b, bandwidth: 1}, {src: b, dst: c, bandwidth: 1}]\n"
             "tasks: [{name: x, work: 1, memory: 6}, {name: y, work: 2, memory: 6}, "
             "{name: z, work: 3, memory: 6}, {name: w, work: 1, memory: 1}]\n"
             "edges: [{src: x, dst: y, size: 1}, {src: y, dst: z, size: 1}, {src: z, dst: w}]\n",
}


@pytest.mark.parametrize("method", ["milp", "heft", "greedy", "annealing", "hash+fifo", "chain_split", "auto"])
@pytest.mark.parametrize("case", list(INFEASIBLE))
def test_no_schedule_exits_4_under_every_method(tmp_path, capfd, method, case):
    # An exact proof (status infeasible) and a heuristic that finds no placement both exit 4, the
    # documented 'no schedule' status; the heuristic's one line says what it found, never a traceback.
    path = tmp_path / f"{case}.yaml"
    path.write_text(INFEASIBLE[case])
    code = main(["solve", str(path), "-m", method, "--time-limit", "20"])
    captured = capfd.readouterr()
    assert code == 4, captured.err
    assert "Traceback" not in captured.err
    if "schedkit: error: " in captured.err:
        assert len(captured.err.strip().splitlines()) == 1


def test_the_exit_statuses_are_documented_alike():
    from schedkit.cli.common import EXIT_CODES, EXIT_NO_SCHEDULE

    howto = (ROOT / "docs" / "howto.rst").read_text()
    assert "the method found none" in EXIT_CODES[EXIT_NO_SCHEDULE]
    assert "a method that found none" in howto
    assert "4 solve: no schedule" in " ".join(build_parser_help().split())


def build_parser_help():
    from schedkit.cli.main import build_parser

    return build_parser([]).format_help()


CONTROL_NAMES = ["a\nb", "red\x1b[31m", "bell\x07", "rtl\u202eevil", "cr\rover", "tab\tx", "nul\x00x",
                 "c1\x9bx", "sep\u2028x"]


def _escaped(name: str) -> str:
    from schedkit.errors import printable

    return printable(name)


@pytest.mark.parametrize("name", CONTROL_NAMES)
def test_control_characters_in_names_are_shown_escaped(tmp_path, capfd, name):
    # In every message and listing: the error naming a bad task, the summary (problem name),
    # the schedule listing of --show, validate's lines; each stays one line, nothing acts on the terminal.
    data = {"name": f"p{name}", "devices": [{"name": f"d{name}"}, {"name": "cpu"}],
            "links": [{"src": f"d{name}", "dst": "cpu", "bandwidth": 1}],
            "tasks": [{"name": f"t{name}", "durations": {f"d{name}": 1, "cpu": 2}},
                      {"name": "u", "durations": {f"d{name}": 1, "cpu": 2}}],
            "edges": [{"src": f"t{name}", "dst": "u", "size": 1}]}
    good = tmp_path / "good.json"
    good.write_text(json.dumps(data))
    out = tmp_path / "s.json"
    assert main(["solve", str(good), "-m", "heft", "--show", "-o", str(out)]) == 0
    assert main(["validate", str(good), str(out)]) == 0
    schedule = json.loads(out.read_text())
    schedule["tasks"][0]["start"] += 0.5  # a violation naming the task
    out.write_text(json.dumps(schedule))
    assert main(["validate", str(good), str(out)]) == 3
    bad = tmp_path / "bad.json"
    data["tasks"][0]["memory"] = -1
    bad.write_text(json.dumps(data))
    assert main(["solve", str(bad), "-m", "heft"]) == 1
    captured = capfd.readouterr()
    text = captured.out + captured.err
    raw = {c for c in name if _escaped(c) != c}
    assert not (raw - {"\n"}) & set(text), repr(text)  # nothing the terminal would act on
    assert all(line.startswith("schedkit: ") for line in captured.err.splitlines()), captured.err
    assert _escaped(f"t{name}") in captured.err and _escaped(f"p{name}") in captured.out
    assert _escaped(f"d{name}") in captured.out and _escaped(f"t{name}") in captured.out
    lines = captured.out.splitlines()
    assert any(line.startswith("violation:") and _escaped(f"t{name}") in line for line in lines)


@pytest.mark.parametrize("name", ["e\x1b[31mvil", "bell\x07", "rtl\u202eevil"])
@pytest.mark.parametrize("form", ["text", "markdown", "latex"])
def test_describe_shows_a_formulation_name_escaped(tmp_path, capfd, name, form):
    from schedkit.errors import printable

    path = tmp_path / f"{name}.yaml"
    path.write_text("blocks: [assignment]\n")
    assert main(["describe", str(path), "--format", form]) == 0
    out = capfd.readouterr().out
    assert printable(name) in out and not {c for c in name if printable(c) != c} & set(out)


@pytest.mark.parametrize("method", ["heft", "greedy", "annealing", "milp"])
def test_bad_data_is_not_no_schedule(tmp_path, capfd, method):
    # A block's own data check (memory_timeline lifetime: a negative output size) is bad input:
    # exit 1 and a plain ProblemError, never the 'no schedule' of an infeasible problem.
    from schedkit import Problem, solve
    from schedkit.errors import NoScheduleError, ProblemError

    path = tmp_path / "neg.yaml"
    path.write_text("devices: [{name: a, memory: 10}, {name: b, memory: 10}]\n"
                    "links: [{src: a, dst: b, bandwidth: 1}]\n"
                    "tasks: [{name: x, work: 1, activation_memory: -1}, {name: y, work: 1}]\n"
                    "edges: [{src: x, dst: y, size: 1}]\n")
    formulation = {"blocks": ["assignment", "placement", "precedence", "no_overlap",
                              {"memory_timeline": {"mode": "lifetime"}}]}
    with pytest.raises(ProblemError, match="activation_memory -1 is negative") as info:
        solve(Problem.load(path), method, formulation=formulation)
    assert not isinstance(info.value, NoScheduleError)
    (tmp_path / "lt.yaml").write_text(json.dumps(formulation))
    assert main(["solve", str(path), "-m", method, "-f", str(tmp_path / "lt.yaml")]) == 1
    for case, text in INFEASIBLE.items():
        (tmp_path / f"{case}.yaml").write_text(text)
        # (milp proves it: a result with status infeasible, no exception)
        with pytest.raises(NoScheduleError) if method != "milp" else contextlib.nullcontext():
            schedule = solve(Problem.load(tmp_path / f"{case}.yaml"), method)
            assert schedule.status == "infeasible" and not schedule.tasks


@pytest.mark.parametrize("where", ["task", "device", "problem"])
def test_a_megabyte_long_name_is_shown_by_its_start(tmp_path, capfd, where):
    name = "n" * 10**6
    data = {"name": name if where == "problem" else "p",
            "devices": [{"name": name if where == "device" else "d"}],
            "tasks": [{"name": name if where == "task" else "t", "work": 1, "memory": 1}]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    code = main(["solve", str(path), "-m", "heft", "--show"])
    captured = capfd.readouterr()
    assert code == 0 and len(captured.out) < 2000 and re.search(r"n\.\.\. \(100000\d characters\)", captured.out)
    data["tasks"][0]["memory"] = -1
    path.write_text(json.dumps(data))
    assert main(["solve", str(path), "-m", "heft"]) == 1
    err = capfd.readouterr().err
    assert len(err) < 2000 and err.count("\n") == 1, err[:300]
