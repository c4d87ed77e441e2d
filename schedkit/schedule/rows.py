"""The rows of a schedule: a task on a device (:class:`TaskRun`), data moving between devices
(:class:`Transfer`), and how rows are made in bulk from numbers already checked.

Examples
--------
>>> TaskRun(task="a", device="gpu", start=0, end=1.5).end
1.5
>>> Transfer(src="a", dst="b", **{"from": "gpu"}, to="cpu", start=1.5, end=2.0).from_
'gpu'
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TaskRun(BaseModel):
    """One task placed on a device over ``[start, end)``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    task: str
    device: str
    start: float
    end: float
    inputs: list[int] | None = None
    """With batching: the input indices processed together as one batch."""


class Transfer(BaseModel):
    """Data of edge ``src -> dst`` moving from device ``from`` to device ``to``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)
    src: str
    dst: str
    from_: str = Field(alias="from")
    to: str
    start: float
    end: float
    route: list[str] | None = None
    """The channels the transfer occupies, in order (see :attr:`Problem.route
    <schedkit.problem.Problem.route>`); the validator recomputes it."""


_ALL_FIELDS: dict[type, set] = {}


def unchecked(row: type[BaseModel], values: dict):
    """A row of ``row``'s type from ``values`` that name every field, without pydantic's checks.

    For rows built from the problem's own numbers: like ``model_construct`` without its
    per-field work, a third of its time (a schedule of 10,000 tasks has 230,000 transfers).

    Examples
    --------
    >>> unchecked(TaskRun, {"task": "a", "device": "d", "start": 0.0, "end": 1.0, "inputs": None})
    TaskRun(task='a', device='d', start=0.0, end=1.0, inputs=None)
    """
    made = row.__new__(row)
    object.__setattr__(made, "__dict__", values)
    # One set per row type, shared: it names every field, so pydantic's only change to it
    # (adding a field that is assigned) changes nothing; a set per row was half a row's memory.
    fields = _ALL_FIELDS.get(row)
    if fields is None or len(fields) != len(values):
        fields = _ALL_FIELDS[row] = set(values)
    object.__setattr__(made, "__pydantic_fields_set__", fields)
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made


def unchecked_rows(row: type[BaseModel], values) -> list:
    """:func:`unchecked` rows of ``row``'s type, one per dict of ``values`` (each naming every
    field): the same rows, without a call per row (a schedule may hold millions).

    Examples
    --------
    >>> unchecked_rows(TaskRun, [{"task": "a", "device": "d", "start": 0.0, "end": 1.0, "inputs": None}])
    [TaskRun(task='a', device='d', start=0.0, end=1.0, inputs=None)]
    """
    new, put = row.__new__, object.__setattr__
    out = []
    add = out.append
    fields = _ALL_FIELDS.get(row)
    for data in values:
        if fields is None or len(fields) != len(data):
            fields = _ALL_FIELDS[row] = set(data)
        made = new(row)
        put(made, "__dict__", data)
        put(made, "__pydantic_fields_set__", fields)
        put(made, "__pydantic_extra__", None)
        put(made, "__pydantic_private__", None)
        add(made)
    return out
