"""Reading a problem: Python data or a file into a validated :class:`~schedkit.problem.spec.ProblemSpec`.

Large graphs take the bulk path (:mod:`schedkit.problem.bulk`: plain edge rows checked on
arrays); anything unusual, and any error, takes the full path of the spec's own models
(:func:`~schedkit.problem.spec.checked_spec`), which names the item. This module sits above
both, so that neither imports the other's caller.

Examples
--------
>>> parse_spec({"devices": [{"name": "d"}], "tasks": [{"name": "t", "durations": {"e": 1}}]})
Traceback (most recent call last):
...
schedkit.errors.ProblemError: problem: task 't': unknown device 'e'
>>> load_spec("examples/tiny.yaml").edges[0].src
'embed'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedkit.problem.bulk import fast_spec, load_json
from schedkit.problem.reading import read_data
from schedkit.problem.spec import ProblemSpec, checked_spec

__all__ = ["parse_spec", "load_spec"]


def parse_spec(data: Any, source: str = "problem") -> ProblemSpec:
    """Validate Python data as a :class:`~schedkit.problem.spec.ProblemSpec`, raising
    :class:`~schedkit.errors.ProblemError` that names the item.

    Many edges are checked in bulk when every row is plain (else, or on any error, in full).

    Examples
    --------
    >>> parse_spec({"devices": [{"name": "d"}], "tasks": [{"name": "t", "durations": {"d": 1}}]}).tasks[0].name
    't'
    """
    return fast_spec(data) or checked_spec(data, source)


def load_spec(path: str | Path) -> ProblemSpec:
    """Load and validate a problem file (``.json``, ``.yaml`` or ``.yml``).

    A large JSON file's edges are read and checked in bulk (:func:`schedkit.problem.bulk.load_json`).

    Examples
    --------
    >>> load_spec("examples/tiny.yaml").tasks[0].name
    'embed'
    """
    if isinstance(path, (str, Path)) and Path(path).suffix.lower() == ".json":
        return load_json(path)
    return parse_spec(read_data(path), source=str(path))
