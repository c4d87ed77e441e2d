"""No traceback anywhere: every reader, picture option and API entry point given bad input
answers with one line naming it, a non-zero exit and no output file (issue 27, item 5)."""

import re
from pathlib import Path

import pytest

from helpers.bad_inputs import UNREADABLE
from schedkit import Formulation, Problem, SchedkitError, Schedule, solve
from schedkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")


def one_line_error(capfd, code: int, out: Path | None = None, status: int = 1) -> str:
    """The one line ``schedkit: error: ...`` of a failed command (exit ``status``, no file written)."""
    captured = capfd.readouterr()
    assert code == status, captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedkit: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    if out is not None:
        assert not out.exists(), f"{out} was written despite the error"
    return lines[0]


#: Every command that reads a user's file: argv for the file, and the suffixes it reads as
#: JSON/YAML (``True``: every suffix; msr reads JSON only, jssp and solution files plain text).
READERS = {
    "problem": (lambda f, out: ["solve", f, "-m", "heft", "-o", out], True),
    "schedule": (lambda f, out: ["validate", TINY, f], True),
    "report": (lambda f, out: ["report", TINY, f, "-o", out.with_suffix(".html")], True),
    "plot": (lambda f, out: ["plot", TINY, f, "-o", out.with_suffix(".svg")], True),
    "formulation": (lambda f, out: ["export", TINY, "-f", f, "-o", out.with_suffix(".lp")], True),
    "platform": (lambda f, out: ["convert", "onnx", "model.onnx", "--platform", f, "-o", out], True),
    "msr": (lambda f, out: ["convert", "msr", f, "-o", out], (".json",)),
    "jssp": (lambda f, out: ["convert", "jssp", f, "-o", out], ()),
    "solution": (lambda f, out: ["load-solution", TINY, f, "-o", out], ()),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", UNREADABLE, ids=[c[0] for c in UNREADABLE])
def test_unreadable_files_are_one_line_errors(tmp_path, capfd, reader, case):
    name, suffix, data, words = case
    argv, structured = READERS[reader]
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(data)
    out = tmp_path / "out.json"
    line = one_line_error(capfd, main([str(a) for a in argv(str(path), out)]), out)
    assert str(path) in line
    if structured is True or suffix in structured or "not a text file" in words:
        for word in words:
            assert word in line


@pytest.mark.parametrize("call, words", [
    (lambda: Problem.load(None), "not NoneType"),
    (lambda: Problem.load(3), "not int"),
    (lambda: Problem.load(b"examples/tiny.yaml"), "not bytes"),
    (lambda: Problem.load(["examples/tiny.yaml"]), "not list"),
    (lambda: solve(None, "heft"), "not NoneType"),
    (lambda: Schedule.load(None), "not NoneType"),
    (lambda: Schedule.load(1.5), "not float"),
    (lambda: Schedule.from_json(None), "expected JSON text, not NoneType"),
    (lambda: Schedule.from_json({"tasks": []}), "expected JSON text, not dict"),
])
def test_wrong_types_in_the_python_api_are_schedkit_errors(call, words):
    with pytest.raises(SchedkitError, match=words):
        call()


#: A method's numeric option given a boolean (pydantic reads True as 1; ``gap=True`` would be a
#: 100 % gap): refused by every method, for its own options as for the common three.
BOOLEAN_NUMBERS = [("milp", "time_limit"), ("heft", "seed"), ("auto", "threads"), ("milp", "gap"),
                   ("milp", "lns_seconds"), ("annealing", "iterations"), ("evolution", "iterations"),
                   ("merge", "nodes"), ("merge", "edge_factor"), ("kedge", "k"), ("kedge", "max_share"),
                   ("bridge_dp", "min_tasks")]


@pytest.mark.parametrize("method, option", BOOLEAN_NUMBERS)
@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_for_a_number_is_refused_by_every_method(method, option, value):
    from schedkit.errors import OptionError
    from schedkit.methods import METHODS

    with pytest.raises(OptionError, match=f"{option}: must be a number, not a boolean"):
        METHODS.get(method)(**{option: value})


PLATFORM = {"devices": [{"name": "g", "peak_flops": 1, "memory_bandwidth": 1}]}


def _api_calls():
    from schedkit.importers import convert
    from schedkit.importers.jssp import parse_jssp
    from schedkit.importers.moirai import load_moirai
    from schedkit.importers.onnx import Onnx, parse_shapes
    from schedkit.importers.platform import load_platform
    from schedkit.milp import Milp
    from schedkit.report import render
    from schedkit.validate import validate, verdict

    problem = Problem.load(TINY)
    schedule = solve(problem, "heft")
    return {
        "Problem(None)": (lambda: Problem(None), "expected a ProblemSpec"),
        "Problem(dict)": (lambda: Problem({"devices": []}), "expected a ProblemSpec"),
        "Problem(path)": (lambda: Problem(TINY), "expected a ProblemSpec"),
        "solve(int)": (lambda: solve(3, "heft"), "expected a Problem, a ProblemSpec, a dict or a file path, not int"),
        "solve(schedule)": (lambda: solve(schedule, "heft"), "not Schedule"),
        "Method.solve(None)": (lambda: Milp().solve(None), "not NoneType"),
        "validate(p, None)": (lambda: validate(problem, None), "expected a Schedule, not NoneType"),
        "validate(None, s)": (lambda: validate(None, schedule), "expected a Problem, not NoneType"),
        "validate(p, path)": (lambda: validate(problem, "s.json"), "expected a Schedule, not str"),
        "validate(blocks=3)": (lambda: validate(problem, schedule, 3), "expected a list of blocks, not int"),
        "verdict(p, dict)": (lambda: verdict(problem, {}), "expected a Schedule, not dict"),
        "violations(None)": (lambda: schedule.violations(None), "expected a Problem, not NoneType"),
        "render(None, s)": (lambda: render("html", None, schedule), "expected a Problem, not NoneType"),
        "render(p, None)": (lambda: render("trace", problem, None), "expected a Schedule, not NoneType"),
        "write(None)": (lambda: schedule.write(None), "expected a file path"),
        "convert(path=None)": (lambda: convert("jssp", None), "expected a file path"),
        "convert(path=list)": (lambda: convert("msr", [TINY]), "expected a file path"),
        "parse_jssp(None)": (lambda: parse_jssp(None), "expected job-shop text (str), not NoneType"),
        "parse_jssp(bytes)": (lambda: parse_jssp(b"1 1\n0 1\n"), "not bytes"),
        "parse_shapes(int)": (lambda: parse_shapes(3), "--shape: expected NAME=D1,D2,... strings"),
        "onnx(path=None)": (lambda: Onnx().read(None, platform=PLATFORM), "expected a file path"),
        "moirai(path=None)": (lambda: load_moirai(None), "expected a file path"),
        "platform(path=int)": (lambda: load_platform(3), "expected a file path"),
    }


@pytest.mark.parametrize("name", list(_api_calls()))
def test_wrong_types_given_to_problems_methods_and_the_validator(name):
    call, words = _api_calls()[name]
    with pytest.raises(SchedkitError, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()


#: Schedule files a hand or a tool got wrong: pictures of them are drawn or refused in one line.
CORRUPTIONS = {
    "end_at_1e300": lambda d: d["tasks"][0].update(end=1e300),
    "unknown_task": lambda d: d["tasks"][0].update(task="ghost"),
    "unknown_device": lambda d: d["tasks"][0].update(device="ghost"),
    "transfer_from_nowhere": lambda d: d["transfers"][0].update(**{"from": "ghost"}),
    "route_unknown": lambda d: d["transfers"][0].update(route=["nope->x"]),
    "inputs_without_workload": lambda d: d["tasks"][0].update(inputs=[0, 1]),
    "infeasible_claim": lambda d: d.update(status="infeasible", tasks=[], transfers=[]),
    "no_solution_claim": lambda d: d.update(status="no_solution", tasks=[], transfers=[]),
    "unknown_formulation_block": lambda d: d.update(formulation={"blocks": ["zzz"]}),
    "dollar_method": lambda d: d.update(method="$\\frac{$"),
}


@pytest.mark.parametrize("command, suffix", [("validate", None), ("plot", ".png"), ("plot", ".svg"),
                                             ("trace", ".json"), ("report", ".html")])
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_pictures_of_corrupted_schedules(tmp_path, capfd, command, suffix, corruption):
    import json

    if command == "plot":
        pytest.importorskip("matplotlib")
    data = json.loads(solve(Problem.load(TINY), "heft").to_json())
    CORRUPTIONS[corruption](data)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    out = tmp_path / f"out{suffix}"
    code = main([command, TINY, str(path)] + (["-o", str(out)] if suffix else []))
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and code in (0, 1, 3), captured.err
    errors = [line for line in captured.err.splitlines() if line.startswith("schedkit: error: ")]
    assert (code == 1) == (len(errors) == 1), captured.err
    if code == 1:
        assert not out.exists()


FORMULATION_FILES = {
    "a_list": "- assignment\n",
    "blocks_a_string": "blocks: assignment\n",
    "block_a_number": "blocks: [3]\n",
    "block_null": "blocks: [null]\n",
    "block_nested": "blocks: [[assignment]]\n",
    "two_blocks_in_one": "blocks: [{assignment: {}, memory: {}}]\n",
    "parameters_a_list": "blocks: [assignment, {memory_timeline: [1]}]\n",
    "objective_a_list": "objective: [1]\nblocks: [assignment]\n",
    "description_a_list": "description: [1]\nblocks: [assignment]\n",
    "empty": "",
}


@pytest.mark.parametrize("command", ["describe", "solve", "export", "validate", "report"])
@pytest.mark.parametrize("case", list(FORMULATION_FILES))
def test_formulation_files_of_the_wrong_shape(tmp_path, capfd, command, case):
    schedule = tmp_path / "s.json"
    solve(Problem.load(TINY), "heft").write(schedule)
    formulation = tmp_path / f"{case}.yaml"
    formulation.write_text(FORMULATION_FILES[case])
    out = tmp_path / {"export": "m.lp", "report": "r.html"}.get(command, "o.json")
    argv = {"describe": ["describe", formulation],
            "solve": ["solve", TINY, "-m", "milp", "-f", formulation, "-o", out],
            "export": ["export", TINY, "-f", formulation, "-o", out],
            "validate": ["validate", TINY, schedule, "-f", formulation],
            "report": ["report", TINY, schedule, "-f", formulation, "-o", out]}[command]
    one_line_error(capfd, main([str(a) for a in argv]), out)


@pytest.mark.parametrize("make, words", [
    (lambda: Formulation(blocks=3), "formulation 'custom': blocks: Input should be a valid tuple"),
    (lambda: Formulation(name=[1], blocks=()), "name: Input should be a valid string"),
    (lambda: Formulation(objective=1, blocks=()), "objective: Input should be a valid string"),
    (lambda: Formulation(blocks=(), colour="red"), "colour"),
])
def test_formulations_made_in_python_with_wrong_types(make, words):
    with pytest.raises(SchedkitError, match=re.escape(words)):
        make()


@pytest.mark.parametrize("blocks, words", [([3], "a block is a name or a one-key mapping, got 3"),
                                           ("memory", "expected a list of blocks, not str"),
                                           ([{"memory": 1}], "block 'memory'")])
def test_the_validator_takes_blocks_as_data_or_says_why_not(blocks, words):
    from schedkit.validate import validate

    problem = Problem.load(TINY)
    with pytest.raises(SchedkitError, match=re.escape(words)):
        validate(problem, solve(problem, "heft"), blocks)
    validate(problem, solve(problem, "heft"), ["assignment", {"memory": {}}])  # names and data are blocks


# ---------------------------------------------------------------------- running out of memory
#: Where a command can run out of memory past the size estimates (they read the machine's free
#: memory, not ``ulimit -v`` or a container's cap): (what fails, how to make it fail).
OUT_OF_MEMORY = {
    "load": lambda mp: mp.setattr(Problem, "load", classmethod(_no_memory)),
    "render": lambda mp: mp.setattr("schedkit.report.render", _no_memory),
    "write": lambda mp: mp.setattr("schedkit.milp.export.write_model", _no_memory),
}


def _no_memory(*args, **kwargs):
    raise MemoryError


@pytest.mark.parametrize("argv, fails", [
    (lambda s, out: ["solve", TINY, "-m", "heft", "-o", out], "load"),
    (lambda s, out: ["validate", TINY, s], "load"),
    (lambda s, out: ["export", TINY, "-o", out.with_suffix(".lp")], "load"),
    (lambda s, out: ["export", TINY, "-o", out.with_suffix(".lp")], "write"),
    (lambda s, out: ["report", TINY, s, "-o", out.with_suffix(".html")], "render"),
    (lambda s, out: ["trace", TINY, s, "-o", out], "render"),
    (lambda s, out: ["plot", TINY, s, "-o", out.with_suffix(".svg")], "render"),
], ids=["solve-load", "validate-load", "export-load", "export-write", "report", "trace", "plot"])
def test_running_out_of_memory_is_one_line_and_writes_nothing(tmp_path, capfd, monkeypatch, argv, fails):
    schedule = tmp_path / "s.json"
    schedule.write_text(solve(Problem.load(TINY), "heft").to_json())
    out = tmp_path / "out.json"
    argv = [str(a) for a in argv(schedule, out)]
    OUT_OF_MEMORY[fails](monkeypatch)
    line = one_line_error(capfd, main(argv), Path(argv[argv.index("-o") + 1]) if "-o" in argv else None)
    assert "memory" in line, line


# ---------------------------------------------------------------------- YAML alias trees
_LAUGHS = "".join(f"{a}: &{a} [{', '.join([f'*{b}'] * 9)}]\n" for b, a in zip("abcdefg", "bcdefgh"))
ALIAS_TREES = {  # 8 levels of 9 aliases: 43 million leaves, 312 million characters as a repr
    "format": "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + _LAUGHS + "format: *h\n",
    "a_number": ("format: schedkit/v1\nname: p\na: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" + _LAUGHS
                 + "devices: [{name: d, memory: *h}]\ntasks: [{name: t, durations: {d: 1}}]\n"),
}


#: Runs ``schedkit ARGV`` and prints this process's peak resident memory (KB) on stdout.
_OWN_PEAK = """
import sys
from schedkit.cli import main
code = main(sys.argv[1:])
print([ln for ln in open("/proc/self/status") if ln.startswith("VmHWM")][0].split()[1])
sys.exit(code)
"""


@pytest.mark.parametrize("case", list(ALIAS_TREES))
def test_a_yaml_alias_tree_is_never_expanded_into_a_message(tmp_path, case):
    import subprocess
    import sys

    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_TREES[case])
    assert len(ALIAS_TREES[case]) < 600
    # The command runs in a child that reports its own peak memory (VmHWM starts again at
    # exec; a forked child's ru_maxrss may count the pytest process it was forked from).
    done = subprocess.run([sys.executable, "-c", _OWN_PEAK, "validate", str(path), "s.json"],
                          capture_output=True, text=True)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr[-2000:]
    assert len(done.stderr) < 1000
    peak_kb = int(done.stdout.split()[-1])
    # (the tree, expanded: 240-400 MB and seconds; read as it is: the interpreter's 70 MB)
    assert peak_kb < 150_000, f"peak {peak_kb} KB"
