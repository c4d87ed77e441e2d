"""The ``schedkit`` command line: its commands end to end (the solve flags: test_flags.py;
one-line errors and exit codes: test_errors.py)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedkit import Schedule
from schedkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")
JSSP_TEXT = "# two jobs, two machines\n2 2\n0 3 1 2\n1 4 0 1\n"


def test_solve_prints_summary_and_writes_a_schedule_validate_accepts(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["solve", TINY, "-o", str(out), "--show"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("auto on tiny: status=optimal makespan=4.51625")
    assert "gpu0:" in printed and "sample" in printed
    data = json.loads(out.read_text())
    assert data["format"] == "schedkit-schedule/v1" and data["status"] == "optimal"
    assert main(["validate", TINY, str(out)]) == 0
    assert capsys.readouterr().out.startswith("valid: ")


def test_solve_with_a_heuristic_and_options(tmp_path, capsys):
    out = tmp_path / "h.json"
    assert main(["solve", TINY, "--method", "annealing", "--seed", "3", "--iterations", "50",
                 "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith("annealing on tiny: status=heuristic")
    assert main(["validate", TINY, str(out)]) == 0


def test_validate_of_a_tampered_schedule_lists_violations(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["solve", TINY, "-o", str(out)]) == 0
    capsys.readouterr()
    data = json.loads(out.read_text())
    row = next(r for r in data["tasks"] if r["task"] == "sample")
    row["start"] -= 1.0  # lasts too long and starts before its data arrived
    out.write_text(json.dumps(data))
    code = main(["validate", TINY, str(out)])
    assert code != 0
    printed = capsys.readouterr().out
    # Every layer: the task's own duration and its input's arrival.
    assert "violation: assignment: task 'sample' lasts 1.3 on cpu, needs 0.3" in printed
    assert "violation: precedence: edge logits->sample: 'sample' starts at" in printed
    assert "invalid: 2 violation(s)" in printed
    # Without the transfer rows, the data's journey is missing from the schedule.
    row["start"] += 1.0
    data.pop("transfers", None)
    out.write_text(json.dumps(data))
    assert main(["validate", TINY, str(out)]) == 3
    printed = capsys.readouterr().out
    assert "violation: precedence: edge logits->sample: data moves gpu0->cpu but the schedule has " \
           "no transfer row for it" in printed
    assert "invalid: 1 violation(s)" in printed


def test_export_lp_and_mps(tmp_path, capsys):
    for name in ("m.lp", "m.mps"):
        assert main(["export", TINY, "-o", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}" in capsys.readouterr().out
        assert (tmp_path / name).stat().st_size > 0
    assert "no_overlap.disjunct" in (tmp_path / "m.lp").read_text()


def test_describe_prints_every_block_of_the_formulation(capsys):
    assert main(["describe", "jssp", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "## Formulation `jssp`" in text
    for kind in ("assignment", "precedence", "no_overlap"):
        assert f"### `{kind}`" in text
    assert "### `memory`" not in text
    assert "$$" in text


def test_listings(capsys):
    assert main(["methods"]) == 0
    methods = capsys.readouterr().out
    assert "milp" in methods and "heft" in methods
    assert main(["blocks"]) == 0
    blocks = capsys.readouterr().out.split()
    assert {"assignment", "placement", "precedence", "no_overlap", "memory"} <= set(blocks)
    assert main(["formulations"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(ln.startswith("latency") and "communication" in ln for ln in lines)
    assert any(ln.startswith("jssp") for ln in lines)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_convert_jssp_then_solve(tmp_path, capsys, suffix):
    src = tmp_path / "toy.txt"
    src.write_text(JSSP_TEXT)
    out = tmp_path / f"toy{suffix}"
    assert main(["convert", "jssp", str(src), "-o", str(out)]) == 0
    assert "4 tasks on 2 devices" in capsys.readouterr().out
    sched = tmp_path / "s.json"
    assert main(["solve", str(out), "-f", "jssp", "-o", str(sched)]) == 0
    assert "makespan=6 " in capsys.readouterr().out
    assert Schedule.load(sched).makespan == 6


def test_console_script_solves(tmp_path):
    exe = shutil.which("schedkit")
    cmd = [exe] if exe else [sys.executable, "-m", "schedkit.cli"]
    out = tmp_path / "s.json"
    done = subprocess.run(cmd + ["solve", TINY, "--method", "heft", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("heft on tiny: status=heuristic")
    assert out.is_file()


def test_console_script_milp_output_is_ours_alone(tmp_path):
    """HiGHS (1.16) writes a banner to the process's stdout unless told before it is built."""
    exe = shutil.which("schedkit")
    cmd = [exe] if exe else [sys.executable, "-m", "schedkit.cli"]
    done = subprocess.run(cmd + ["solve", TINY, "-m", "milp", "--solver", "highs", "-o", str(tmp_path / "s.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("milp:latency on tiny: status=optimal"), done.stdout
    assert "HiGHS" not in done.stdout + done.stderr
