"""The ``schedkit-schedule/v1`` schedule: what every method returns.

Examples
--------
>>> s = Schedule(problem="tiny", method="manual", status="heuristic",
...              tasks=[TaskRun(task="a", device="gpu", start=0, end=1.5)])
>>> s.makespan
1.5
>>> Schedule.from_json(s.to_json()).tasks[0].device
'gpu'
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Literal

import numpy as np

from pydantic import BaseModel, ConfigDict, WrapSerializer, WrapValidator, model_validator

from schedkit.errors import SchedkitError, ScheduleError, expect
from schedkit.numerics import OPTIMAL_GAP, closed
from schedkit.atomic import atomic_output, check_output, write_text_atomic
from schedkit.schedule.batched import is_batched, throughput
from schedkit.schedule.rows import TaskRun, Transfer, unchecked, unchecked_rows
from schedkit.schedule.rows_json import Rows, text_chunks
from schedkit.schedule.transfer_table import TransferTable

__all__ = ["Schedule", "Status", "TaskRun", "Transfer", "TransferTable", "unchecked", "unchecked_rows"]

FORMAT = "schedkit-schedule/v1"
Status = Literal["optimal", "feasible", "infeasible", "no_solution", "heuristic"]

# A TransferTable is kept as it is (its rows are the engine's own numbers, and a list of them
# would cost 25 times its memory); it is dumped as the list of rows it stands for.
TransferRows = Annotated[
    list[Transfer],
    WrapValidator(lambda value, inner: value if isinstance(value, TransferTable) else inner(value)),
    WrapSerializer(lambda value, inner: inner(list(value) if isinstance(value, TransferTable) else value)),
]


def latest_ends(transfers) -> list[float]:
    """The ends of ``transfers`` that a makespan takes the largest of: of a table, its
    largest end, read from its column; of rows, every row's end.

    Examples
    --------
    >>> latest_ends([]), latest_ends(TransferTable([0], [1], [0], [1], [1.0], [2.5], ["a", "b"], ["u", "v"]))
    ([], [2.5])
    """
    if not len(transfers):
        return []
    if isinstance(transfers, TransferTable) and np.isfinite(transfers.end).all():
        return [float(transfers.end.max())]  # (with NaN, max depends on the order: the rows')
    return [t.end for t in transfers]


class Schedule(BaseModel):
    """A schedule of a problem, with how it was obtained and how good it is proven to be."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)
    format: Literal["schedkit-schedule/v1"] = FORMAT
    problem: str
    method: str
    status: Status
    makespan: float | None = None
    """Latest end of any task or transfer; filled in from the rows when omitted."""
    objective: float | None = None
    bound: float | None = None
    """Best proven lower bound on the objective, when known."""
    solve_seconds: float | None = None
    formulation: dict | None = None
    """The formulation the schedule was judged by, as formulation data (name and blocks);
    ``schedkit validate`` judges it by the same blocks."""
    message: str | None = None
    """Why the method answered as it did, when it has more to say than the status."""
    phases: list[dict] | None = None
    """How a method that runs others (``auto``) spent its time: one entry per phase, with
    its ``phase``, ``method``, ``seconds``, ``makespan``, ``bound`` and ``note``."""
    tasks: list[TaskRun] = []
    transfers: TransferRows = []
    """The transfer rows: a list, or (from a timing engine) a :class:`TransferTable` equal to it."""

    @model_validator(mode="after")
    def _fill_makespan(self) -> Schedule:
        if self.makespan is None and self.tasks:
            self.makespan = max([r.end for r in self.tasks] + latest_ends(self.transfers))
        if self.objective is None and self.makespan is not None:
            self.objective = self.makespan
        return self

    @property
    def gap(self) -> float | None:
        """Relative gap between the makespan and the bound, when both are known."""
        if self.makespan is None or self.bound is None:
            return None
        if self.makespan <= 0:
            return 0.0
        return max(0.0, (self.makespan - self.bound) / self.makespan)

    def placement(self) -> dict[str, str]:
        """Task name to device name."""
        return {r.task: r.device for r in self.tasks}

    # ------------------------------------------------------------------ files
    def to_json(self, indent: int | None = 1) -> str:
        """The schedule as ``schedkit-schedule/v1`` JSON text: with ``indent``, one key a line
        and one row of ``tasks``, ``transfers``, ... a line (``None``: all on one line).

        Examples
        --------
        >>> s = Schedule(problem="p", method="m", status="heuristic", makespan=2.0,
        ...              tasks=[TaskRun(task="a", device="d", start=0, end=2)])
        >>> print(s.to_json())
        {
         "format": "schedkit-schedule/v1",
         "problem": "p",
         "method": "m",
         "status": "heuristic",
         "makespan": 2.0,
         "objective": 2.0,
         "tasks": [
          {"task": "a", "device": "d", "start": 0.0, "end": 2.0}
         ],
         "transfers": []
        }
        """
        return "".join(self._json_parts(indent))

    def _json_parts(self, indent: int | None):
        """The text of :meth:`to_json`, in pieces: a file takes them one after another, so
        that the text of millions of rows is never held whole."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude={"tasks", "transfers"})
        # Rows as their own field values, one at a time: model_dump of 300,000 rows took
        # seconds and held a dict per row; a row's fields are plain numbers, names and lists.
        data["tasks"] = Rows(self.tasks)
        data["transfers"] = Rows(self.transfers)
        if indent is None:
            yield json.dumps({key: list(item) if isinstance(item, Rows) else item for key, item in data.items()})
            return
        # Rows are written by json's C encoder (it serves only indent=None): with indent=1
        # the pure-Python one took 13 s for a schedule of 10,000 tasks and 300,000 transfers.
        pad = " " * indent
        yield "{\n"
        for k, (key, item) in enumerate(data.items()):
            yield (",\n" if k else "") + f"{pad}{json.dumps(key)}: "
            if isinstance(item, Rows) and len(item.rows):
                between = f",\n{pad * 2}"
                yield f"[\n{pad * 2}"
                for k, chunk in enumerate(text_chunks(item.rows, between)):
                    yield between + chunk if k else chunk
                yield f"\n{pad}]"
            elif isinstance(item, Rows):
                yield "[]"
            elif isinstance(item, list) and item and all(isinstance(row, dict) for row in item):
                rows = f",\n{pad * 2}".join(json.dumps(row) for row in item)
                yield f"[\n{pad * 2}{rows}\n{pad}]"
            else:
                yield json.dumps(item)
        yield "\n}"

    @classmethod
    def from_json(cls, text: str, source: str = "schedule") -> Schedule:
        """Parse schedule JSON text, with a one-line error when malformed (a key given twice in
        one mapping included, as in problem files: JSON would keep the last).

        Examples
        --------
        >>> Schedule.from_json('{"problem": "p", "method": "m", "status": "heuristic", "method": "x"}')
        Traceback (most recent call last):
        ...
        schedkit.errors.ScheduleError: schedule: malformed JSON: duplicate key 'method'
        """
        from schedkit.problem.reading import parse_json

        if not isinstance(text, (str, bytes, bytearray)):
            raise ScheduleError(f"{source}: expected JSON text, not {type(text).__name__}")
        return cls._parsed(parse_json(text, source, ScheduleError), source)

    def write(self, path: str | Path) -> None:
        """Write the schedule atomically: YAML for a ``.yaml``/``.yml`` path, JSON otherwise."""
        expect(path, (str, Path), "a file path (str or pathlib.Path)", ScheduleError)
        try:  # (a folder, a missing folder or no permission: one line naming the path, as the CLI says it)
            check_output(path)
        except SchedkitError as exc:
            raise ScheduleError(str(exc)) from None
        if Path(path).suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = self.model_dump(by_alias=True, exclude_none=True)
            write_text_atomic(path, yaml.safe_dump(data, sort_keys=False))
        else:
            with atomic_output(path) as partial, open(partial, "w") as handle:
                handle.writelines(self._json_parts(1))
                handle.write("\n")

    @classmethod
    def load(cls, path: str | Path) -> Schedule:
        """Read a schedule file (JSON, or YAML by suffix), with a one-line error when malformed."""
        from schedkit.problem.reading import read_data, read_text

        if Path(str(path)).suffix.lower() in (".yaml", ".yml"):
            return cls._parsed(read_data(path, ScheduleError), str(path))
        return cls.from_json(read_text(path, ScheduleError), source=str(path))

    @classmethod
    def _parsed(cls, data, source: str) -> Schedule:
        # (a problem file given for the schedule is named by its format, not by 50 missing fields)
        from schedkit.problem.reading import parse_format

        return parse_format(data, cls, FORMAT, source, "'problem', 'method' and 'status'", error=ScheduleError)

    # ------------------------------------------------------------------ checks
    def violations(self, problem, blocks=None) -> list[str]:
        """Every way this schedule breaks ``problem`` (empty when valid).

        ``blocks`` defaults to the formulation the schedule records, never weaker than the
        problem's own semantics unless it is a registered preset (see
        :func:`schedkit.validate.verdict`, the one judgement ``validate`` and ``report`` show).
        """
        from schedkit.validate import violations

        return violations(problem, self, blocks)

    def validate(self, problem, blocks=None) -> Schedule:
        """Raise :class:`~schedkit.errors.InvalidScheduleError` unless valid; return ``self``."""
        from schedkit.validate import validate

        validate(problem, self, blocks)
        return self

    def summary(self, time_unit: str | None = None) -> str:
        """One line: status, makespan, bound, gap and time.

        Numbers are shown with up to 10 significant digits; the bound of an ``optimal``
        schedule, proven up to the solver's gap (:data:`~schedkit.numerics.OPTIMAL_GAP`),
        is shown as the makespan it meets (the file keeps the exact bound). ``time_unit``
        (the problem's, when it records one: ``ms``) follows the makespan and the bound.

        Examples
        --------
        >>> s = Schedule(problem="ft06", method="milp", status="optimal", bound=54.99991,
        ...              tasks=[TaskRun(task="a", device="m", start=0, end=55)])
        >>> s.summary()
        'milp on ft06: status=optimal makespan=55 bound=55 gap=0.00%'
        >>> s.summary("ms")
        'milp on ft06: status=optimal makespan=55ms bound=55ms gap=0.00%'
        """
        unit = time_unit or ""
        parts = [f"status={self.status}"]
        if self.makespan is not None:
            parts.append(f"makespan={self.makespan:.10g}{unit}")
            if is_batched(self) and self.makespan > 0:  # DiviML's measure: inputs per time unit
                parts.append(f"throughput={throughput(self):.6g}")
        if self.bound is not None and math.isfinite(self.bound):
            bound = self.bound
            if self.status == "optimal" and closed(self.makespan, bound, OPTIMAL_GAP):
                bound = self.makespan
            parts.append(f"bound={bound:.10g}{unit}")
            if self.gap is not None:
                parts.append(f"gap={100 * self.gap:.2f}%")
        if self.solve_seconds is not None:
            parts.append(f"time={self.solve_seconds:.2f}s")
        return f"{self.method} on {self.problem}: " + " ".join(parts)
