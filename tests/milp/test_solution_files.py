"""Solution files of the solvers users run, read strictly; what load-solution may claim."""

from pathlib import Path
from xml.sax.saxutils import quoteattr

import highspy
import pytest

from schedkit import Problem, ScheduleError
from schedkit.blocks import BLOCKS, Block, register_block
from schedkit.milp import Milp
from schedkit.milp.export import load_solution, variable_names, write_model
from schedkit.milp.solution_files import read_solution

TINY = Path(__file__).resolve().parents[2] / "examples" / "tiny.yaml"


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """tiny exported, solved by HiGHS: the model, its solution values, HiGHS's two files."""
    folder = tmp_path_factory.mktemp("sol")
    built = Milp().build(Problem.load(TINY))
    write_model(built, folder / "m.lp")
    h = highspy.Highs()
    h.silent()
    h.readModel(str(folder / "m.lp"))
    h.run()
    h.writeSolution(str(folder / "raw.sol"), 0)
    h.writeSolution(str(folder / "pretty.sol"), 1)
    names = h.getLp().col_names_
    values = dict(zip(names, h.getSolution().col_value))
    return built, values, folder, h.getInfo().mip_dual_bound


def other_formats(values: dict, folder: Path) -> dict[str, Path]:
    """The same solution in the layouts Gurobi, SCIP, CBC and CPLEX write."""
    objective = values["makespan"]
    files = {
        "gurobi": "# Solution for model m\n# Objective value = {o}\n" + "".join(
            f"{n} {v!r}\n" for n, v in values.items()),
        "scip": "solution status: optimal solution found\nobjective value: {o}\n" + "".join(
            f"{n} {v!r} \t(obj:0)\n" for n, v in values.items()),
        "cbc": "Optimal - objective value {o}\n" + "".join(
            f"{k:7d} {n} {v!r} 0\n" for k, (n, v) in enumerate(values.items())),
        "cplex": '<?xml version="1.0" encoding="UTF-8"?>\n<CPLEXSolution version="1.2">\n'
                 ' <header problemName="m.lp" objectiveValue="{o}" solutionStatusString="integer optimal solution"/>\n'
                 ' <variables>\n' + "".join(f'  <variable name={quoteattr(n)} index="{k}" value="{v!r}"/>\n'
                                           for k, (n, v) in enumerate(values.items())) +
                 ' </variables>\n</CPLEXSolution>\n',
    }
    paths = {}
    for kind, text in files.items():
        paths[kind] = folder / f"{kind}.sol"
        paths[kind].write_text(text.replace("{o}", repr(objective)))
    return paths


def test_every_format_gives_the_same_schedule(solved):
    built, values, folder, bound = solved
    paths = {"highs": folder / "raw.sol", "highs-pretty": folder / "pretty.sol"}
    paths.update(other_formats(values, folder))
    schedules = {}
    for kind, path in paths.items():
        found = read_solution(path, set(variable_names(built)))
        assert found.format == {"gurobi": "name-value", "cplex": "cplex-xml"}.get(kind, kind)
        assert found.values.keys() == values.keys()
        schedules[kind] = load_solution(built, path, bound=bound)
    reference = schedules["highs"]
    assert reference.status == "optimal"
    for kind, schedule in schedules.items():
        assert [(r.task, r.device, r.start) for r in schedule.tasks] == \
            [(r.task, r.device, r.start) for r in reference.tasks], kind


def test_a_solvers_optimal_is_not_a_proof(tmp_path):
    # HiGHS stopping at a relative gap of 0.5 still writes "Optimal".
    problem = Problem.load("examples/hetero20.yaml")
    built = Milp().build(problem)
    write_model(built, tmp_path / "m.lp")
    h = highspy.Highs()
    h.silent()
    h.readModel(str(tmp_path / "m.lp"))
    h.setOptionValue("mip_rel_gap", 0.5)
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    h.writeSolution(str(tmp_path / "m.sol"), 0)
    loose = load_solution(built, tmp_path / "m.sol")
    assert loose.status == "feasible"
    # the file's Objective_bound, the solver's proof at its gap (not a proof of optimality)
    assert loose.gap > 0 and loose.bound == pytest.approx(h.getInfo().mip_dual_bound)
    with_bound = load_solution(built, tmp_path / "m.sol", bound=h.getInfo().mip_dual_bound)
    assert with_bound.bound == pytest.approx(h.getInfo().mip_dual_bound)
    assert with_bound.status == ("optimal" if with_bound.gap <= 1e-4 else "feasible")


def test_a_bound_above_the_makespan_is_refused(solved):
    built, _, folder, _ = solved
    with pytest.raises(ScheduleError, match="bound 99 is above the makespan"):
        load_solution(built, folder / "raw.sol", bound=99.0)


def test_columns_of_another_model_are_refused(solved, tmp_path):
    built, values, _, _ = solved
    path = tmp_path / "alien.sol"
    path.write_text("".join(f"{n} {v!r}\n" for n, v in values.items()) + "busy(gpu0) 3.6\n")
    with pytest.raises(ScheduleError, match=r"line \d+: column 'busy\(gpu0\)' is not in the model"):
        load_solution(built, path)


class AtMostThree(Block):
    """At most three tasks on gpu0 (rows only: no column of its own)."""

    builds_rows = True
    requires = frozenset({"x"})

    def build(self, ctx, rows):
        p, x = ctx.problem, ctx.family("x")
        d = p.device_index["gpu0"]
        cols = [x.col(i, d) for i in range(len(p.tasks)) if x.col(i, d) is not None]
        rows.add("cap", (), cols, [1.0] * len(cols), upper=3)

    def violations(self, problem, schedule):
        return [] if sum(r.device == "gpu0" for r in schedule.tasks) <= 3 else ["gpu0 runs more than 3"]


def test_a_solution_of_another_formulation_is_refused(solved):
    # Solved under 'latency' (five tasks on gpu0), read back as a formulation that allows three.
    _, _, folder, _ = solved
    register_block("at_most_three")(AtMostThree)
    try:
        f = {"name": "capped", "blocks": ["assignment", "placement", "precedence", "no_overlap", "memory",
                                          "at_most_three"]}
        capped = Milp(formulation=f).build(Problem.load(TINY))
        with pytest.raises(ScheduleError, match="the values break 'at_most_three.cap' of the model of "
                                                "formulation 'capped': was it exported with another"):
            load_solution(capped, folder / "raw.sol")
    finally:
        BLOCKS.unregister("at_most_three")


@pytest.mark.parametrize("text,words", [
    ("makespan oops\n", "line 1: 'oops' is not a number"),
    ("makespan nan\n", "line 1: 'nan' is not a number"),
    ("<CPLEXSolution><variables><variable name='makespan'/></variables></CPLEXSolution>",
     "a <variable> without name or value"),
    ("<CPLEXSolution><variables>", "malformed XML"),
    # a line of a file given by mistake is quoted by its start, not in full
    ("[" * 100_000 + "\n", r"expected 'name value', got '\[{80}\.\.\. \(100000 characters\)'$"),
    ("x" * 50_000 + " 1\n", r"column 'x{80}\.\.\. \(50000 characters\)' is not in the model"),
])
def test_malformed_solution_files_are_one_line_errors(tmp_path, text, words):
    path = tmp_path / "bad.sol"
    path.write_text(text)
    with pytest.raises(ScheduleError, match=words):
        read_solution(path, {"makespan"})


def _with_bound(path: Path, out: Path, line: str | None) -> Path:
    """HiGHS's raw file with its ``Objective_bound`` line replaced (``None``: removed)."""
    lines = [x for x in path.read_text().splitlines() if not x.startswith("Objective_bound")
             or line is not None]
    out.write_text("\n".join(line if x.startswith("Objective_bound") else x for x in lines) + "\n")
    return out


@pytest.mark.parametrize("kind", ["raw", "pretty"])
def test_the_solvers_own_bound_proves_its_optimum(solved, kind):
    # HiGHS writes Objective_bound (raw) or 'Objective bound:' (pretty): a proven optimum is
    # optimal without --bound copied in by hand (it was reported with a 23 % gap).
    built, _, folder, bound = solved
    schedule = load_solution(built, folder / f"{kind}.sol")
    assert schedule.status == "optimal" and schedule.gap == 0
    assert schedule.bound == pytest.approx(bound)


@pytest.mark.parametrize("line,status,bound", [
    ("Objective_bound 4", "feasible", 4.0),             # a weaker bound: kept, with its gap
    ("Objective_bound -inf", "feasible", None),         # no bound: the instance's own
    (None, "feasible", None),                           # no line at all
    ("Objective_bound 4.51625", "optimal", 4.51625),    # equal within the solver's tolerance
])
def test_the_solvers_bound_is_what_the_file_states(solved, tmp_path, line, status, bound):
    built, _, folder, _ = solved
    schedule = load_solution(built, _with_bound(folder / "raw.sol", tmp_path / "b.sol", line))
    assert schedule.status == status
    assert schedule.bound == pytest.approx(bound if bound is not None else built.lower_bound)


@pytest.mark.parametrize("line", ["Objective_bound 5", "Objective_bound 1e9"])
def test_a_files_bound_above_its_makespan_is_refused(solved, tmp_path, line):
    built, _, folder, _ = solved
    with pytest.raises(ScheduleError, match="is above the makespan"):
        load_solution(built, _with_bound(folder / "raw.sol", tmp_path / "b.sol", line))


def test_the_given_bound_takes_precedence_over_the_files(solved):
    built, _, folder, _ = solved
    assert load_solution(built, folder / "raw.sol", bound=4.0).bound == pytest.approx(4.0)
