"""Inputs a user trips on: numbers, generator parameters, duplicate keys, exit codes, small things."""

import json

import pytest

import schedkit
from schedkit.cli.common import EXIT_CODES
from schedkit.cli.main import main

TINY = "examples/tiny.yaml"


@pytest.mark.parametrize("argv", [
    ["solve", TINY, "--time-limit", "nan"],
    ["solve", TINY, "--time-limit", "inf"],
    ["solve", TINY, "--gap=-inf"],
    ["solve", TINY, "-m", "annealing", "--initial-acceptance", "nan"],
    ["generate", "er", "--latency", "nan"],
    ["generate", "layered", "--edge-prob", "inf"],
    ["load-solution", TINY, "x.sol", "--bound", "nan"],
])
def test_numeric_options_refuse_nan_and_infinity(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "is not a finite number" in err
    assert err.count("\n") == 1 and "usage:" not in err  # one line, as every error of the CLI


@pytest.mark.parametrize("argv", [["solve"], ["solve", TINY, "--nope"], ["generate", "platform", "nodes", "--nodez", "3"],
                                  ["bogus"]])
def test_a_malformed_command_line_is_one_line_with_status_2(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("schedkit") and ": error: " in err and "--help lists the options" in err
    assert err.count("\n") == 1 and "usage:" not in err


@pytest.mark.parametrize("options", [{"time_limit": float("nan")}, {"gap": float("inf")}])
def test_method_options_refuse_nan_from_python(options):
    with pytest.raises(schedkit.SchedkitError, match="method 'milp'"):
        schedkit.solve(TINY, "milp", **options)


@pytest.mark.parametrize("argv,words", [
    (["generate", "er", "--latency", "-1"], "latency: needs a finite number >= 0, got -1.0"),
    (["generate", "layered", "--edge-prob", "1.5"], "edge_prob: a probability must lie in [0, 1]"),
    (["generate", "er", "--memory-slack", "0"], "memory_slack: needs a finite number > 0"),
    (["generate", "er", "--tasks", "0"], "tasks: needs an integer >= 1"),
])
def test_generate_refuses_parameters_schedkit_would_reject(tmp_path, capsys, argv, words):
    out = tmp_path / "p.json"
    assert main(argv + ["-o", str(out)]) == 1
    assert words in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("slack", [0.3, 0.9])
def test_generate_warns_when_no_placement_fits(tmp_path, capsys, slack):
    out = tmp_path / "p.json"
    assert main(["generate", "er", "--tasks", "12", "--devices", "3", "--memory-slack", str(slack),
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"schedkit: warning: {out}: the tasks need") and "no placement fits" in err
    assert out.exists()
    assert main(["generate", "er", "--tasks", "12", "--memory-slack", "2", "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("suffix,text", [
    (".yaml", "name: a\nname: b\ndevices: [{name: d}]\ntasks: [{name: t, work: 1}]\n"),
    (".yaml", "devices: [{name: d, memory: 1, memory: 2}]\ntasks: [{name: t, work: 1}]\n"),
    (".json", '{"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": 1, "work": 2}]}'),
])
def test_duplicate_keys_are_errors(tmp_path, capsys, suffix, text):
    path = tmp_path / f"p{suffix}"
    path.write_text(text)
    assert main(["solve", str(path), "-m", "heft"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"schedkit: error: {path}: malformed ") and "duplicate key" in err


def test_errors_start_with_the_file_or_option_they_are_about(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": -1}]}')
    assert main(["solve", str(bad)]) == 1
    assert capsys.readouterr().err.startswith(f"schedkit: error: {bad}: task 't' work")
    assert main(["solve", TINY, "-m", "heft", "--gap", "0.1"]) == 1
    assert capsys.readouterr().err.startswith("schedkit: error: method 'heft' does not take --gap")


def test_exit_codes_are_documented_and_kept(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {meaning}" in text
    assert main(["solve", TINY, "-m", "heft"]) == 0
    assert main(["solve", "nope.yaml"]) == 1
    with pytest.raises(SystemExit) as stop:
        main(["solve"])
    assert stop.value.code == 2
    pack = tmp_path / "pack.json"
    pack.write_text(json.dumps({"devices": [{"name": "a", "memory": 5}, {"name": "b", "memory": 5}],
                                "tasks": [{"name": f"t{i}", "work": 1, "memory": 4} for i in range(3)]}))
    assert main(["solve", str(pack), "--threads", "1"]) == 4          # proven infeasible: no schedule
    assert "status=infeasible" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"schedkit {schedkit.__version__}"


def test_describe_is_plain_text_by_default(capsys):
    assert main(["describe", "latency"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Formulation latency\n===") and "$" not in text and "\\sum" not in text
    assert "∑_{d ∈ D_i} x[i,d] = 1" in text
    assert main(["describe", "latency", "--format", "markdown"]) == 0
    assert "$$\\sum_{d \\in D_i} x_{i,d} = 1" in capsys.readouterr().out
    assert main(["describe", "latency", "--format", "latex"]) == 0
    assert capsys.readouterr().out.startswith("\\section*{Formulation \\texttt{latency}}")


def test_show_tells_short_tasks_apart(capsys):
    assert main(["solve", TINY, "--show"]) == 0
    shown = capsys.readouterr().out
    assert "4.21625 - 4.51625    sample" in shown


def test_a_proven_optimum_is_printed_without_float_noise(capsys):
    assert main(["solve", "examples/ft06.json", "-f", "jssp"]) == 0
    line = capsys.readouterr().out
    assert "status=optimal makespan=55 bound=55 gap=0.00%" in line


def test_solve_says_once_what_the_formulation_ignores(capsys):
    assert main(["solve", TINY, "-f", "jssp"]) == 0
    err = capsys.readouterr().err
    assert err.count("which the formulation ignores") == 2
    assert err.count("the problem gives memory capacities, which the formulation ignores (it has no 'memory' block)") == 1
    assert err.count("the problem gives the data its edges carry, which the formulation ignores") == 1


def test_pins_are_not_said_to_be_ignored_without_placement_they_are_held(tmp_path, capsys):
    # (the note said 'pins or collocation groups' were ignored, while assignment held the pin:
    # a schedule with the pinned task elsewhere is invalid under the same formulation)
    import yaml

    data = {"devices": [{"name": "fast"}, {"name": "slow"}], "links": [{"src": "fast", "dst": "slow", "bandwidth": 10}],
            "tasks": [{"name": "a", "durations": {"fast": 1, "slow": 5}, "pin": ["slow"]},
                      {"name": "b", "durations": {"fast": 1, "slow": 5}}],
            "edges": [{"src": "a", "dst": "b", "size": 1}]}
    formulation = {"objective": "makespan", "blocks": ["assignment", "precedence", "no_overlap", "memory"]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "f.yaml").write_text(yaml.safe_dump(formulation))
    assert main(["solve", str(tmp_path / "p.yaml"), "-f", str(tmp_path / "f.yaml"), "-m", "milp"]) == 0
    out = capsys.readouterr()
    assert "ignores" not in out.err and "makespan=6.1" in out.out      # (a stays on slow: 5, 0.1, 1)
    data["tasks"][1]["colocate"] = data["tasks"][0]["colocate"] = "g"
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    assert main(["solve", str(tmp_path / "p.yaml"), "-f", str(tmp_path / "f.yaml"), "-m", "milp"]) == 0
    assert ("the problem gives collocation groups, which the formulation ignores (it has no 'placement' block)"
            in capsys.readouterr().err)
