"""The documentation tutorials are tests: each docs/tutorials/*.py runs to its last assert."""

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.py"))


def test_tutorials_exist():
    assert {p.name for p in TUTORIALS} >= {"first_solve.py", "custom_block.py"}


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # tutorials use paths like examples/tiny.yaml
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out  # they print what they show


def test_literalinclude_markers_match():
    """Every :start-after:/:end-before: marker used by the docs exists in its script."""
    import re

    for rst in (ROOT / "docs" / "tutorials").glob("*.rst"):
        text = rst.read_text()
        for script, start, end in re.findall(
                r"literalinclude:: (\S+\.py)\n(?:\s+:\S+:.*\n)*?\s+:start-after: (.+)\n\s+:end-before: (.+)\n",
                text):
            source = (rst.parent / script).read_text().splitlines()
            assert start.strip() in [s.strip() for s in source], (rst.name, start)
            assert end.strip() in [s.strip() for s in source], (rst.name, end)
