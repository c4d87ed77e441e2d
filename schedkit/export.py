"""LP/MPS export with readable names, and reading an external solver's solution back.

Names show the block of every row, as Pyomo's LP writer spells them:
``c_l_precedence_delay(attn_norm_data)_``, ``c_l_no_overlap_disjunct(attn_mlp_gpu0_before)_``
(``c_l``/``c_u``/``c_e``: a lower, upper or equality row); columns are ``x(attn_gpu0)``,
``start(attn)``, ``end(attn)``, ``order(attn_mlp)`` and ``makespan``.

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
import tempfile
from pathlib import Path

from pyomo.core.base.var import VarData

from .build import BuiltModel
from .errors import SchedkitError, ScheduleError
from .io import atomic_output
from .schedule import Schedule
from .solver import extract_schedule

FORMATS = {".lp": "lp", ".mps": "mps"}


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise SchedkitError(f"{path}: unknown model format '{path.suffix}' (use .lp or .mps)")
    return fmt


def write_model(built: BuiltModel, path: str | Path) -> dict:
    """Write ``built`` as an LP or MPS file (by suffix), atomically; return name -> variable."""
    path = Path(path)
    _format_of(path)
    with atomic_output(path) as tmp:
        # The temporary file keeps the suffix, from which Pyomo picks the writer.
        _, smap_id = built.model.write(str(tmp), io_options={"symbolic_solver_labels": True})
    symbols = built.model.solutions.symbol_map[smap_id]
    return {name: obj for name, obj in symbols.bySymbol.items() if isinstance(obj, VarData)}


def variable_names(built: BuiltModel) -> dict:
    """Column name -> Pyomo variable, exactly as :func:`write_model` names them."""
    with tempfile.TemporaryDirectory() as folder:
        return write_model(built, Path(folder) / "model.lp")


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
    missing = [n for n, var in names.items() if n not in values and not var.fixed]
    if missing:
        raise ScheduleError(f"{path}: no value for variable '{missing[0]}' (+{len(missing) - 1} more)"
                            if len(missing) > 1 else f"{path}: no value for variable '{missing[0]}'")
    for name, value in values.items():
        names[name].set_value(value, skip_validation=True)
    state = "optimal" if status and status.startswith("optimal") else "feasible"
    schedule = extract_schedule(built, method=method, status=state, bound=None, seconds=None)
    schedule.validate(built.problem, built.blocks)
    return schedule
