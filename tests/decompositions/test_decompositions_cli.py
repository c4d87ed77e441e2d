"""The command line: solve with a decomposition, schedkit decompose, generate rwnn; bad input is one line."""

import json

import pytest

from schedkit import Problem
from schedkit.cli.main import main
from schedkit.generators import rwnn
from schedkit.testing import instance


@pytest.fixture
def files(tmp_path):
    chain = tmp_path / "chain.json"
    chain.write_text(json.dumps(rwnn(2, 3, seed=1)))
    loop = tmp_path / "loop.json"
    loop.write_text(json.dumps(instance("fork_join").make()))
    return tmp_path, chain, loop


def test_solve_with_bridge_dp_writes_a_validated_schedule(files, capsys):
    folder, chain, _ = files
    out = folder / "s.json"
    assert main(["solve", str(chain), "-m", "bridge_dp", "--inner", "milp", "--inner-options",
                 "time_limit=30", "--executor", "serial", "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith("bridge_dp:milp on rwnn-2x3-c1-sdep-mixed-1: status=optimal")
    assert main(["validate", str(chain), str(out)]) == 0


def test_decompose_writes_the_coarse_problem(files, capsys):
    folder, chain, _ = files
    out = folder / "coarse.yaml"
    assert main(["decompose", str(chain), "--method", "merge", "--nodes", "4", "-o", str(out)]) == 0
    assert "4 tasks" in capsys.readouterr().out
    assert len(Problem.load(out).tasks) == 4


def test_decompose_writes_one_file_per_part(files, capsys):
    folder, chain, _ = files
    assert main(["decompose", str(chain), "-m", "kedge", "--k", "2", "--min-tasks", "1",
                 "-o", str(folder / "m.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    written = sorted(p.name for p in folder.glob("m-*.json"))
    assert len(lines) == len(written) >= 2 and written[0] == "m-1.json"


@pytest.mark.parametrize("words, message", [
    (["decompose", "{chain}", "-m", "merge", "--nodes", "0"], "nodes: Input should be greater than or equal to 1"),
    (["solve", "{chain}", "-m", "merge", "--nodes", "0"], "nodes: Input should be greater than or equal to 1"),
    (["solve", "{chain}", "-m", "kedge", "--k", "0"], "k: Input should be greater than or equal to 1"),
    (["solve", "{loop}", "-m", "bridge_dp", "--executor", "serial"],
     "no bridge or articulation point that every path crosses; try kedge"),
    (["decompose", "{loop}", "-m", "bridge_dp"], "try kedge"),
    (["solve", "{chain}", "-m", "fusion", "--rules", "[[conv]]"],
     "rule 1 is not a list of two operator names or more"),
    (["solve", "{chain}", "-m", "fusion", "--rules", "rules.yaml"], "rules.yaml: cannot read"),
    (["solve", "{chain}", "-m", "merge", "--executor", "threads"], "unknown executor 'threads'"),
    (["solve", "{chain}", "-m", "merge", "--inner-options", "fast"], "expected a JSON object or key=value"),
    (["decompose", "{chain}", "-m", "bridge_dp", "--nodes", "3"], "decomposition 'bridge_dp' does not take --nodes"),
    (["decompose", "{chain}", "-m", "nope"], "unknown decomposition 'nope'"),
    (["generate", "rwnn", "--channels", "5"], "channels: needs an integer in 1..4, got 5"),
])
def test_bad_input_is_one_line_and_writes_nothing(files, capsys, words, message):
    folder, chain, loop = files
    out = folder / "out.json"
    argv = [w.format(chain=chain, loop=loop) for w in words] + ["-o", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("schedkit: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_decompose_refuses_to_overwrite_its_input(files, capsys):
    _, chain, _ = files
    assert main(["decompose", str(chain), "-m", "merge", "--nodes", "2", "-o", str(chain)]) == 1
    assert "would overwrite an input file" in capsys.readouterr().err


def test_generate_rwnn(tmp_path):
    out = tmp_path / "r.yaml"
    assert main(["generate", "rwnn", "--modules", "3", "--nodes", "4", "--channels", "2",
                 "--dependency", "wdep", "--seed", "5", "-o", str(out)]) == 0
    assert Problem.load(out).spec.model_dump() == Problem.from_dict(
        rwnn(3, 4, channels=2, dependency="wdep", seed=5)).spec.model_dump()
