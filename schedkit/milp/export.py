"""LP/MPS export with readable names, and reading an external solver's solution back.

The file is written straight from the formulation's sparse model
(:mod:`schedkit.milp.lpfile`); no Pyomo object is made. Every row's name starts with its
block: ``precedence.delay(attn_norm_data)``, ``no_overlap.disjunct(attn_mlp_gpu0_before)``,
``assignment.one_device(attn)``; rows of the build context itself are ``end_def(...)``,
``makespan_def(...)`` and ``device_load(...)``. Columns are ``x(attn_gpu0)``,
``start(attn)``, ``end(attn)``, ``order(attn_mlp)`` and ``makespan``. Characters other
than letters, digits, ``_``, ``.`` and parentheses become ``_``.

Examples
--------
>>> import tempfile, pathlib, highspy
>>> from schedkit import Problem
>>> from schedkit.milp import Milp
>>> problem = Problem.load("examples/tiny.yaml")
>>> built = Milp().build(problem)
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_model(built, folder / "tiny.lp")
>>> h = highspy.Highs(); h.silent(); _ = h.readModel(str(folder / "tiny.lp")); _ = h.run()
>>> _ = h.writeSolution(str(folder / "tiny.sol"), 0)
>>> schedule = load_solution(built, folder / "tiny.sol")
>>> schedule.status, round(schedule.makespan, 5)
('optimal', 4.51625)
"""

from __future__ import annotations

import re
from pathlib import Path

from schedkit.atomic import atomic_output
from schedkit.errors import SchedkitError, ScheduleError
from schedkit.milp.context import BuiltModel
from schedkit.milp.readback import exact_result
from schedkit.milp.solvers.base import RawSolution
from schedkit.schedule import Schedule, Termination
from schedkit.validate import validate

FORMATS = {".lp": "lp", ".mps": "mps"}


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise SchedkitError(f"{path}: unknown model format '{path.suffix}' (use .lp or .mps)")
    return fmt


def write_model(built: BuiltModel, path: str | Path) -> dict[str, int]:
    """Write ``built`` as an LP or MPS file (by suffix), atomically; return column name -> index."""
    from schedkit.milp.lpfile import write_lp, write_mps

    path = Path(path)
    writer = write_lp if _format_of(path) == "lp" else write_mps
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as out:
            writer(built.linear, out)
    return variable_names(built)


def variable_names(built: BuiltModel) -> dict[str, int]:
    """Column name -> column index, exactly as :func:`write_model` names them."""
    return {name: col for col, name in enumerate(built.linear.column_names())}


_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?inf$", re.IGNORECASE)


def read_solution(path: str | Path, names) -> tuple[dict[str, float], str | None]:
    """Variable values of a solution file, and the model status it states (if any).

    Reads HiGHS solution files (primal section), Gurobi/SCIP-style ``name value``
    lines and CBC-style ``index name value ...`` lines: on each line, the first
    token that is a known column name is followed by its value.
    """
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise ScheduleError(f"{path}: cannot read: {exc.strerror or exc}") from None
    values: dict[str, float] = {}
    status = None
    for k, line in enumerate(lines):
        text = line.strip()
        low = text.lower()
        if low.startswith("# dual solution") or low.startswith("# basis"):
            break
        if low == "model status" and k + 1 < len(lines):
            status = lines[k + 1].strip().lower()
            continue
        if low.startswith("optimal") and status is None:
            status = "optimal"
        tokens = text.split()
        for t, token in enumerate(tokens[:-1]):
            if token in names and _NUMBER.match(tokens[t + 1]):
                values[token] = float(tokens[t + 1])
                break
    if not values:
        raise ScheduleError(f"{path}: no values of this model's variables found")
    return values, status


def load_solution(built: BuiltModel, path: str | Path, method: str = "external") -> Schedule:
    """Turn an external solver's solution of an exported model into a validated schedule."""
    names = variable_names(built)
    values, status = read_solution(path, names)
    lin = built.linear
    missing = [n for n, col in names.items() if n not in values and lin.lower[col] != lin.upper[col]]
    if missing:
        raise ScheduleError(f"{path}: no value for variable '{missing[0]}' (+{len(missing) - 1} more)"
                            if len(missing) > 1 else f"{path}: no value for variable '{missing[0]}'")
    vector = [values.get(name, lin.lower[col]) for name, col in names.items()]
    raw = RawSolution(Termination.FINISHED, optimal=bool(status and status.startswith("optimal")),
                      values=vector, objective=vector[built.context.family("makespan").col])
    schedule = exact_result(built, raw, method).to_schedule()
    validate(built.problem, schedule, built.blocks)
    return schedule
