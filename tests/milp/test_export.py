"""LP/MPS export, solving with HiGHS directly, and reading the solution back."""

from pathlib import Path

import highspy
import pytest

import schedkit
from schedkit import Problem, ScheduleError
from schedkit.cli.main import main
from schedkit.milp.export import load_solution, write_model
from schedkit.milp.solution_files import read_solution
from schedkit.milp import Milp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TINY = EXAMPLES / "tiny.yaml"
TOPCUOGLU = EXAMPLES / "topcuoglu2002.json"


def run_highs(model: Path, solution: Path, style: int = 0, gap: float | None = None) -> float:
    """Solve a model file with HiGHS, write its solution; return HiGHS's proven bound."""
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(model)) == highspy.HighsStatus.kOk
    if gap is not None:
        h.setOptionValue("mip_rel_gap", gap)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    h.writeSolution(str(solution), style)
    return h.getInfo().mip_dual_bound


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
@pytest.mark.parametrize("path", [TINY, TOPCUOGLU], ids=["tiny", "topcuoglu"])
def test_round_trip_gives_the_solve_makespan(tmp_path, suffix, path):
    problem = Problem.load(path)
    built = Milp().build(problem)
    model = tmp_path / f"model{suffix}"
    names = write_model(built, model)
    assert model.is_file() and "makespan" in names
    assert not list(tmp_path.glob("*partial*"))  # atomic write leaves nothing behind
    solution = tmp_path / "model.sol"
    bound = run_highs(model, solution)
    direct = schedkit.solve(problem, "milp")
    # HiGHS writes its bound into the file (Objective_bound): that bound, not the word
    # "Optimal", proves the optimum.
    external = load_solution(built, solution)
    assert external.status == "optimal" and external.bound == pytest.approx(bound)
    assert external.makespan == pytest.approx(direct.makespan, rel=1e-6)
    assert external.violations(problem) == []
    # Without its bound line the solver's word proves nothing: feasible.
    lines = [ln for ln in solution.read_text().splitlines() if not ln.startswith("Objective_bound")]
    solution.write_text("\n".join(lines) + "\n")
    unproven = load_solution(built, solution)
    assert unproven.status == "feasible" and unproven.bound < unproven.makespan
    proven = load_solution(built, solution, bound=bound)
    assert proven.status == "optimal" and proven.makespan == pytest.approx(direct.makespan, rel=1e-6)


def test_lp_names_show_the_blocks(tmp_path):
    built = Milp().build(Problem.load(TINY))
    write_model(built, tmp_path / "m.lp")
    text = (tmp_path / "m.lp").read_text()
    for block in ("assignment", "precedence", "no_overlap"):
        assert f" {block}." in text
    assert " memory." not in text  # tiny's capacities hold every task: no memory row
    assert "x(attn_gpu0)" in text and "start(attn)" in text


def test_unknown_model_suffix_is_an_error(tmp_path):
    built = Milp().build(Problem.load(TINY))
    with pytest.raises(schedkit.SchedkitError, match="unknown model format"):
        write_model(built, tmp_path / "model.txt")
    assert not (tmp_path / "model.txt").exists()


def test_cli_export_and_load_solution_match_solve(tmp_path, capsys):
    model, solution, out = tmp_path / "t.mps", tmp_path / "t.sol", tmp_path / "t.json"
    assert main(["export", str(TOPCUOGLU), "-o", str(model)]) == 0
    assert "wrote" in capsys.readouterr().out
    run_highs(model, solution)
    assert main(["load-solution", str(TOPCUOGLU), str(solution), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "status=optimal makespan=73 bound=73 gap=0.00%" in printed  # the file's Objective_bound
    assert main(["load-solution", str(TOPCUOGLU), str(solution), "--bound", "60", "-o", str(out)]) == 0
    assert "status=feasible makespan=73 bound=60" in capsys.readouterr().out  # --bound, not the file's
    assert main(["load-solution", str(TOPCUOGLU), str(solution), "--bound", "73", "-o", str(out)]) == 0
    assert "status=optimal makespan=73 bound=73 gap=0.00%" in capsys.readouterr().out
    schedule = schedkit.Schedule.load(out)
    assert schedule.makespan == pytest.approx(schedkit.solve(TOPCUOGLU, "milp").makespan)
    assert main(["validate", str(TOPCUOGLU), str(out)]) == 0


def test_solution_missing_variables_is_a_schedule_error(tmp_path):
    problem = Problem.load(TINY)
    built = Milp().build(problem)
    write_model(built, tmp_path / "m.lp")
    run_highs(tmp_path / "m.lp", tmp_path / "m.sol")
    lines = (tmp_path / "m.sol").read_text().splitlines(True)
    kept = [ln for ln in lines if not ln.startswith("start(")]
    assert len(kept) < len(lines)
    (tmp_path / "cut.sol").write_text("".join(kept))
    with pytest.raises(ScheduleError, match=r"no value for variable 'start\("):
        load_solution(built, tmp_path / "cut.sol")


def test_solution_without_any_value_or_file(tmp_path):
    built = Milp().build(Problem.load(TINY))
    (tmp_path / "empty.sol").write_text("# a comment and nothing else\n")
    with pytest.raises(ScheduleError, match="no values"):
        load_solution(built, tmp_path / "empty.sol")
    (tmp_path / "prose.sol").write_text("nothing here\n")
    with pytest.raises(ScheduleError, match="line 1: column 'nothing' is not in the model"):
        load_solution(built, tmp_path / "prose.sol")
    with pytest.raises(ScheduleError, match="absent.sol: no such file"):
        read_solution(tmp_path / "absent.sol", {})


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_export_refuses_a_model_too_large_for_memory_before_building_it(tmp_path, capsys, monkeypatch, suffix):
    import schedkit.machine as machine
    from schedkit.cli import main

    monkeypatch.setattr(machine, "available_memory", lambda: 5 * 10**5)   # about 3,100 nonzeros fit (LP)
    monkeypatch.setattr("schedkit.milp.formulation.Formulation.build",
                        lambda *a, **k: pytest.fail("the model was built"))
    out = tmp_path / f"m{suffix}"
    assert main(["export", "examples/hetero20.yaml", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not written: its model of about 5,461 nonzeros" in err
    assert "built and written: about 0.0 GB of memory, more than half of the 0.0 GB free" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_export_refuses_a_file_larger_than_the_disk_space(tmp_path, capsys, monkeypatch):
    import shutil
    from collections import namedtuple

    from schedkit.cli import main

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 5000, 5000))
    out = tmp_path / "m.lp"
    assert main(["export", "examples/hetero20.yaml", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "GB of LP): 0.00 GB are free on its disk" in err and not out.exists()


def test_export_running_out_of_memory_while_building_is_one_line(tmp_path, capsys, monkeypatch):
    from schedkit.cli import main

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("schedkit.milp.method.Milp.build", exhausted)
    out = tmp_path / "m.lp"
    assert main(["export", "examples/hetero20.yaml", "-o", str(out)]) == 1
    assert "ran out of memory for the model" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_ctrl_c_while_the_rows_stream_out_leaves_the_old_file_and_no_partial_one(tmp_path, capsys, monkeypatch,
                                                                              suffix):
    import schedkit.milp.lpfile as lpfile
    from schedkit.milp.lpnames import StreamNames

    monkeypatch.setattr(lpfile, "CHUNK", 4)
    named = []
    real = StreamNames.rows

    def rows(self, first, stop):
        named.append(first)
        if len(named) == 3:  # two chunks are in the file by now
            raise KeyboardInterrupt
        return real(self, first, stop)

    monkeypatch.setattr(StreamNames, "rows", rows)
    out = tmp_path / f"m{suffix}"
    out.write_text("the model written before\n")
    assert main(["export", str(TOPCUOGLU), "-o", str(out)]) == 130
    assert named == [0, 4, 8]
    assert out.read_text() == "the model written before\n" and list(tmp_path.iterdir()) == [out]
