"""The solve command's flags, generated from every registered method's options (schedkit.cli.flags)."""

import argparse
from pathlib import Path

import pytest

from schedkit import SchedkitError
from schedkit.cli.main import main

TINY = str(Path(__file__).resolve().parents[2] / "examples" / "tiny.yaml")


def _solve_parser():
    from schedkit.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["solve"]


def test_every_method_option_has_a_solve_flag():
    """A new option field can never be unreachable from the command line."""
    from schedkit.methods import METHODS

    by_dest = {}
    for action in _solve_parser()._actions:
        by_dest.setdefault(action.dest, []).append(action)
    assert METHODS.names()
    for name, cls in METHODS.items():
        for field in cls.Options.model_fields:
            actions = by_dest.get(field, [])
            assert len(actions) == 1, f"method '{name}': option '{field}' has {len(actions)} solve flags"
            assert "--" + field.replace("_", "-") in actions[0].option_strings
            assert actions[0].default is None  # an absent flag leaves the method's own default


def test_generated_flags_types_short_flags_and_help():
    from schedkit.cli.solve import solve_flags

    flags = {f.name: f for f in solve_flags()}
    assert flags["formulation"].option_strings == ("--formulation", "-f")  # json_schema_extra
    assert flags["verbose"].option_strings == ("--verbose", "-v")
    assert flags["time_limit"].kind is float and flags["threads"].kind is int
    assert flags["start"].kind is str and flags["insertion"].kind is bool
    assert {"annealing", "evolution", "milp"} <= set(flags["time_limit"].methods)
    assert flags["gap"].help == "Relative gap at which the exact phases may stop. [auto, milp]"  # (auto's first)
    assert "*+msr" in flags["msr_idle"].help
    parser = _solve_parser()
    args = parser.parse_args(["p.yaml", "-m", "heft", "--no-insertion", "-v", "--time-limit", "2"])
    assert (args.insertion, args.verbose, args.time_limit, args.seed) == (False, True, 2.0, None)


def test_shared_and_clashing_option_names():
    from pydantic import Field

    from schedkit.cli.solve import solve_flags
    from schedkit.methods import Method, MethodOptions

    class A(Method):
        class Options(MethodOptions):
            depth: int = 3
            """How deep to look. Then more words."""

    class B(Method):
        class Options(MethodOptions):
            depth: float | None = Field(None, description="Depth, as a fraction.",
                                        json_schema_extra={"flag": "-d"})

    flags = {f.name: f for f in solve_flags([("b", B), ("a", A)])}
    assert set(flags) == {"depth", "time_limit", "seed", "threads"}  # (every method takes the last three)
    flag = flags["depth"]
    assert flag.option_strings == ("--depth", "-d") and flag.kind is int and flag.methods == ("a", "b")
    assert flag.help == "How deep to look. [a, b]"

    class C(Method):
        class Options(MethodOptions):
            output: str = "x"

    with pytest.raises(SchedkitError, match="option 'output' of method 'c' clashes"):
        solve_flags([("c", C)])

    class D(Method):
        class Options(MethodOptions):
            mode: str = Field("x", json_schema_extra={"flag": "-o"})

    with pytest.raises(SchedkitError, match="clashes with the solve command's own -o"):
        solve_flags([("d", D)])


@pytest.mark.parametrize("value", ["nan", "inf", "soon", ""])
def test_a_time_limit_that_is_not_a_number_is_one_line(capsys, value):
    with pytest.raises(SystemExit) as stop:
        main(["solve", TINY, "-m", "heft", "--time-limit", value])
    assert stop.value.code == 2
    assert f"argument --time-limit: {value!r} is not a" in capsys.readouterr().err


def test_verbose_is_ignored_by_a_method_without_a_log(tmp_path, capsys):
    assert main(["solve", TINY, "-m", "heft", "-v", "--no-insertion"]) == 0
    assert capsys.readouterr().out.startswith("heft on tiny: status=heuristic")
