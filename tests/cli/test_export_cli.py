"""``schedkit export``: every preset in its help, and ``--no-cuts`` (issue 30, item 5)."""

import re
from pathlib import Path

import highspy
import pytest

from schedkit.cli.main import main
from schedkit.milp.formulation import FORMULATIONS

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")


def test_export_help_lists_every_preset_formulation(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["export", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    listed = re.findall(r"^  (\S+) ", text.split("preset formulations", 1)[1], flags=re.M)
    assert listed == FORMULATIONS.names() and "latency" in listed and "jssp" in listed
    assert "--no-cuts" in text


def _rows(path: Path) -> list[str]:
    """The labels of the rows under 'subject to' (the objective's line is not a row)."""
    text = path.read_text().split("subject to", 1)[1]
    return re.findall(r"^ (\S+?)(?:\(.*?\))?:", text, flags=re.M)


def _columns(path: Path) -> set[str]:
    return set(re.findall(r"\b((?:x|start|end|y|order)\([^)]*\)|makespan)\b", path.read_text()))


@pytest.mark.parametrize("problem, formulation", [(TINY, "latency"),
                                                  (str(ROOT / "examples" / "hetero20.yaml"), "jssp")])
def test_no_cuts_leaves_the_cut_rows_out_and_keeps_every_column(tmp_path, capsys, problem, formulation):
    full, bare = tmp_path / "full.lp", tmp_path / "bare.lp"
    assert main(["export", problem, "-f", formulation, "-o", str(full)]) == 0
    assert main(["export", problem, "-f", formulation, "-o", str(bare), "--no-cuts"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "without cut rows" in out[1] and "without cut rows" not in out[0]
    counts = [int(re.search(r"(\d+) rows", line).group(1)) for line in out]
    with_cuts, without = _rows(full), _rows(bare)
    assert any(r.startswith("cuts.") for r in with_cuts)
    assert not any(r.startswith("cuts.") for r in without)
    assert [r for r in with_cuts if not r.startswith("cuts.")] == without  # the rest unchanged
    assert counts[1] == len(without) < counts[0] == len(with_cuts)
    assert _columns(full) == _columns(bare)


def test_no_cuts_overrides_cuts_a_formulation_file_lists(tmp_path, capsys):
    form = tmp_path / "f.yaml"
    form.write_text("blocks: [assignment, precedence, no_overlap, {cuts: {load: true, chain: true}}]\n")
    out = tmp_path / "m.mps"
    assert main(["export", TINY, "-f", str(form), "-o", str(out), "--no-cuts"]) == 0
    assert "cuts." not in out.read_text()


def test_a_solution_of_the_model_without_cuts_loads_back_as_the_optimum(tmp_path, capsys):
    model, solution, schedule = tmp_path / "m.lp", tmp_path / "m.sol", tmp_path / "s.json"
    assert main(["export", TINY, "-o", str(model), "--no-cuts"]) == 0
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(model)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    h.writeSolution(str(solution), 0)
    capsys.readouterr()
    # The model is rebuilt with its cuts: they remove no schedule, so the solution fits it.
    assert main(["load-solution", TINY, str(solution), "-o", str(schedule)]) == 0
    line = capsys.readouterr().out
    assert "status=optimal" in line and "makespan=4.51625" in line
