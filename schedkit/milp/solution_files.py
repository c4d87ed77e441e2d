"""Reading the solution files the solvers users run write, strictly.

Formats (told apart by their first lines):

- HiGHS raw (``Model status`` / ``# Primal solution values`` / ``# Columns N`` / ``name value``)
  and HiGHS pretty (a ``Columns`` table with ``Primal`` and ``Name`` columns, 6 significant
  digits);
- ``name value`` files: Gurobi ``.sol`` (``#`` comments), SCIP (``solution status:``,
  ``objective value:``, ``name value (obj:c)``), CBC (``Optimal - objective value v``, then
  ``index name value reduced-cost``);
- CPLEX's XML (``<CPLEXSolution>``, ``<variable name=... value=...>``).

Every value line must name a column of the model: a solution written for another model
(another formulation, another problem) is refused, not half read. A solver's word
"optimal" is kept for the record only; it proves nothing about this model (see
:func:`schedkit.milp.export.load_solution`).

Examples
--------
>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.sol"
>>> _ = path.write_text("# Objective value = 9\\nmakespan 9\\nstart(a) 0\\n")
>>> found = read_solution(path, {"makespan", "start(a)"})
>>> found.format, found.values, found.objective
('name-value', {'makespan': 9.0, 'start(a)': 0.0}, 9.0)
>>> _ = path.write_text("makespan 9\\nx(other_gpu) 1\\n")
>>> read_solution(path, {"makespan"})
Traceback (most recent call last):
...
schedkit.errors.ScheduleError: .../m.sol: line 2: column 'x(other_gpu)' is not in the model (was it exported with another problem or formulation? see -f)
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

from schedkit.errors import ScheduleError

_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?inf(inity)?$", re.IGNORECASE)


@dataclass
class SolutionFile:
    """What a solution file says.

    Attributes
    ----------
    values : dict
        Column name -> value.
    format : str
        ``highs``, ``highs-pretty``, ``name-value``, ``scip``, ``cbc`` or ``cplex-xml``.
    status : str or None
        The solver's own word for its stop (lower case), when the file states one.
    objective : float or None
        The objective the file states.
    bound : float or None
        The best bound on the objective the file states (HiGHS writes ``Objective_bound``), when
        it is a finite number.
    precision : float
        Relative precision of the values (the pretty HiGHS table keeps 6 significant digits).
    """

    values: dict[str, float] = field(default_factory=dict)
    format: str = "name-value"
    status: str | None = None
    objective: float | None = None
    bound: float | None = None
    precision: float = 1e-9

    def proven_bound(self, makespan: float) -> float | None:
        """The file's bound as a lower bound of ``makespan`` (the model's objective, read back).

        ``None`` when the file states no bound, or states an objective that is not this
        makespan (the bound is then of another objective). A bound above the makespan by no
        more than the solver's tolerances is the makespan itself.

        Examples
        --------
        >>> SolutionFile(objective=9.0, bound=8.0).proven_bound(9.0)
        8.0
        >>> SolutionFile(objective=9.0, bound=9.0 + 1e-8).proven_bound(9.0)
        9.0
        >>> SolutionFile(objective=7.0, bound=7.0).proven_bound(9.0) is None
        True
        """
        if self.bound is None or (self.objective is not None
                                  and abs(self.objective - makespan) > BOUND_TOLERANCE * max(1.0, abs(makespan))):
            return None
        if makespan < self.bound <= makespan + BOUND_TOLERANCE * max(1.0, abs(makespan)):
            return makespan
        return self.bound


#: Relative tolerance of a solver's objective and bound (the MIP solvers' default feasibility
#: tolerances are 1e-6): within it, a bound above the makespan read back is that makespan.
BOUND_TOLERANCE = 1e-6


def read_solution(path: str | Path, names) -> SolutionFile:
    """Read the solution file ``path`` of a model whose column names are ``names``.

    Raises :class:`~schedkit.errors.ScheduleError` (one line, naming the file and line) for
    an unreadable file, a value that is not a number, a column the model does not have, or
    a file with no value at all.
    """
    from schedkit.problem.reading import read_text

    text = read_text(path, ScheduleError)
    path = Path(path)
    head = text.lstrip()[:200].lower()
    if head.startswith("<?xml") or head.startswith("<cplexsolution"):
        found = _cplex_xml(path, text, names)
    elif head.startswith("model status"):
        found = _highs_raw(path, text.splitlines(), names)
    elif head.startswith("columns"):
        found = _highs_pretty(path, text.splitlines(), names)
    else:
        found = _name_value(path, text.splitlines(), names)
    if not found.values:
        raise ScheduleError(f"{path}: no values of this model's variables found")
    return found


def _where(path: Path, number: int | None) -> str:
    return f"{path}: line {number}" if number else str(path)


def _value(path: Path, number: int | None, token: str) -> float:
    if not _NUMBER.match(token):  # 'nan' included
        raise ScheduleError(f"{_where(path, number)}: '{_clip(token)}' is not a number")
    return float(token)


def _clip(text: str, most: int = 80) -> str:
    # A line of a file given by mistake may be megabytes long: the message quotes its start.
    return text if len(text) <= most else text[:most] + f"... ({len(text)} characters)"


def _finite(value: float) -> float | None:
    # HiGHS writes an infinite bound when it has none (an LP, or a stop before the root).
    return value if math.isfinite(value) else None


def _known(path: Path, number: int | None, name: str, names) -> str:
    if name not in names:
        raise ScheduleError(f"{_where(path, number)}: column '{_clip(name)}' is not in the model (was it exported "
                            f"with another problem or formulation? see -f)")
    return name


def _highs_raw(path: Path, lines: list[str], names) -> SolutionFile:
    found = SolutionFile(format="highs")
    if len(lines) > 1:
        found.status = lines[1].strip().lower()
    in_columns = False
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text.startswith("#"):
            in_columns = text.lower().startswith("# columns")
            if text.lower().startswith(("# dual solution", "# basis")):
                break
            continue
        tokens = text.split()
        if not in_columns:
            if len(tokens) == 2 and tokens[0].lower() == "objective":
                found.objective = _value(path, number, tokens[1])
            elif len(tokens) == 2 and tokens[0].lower() == "objective_bound":
                found.bound = _finite(_value(path, number, tokens[1]))
            continue
        if len(tokens) != 2:
            raise ScheduleError(f"{path}: line {number}: expected 'name value', got '{_clip(text)}'")
        name = _known(path, number, tokens[0], names)
        found.values[name] = _value(path, number, tokens[1])
    return found


def _highs_pretty(path: Path, lines: list[str], names) -> SolutionFile:
    found = SolutionFile(format="highs-pretty", precision=1e-5)
    section = None
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        low = text.lower()
        if low in ("columns", "rows"):
            section = low
            continue
        if low.startswith("model status:"):
            found.status = low.split(":", 1)[1].strip()
            continue
        if low.startswith("objective value:"):
            found.objective = _value(path, number, text.split(":", 1)[1].strip())
            continue
        if low.startswith("objective bound:"):
            found.bound = _finite(_value(path, number, text.split(":", 1)[1].strip()))
            continue
        if section != "columns" or not text or low.startswith("index"):
            continue
        tokens = text.split()
        # index [status] lower upper primal [dual] type name: the numbers are lower, upper,
        # primal (and dual); the last two tokens are the type and the name.
        numbers = [t for t in tokens[1:-2] if _NUMBER.match(t)]
        if len(numbers) < 3:
            raise ScheduleError(f"{path}: line {number}: no primal value in '{_clip(text)}'")
        name = _known(path, number, tokens[-1], names)
        found.values[name] = _value(path, number, numbers[2])
    return found


def _name_value(path: Path, lines: list[str], names) -> SolutionFile:
    found = SolutionFile()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        low = text.lower()
        if not text:
            continue
        if text.startswith("#"):
            if "objective value" in low and "=" in text:
                found.objective = _value(path, number, text.split("=", 1)[1].strip())
            continue
        if low.startswith("solution status:"):
            found.format, found.status = "scip", low.split(":", 1)[1].strip()
            continue
        if low.startswith("objective value:"):
            found.objective = _value(path, number, text.split(":", 1)[1].strip())
            continue
        if " - objective value " in low:
            found.format = "cbc"
            found.status = low.split(" - ", 1)[0].strip()
            found.objective = _value(path, number, text.rsplit(" ", 1)[1])
            continue
        tokens = text.split()
        if found.format == "cbc":
            if len(tokens) < 3:
                raise ScheduleError(f"{path}: line {number}: expected 'index name value', got '{_clip(text)}'")
            tokens = tokens[1:]
        if len(tokens) < 2:
            raise ScheduleError(f"{path}: line {number}: expected 'name value', got '{_clip(text)}'")
        name = _known(path, number, tokens[0], names)
        found.values[name] = _value(path, number, tokens[1])
    return found


def _cplex_xml(path: Path, text: str, names) -> SolutionFile:
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ScheduleError(f"{path}: malformed XML: {exc}") from None
    found = SolutionFile(format="cplex-xml")
    header = root.find("header")
    if header is not None:
        status = header.get("solutionStatusString")
        found.status = status.lower() if status else None
        if header.get("objectiveValue") is not None:
            found.objective = _value(path, None, header.get("objectiveValue"))
    for element in root.iter("variable"):
        name, value = element.get("name"), element.get("value")
        if name is None or value is None:
            raise ScheduleError(f"{path}: a <variable> without name or value")
        name = _known(path, None, name, names)
        found.values[name] = _value(path, None, value)
    return found
