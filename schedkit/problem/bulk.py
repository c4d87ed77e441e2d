"""Loading a large problem's edges in bulk: the checks of ``ProblemSpec`` on columns.

A file of 60,000 tasks has about 1.8 million edges, the bulk of its 120 MB. Validated as
pydantic models one by one (a Python number check per size, a model per edge), then
checked by name in Python, they took 8 of its 10 seconds of loading and a gigabyte
of memory. Here the edges, and only they, take a fast path:

- :func:`read_json` parses the file with a hook that keeps each plain edge row
  ``{"src": S, "dst": D, "size": X}`` (or without ``size``) in three machine arrays (the
  ids of its names, its size) and leaves a marker in its place: no dict, tuple or str per
  row (the names are the ids' keys, once each);
- :func:`fast_spec` validates everything but the edges as before (pydantic, the model's
  checks), then the edges on columns: names known (one look-up per name, not per row),
  sizes finite and non-negative, no task depending on itself, no edge given twice, no
  cycle (numpy); and stores them as an :class:`~schedkit.problem.edge_table.EdgeTable`.

The fast path never reports an error itself: any row out of the ordinary (another key,
a size given as a string, a ``transfer_times`` map), any check that fails and any file
under :data:`BULK_FROM` edges answers ``None``, and the caller takes the full path from
the start, which makes every check and names the first offending item in the very
words it always did. A valid file gives the same spec either way (tested).

Examples
--------
>>> data = {"devices": [{"name": "d"}], "tasks": [{"name": n, "work": 1} for n in "abc"],
...         "edges": [{"src": "a", "dst": "b", "size": 2}, {"src": "b", "dst": "c"}]}
>>> spec = fast_spec(data, least=0)
>>> type(spec.edges).__name__, [(e.src, e.dst, e.size) for e in spec.edges]
('EdgeTable', [('a', 'b', 2.0), ('b', 'c', None)])
>>> fast_spec({**data, "edges": [{"src": "a", "dst": "a"}]}, least=0) is None  # the full path names it
True
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from schedkit.problem.dag import acyclic, repeated
from schedkit.problem.edge_table import EdgeTable
from schedkit.problem.reading import parse_json, read_text
from schedkit.problem.spec import FORMAT, ProblemSpec, checked_spec

__all__ = ["BULK_FROM", "Rows", "load_json", "read_json", "fast_spec"]

#: Fewer edges than this take the full path: the fast one saves nothing worth a second way.
BULK_FROM = 2000

_LARGEST_FLOAT = int(sys.float_info.max)
_NUMBERS = {float, int}
_NAN = math.nan


class _Row:
    """What :func:`read_json` leaves in place of an edge row it kept in its :class:`Rows`:
    no mapping, number or string, so that no model takes one found anywhere else."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<edge row>"


ROW = _Row()


class Rows:
    """The edge rows :func:`read_json` kept, as columns: per row, its two names (as ids
    into ``names``, in the order first met) and its size (NaN: none given)."""

    __slots__ = ("names", "src", "dst", "size")

    def __init__(self):
        self.names: dict[str, int] = {}
        self.src = array("q")
        self.dst = array("q")
        self.size = array("d")

    def __len__(self) -> int:
        return len(self.size)

    def hook(self):
        """The ``object_pairs_hook`` keeping plain edge rows here (a closure over bound
        methods: it runs once per object of the file, 1.9 million times at 60,000 tasks)."""
        ids, names = self.names.setdefault, self.names
        add_src, add_dst, add_size = self.src.append, self.dst.append, self.size.append

        def hook(pairs: list) -> Any:
            count = len(pairs)
            if count == 3 or count == 2:
                (k0, src), (k1, dst) = pairs[0], pairs[1]
                if k0 == "src" and k1 == "dst" and src.__class__ is str and dst.__class__ is str:
                    if count == 2:
                        size = _NAN  # none given: the source's output_size
                    else:  # a float but NaN, or an int that a float holds exactly; else a dict
                        k2, size = pairs[2]
                        if k2 != "size" or not (size.__class__ is float and size == size
                                                or size.__class__ is int and -2**53 <= size <= 2**53):
                            size = None
                    if size is not None:
                        add_src(ids(src, len(names)))
                        add_dst(ids(dst, len(names)))
                        add_size(size)
                        return ROW
            table = dict(pairs)
            if len(table) != count:
                raise ValueError("duplicate key")  # parse_json names it
            return table

        return hook


def load_json(path: str | Path) -> ProblemSpec:
    """Load and validate a JSON problem file, its edges in bulk where they are plain rows.

    The text is dropped once parsed, and the parsed data once checked: 120 MB and more at
    60,000 tasks. When the fast path declines, the file is read again and checked in full
    (:func:`~schedkit.problem.spec.checked_spec`), which names any error.

    Examples
    --------
    >>> load_json("examples/topcuoglu2002.json").tasks[0].name
    'n1'
    """
    source = str(path)
    text = read_text(path)
    try:
        data, rows = read_json(text)
    except Exception:  # noqa: BLE001 - malformed, or a key given twice: parse_json names it
        data, rows = parse_json(text, source), ()
    del text
    if rows:
        spec = fast_spec(data, rows)
        if spec is not None:
            return spec
        data = rows = None
        data = parse_json(read_text(path), source)  # the rows as dicts, for the full path
    return fast_spec(data) or checked_spec(data, source)


def read_json(text: str) -> tuple[Any, Rows]:
    """JSON ``text`` as Python data, each plain edge row kept in the :class:`Rows` and
    left as :data:`ROW` in its place.

    Any error (malformed JSON, a key given twice) raises; the caller then reads the text
    with :func:`~schedkit.problem.reading.parse_json`, which names it.

    Examples
    --------
    >>> data, rows = read_json('{"edges": [{"src": "a", "dst": "b", "size": 1.5}, {"src": "b", "dst": "a", "x": 1}]}')
    >>> data, rows.names, rows.src.tolist(), rows.size.tolist()
    ({'edges': [<edge row>, {'src': 'b', 'dst': 'a', 'x': 1}]}, {'a': 0, 'b': 1}, [0], [1.5])
    """
    rows = Rows()
    return json.loads(text, object_pairs_hook=rows.hook()), rows


def fast_spec(data: Any, rows: Rows | None = None, least: int | None = None) -> ProblemSpec | None:
    """``data`` as a :class:`~schedkit.problem.spec.ProblemSpec` with its edges checked in
    bulk, or ``None``: take the full path (see the module).

    ``rows``: the rows :func:`read_json` kept (each of them must be among the edges: one
    met elsewhere is no edge row). ``least``: fewer edges than this answer ``None``
    (:data:`BULK_FROM` by default).
    """
    if not isinstance(data, dict) or data.get("format", FORMAT) != FORMAT:
        return None
    edges = data.get("edges")
    if not isinstance(edges, list) or not edges or len(edges) < (BULK_FROM if least is None else least):
        return None
    try:
        columns = _columns(edges, rows or Rows())
        if columns is None:
            return None
        spec = ProblemSpec.model_validate({**data, "edges": []})
        table = _edge_table(*columns, [t.name for t in spec.tasks])
    except Exception:  # noqa: BLE001 - the full path reports it, in its own words
        return None
    if table is None:
        return None
    spec.__dict__["edges"] = table  # frozen: set once, before anyone holds the spec
    return spec


def _columns(edges: list, rows: Rows) -> tuple | None:
    """The edges as ``(names, src, dst, size)``: names by id, the ids of each edge's two
    ends, its size (NaN: not given); ``None`` when a row is not plain."""
    kinds = set(map(type, edges))
    if kinds == {_Row}:
        if len(edges) != len(rows):
            return None  # a kept row was met outside the edges
        size = np.frombuffer(rows.size, dtype=np.float64)
        if np.isinf(size).any() or (size < 0).any():
            return None
        return (list(rows.names), np.frombuffer(rows.src, dtype=np.int64),
                np.frombuffer(rows.dst, dtype=np.int64), size)
    if not kinds <= {_Row, dict} or sum(r.__class__ is _Row for r in edges) != len(rows):
        return None
    # Rows as dicts (Python data, or a file's rows in another key order): one by one.
    kept = list(rows.names)
    ids: dict[str, int] = {}
    src, dst, sizes = [], [], []
    k = 0
    for row in edges:
        if row.__class__ is _Row:
            a, b, size = kept[rows.src[k]], kept[rows.dst[k]], rows.size[k]
            size = None if size != size else size
            k += 1
        else:
            size = row.get("size")
            if len(row) != 2 + ("size" in row) or "src" not in row or "dst" not in row or \
                    ("size" in row and size.__class__ not in _NUMBERS):
                return None  # another key, or a size that is null, a string, a bool, a map
            a, b = row["src"], row["dst"]
        src.append(ids.setdefault(a, len(ids)))
        dst.append(ids.setdefault(b, len(ids)))
        sizes.append(size)
    size = _sizes(sizes)
    if size is None:
        return None
    return list(ids), np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), size


def _edge_table(names: list, src: np.ndarray, dst: np.ndarray, size: np.ndarray, tasks: list[str]):
    """The checks ``ProblemSpec`` makes on its edges, on columns (ends ``names[src]``,
    ``names[dst]``); an :class:`EdgeTable`, or ``None`` when one fails."""
    index = {name: k for k, name in enumerate(tasks)}
    # per name met, its task (-1: none of that name; an empty name, a number)
    task_of = np.fromiter((index.get(name, -1) for name in names), dtype=np.int64, count=len(names))
    src, dst = task_of[src], task_of[dst]
    if (src < 0).any() or (dst < 0).any() or (src == dst).any():
        return None
    n = len(tasks)
    if repeated(src * n + dst) or not acyclic(src, dst, n):
        return None
    kind = np.int32 if n < 2**31 else np.int64
    return EdgeTable(tasks, src.astype(kind), dst.astype(kind), np.array(size, dtype=np.float64))


def _sizes(sizes: list) -> np.ndarray | None:
    """The sizes as floats (NaN: not given), or ``None`` when one is not a finite number
    at least 0 (as ``NonNegative`` reads it: ``float()`` of an int or float, not a bool)."""
    kinds = set(map(type, sizes))
    if not kinds <= {float, int, type(None)}:
        return None
    if int in kinds and any(abs(s) > _LARGEST_FLOAT for s in sizes if s.__class__ is int):
        return None  # the full path says it is no finite number
    given = None
    if type(None) in kinds:
        given = np.fromiter((s is not None for s in sizes), dtype=bool, count=len(sizes))
        sizes = [_NAN if s is None else s for s in sizes]
    try:
        size = np.array(sizes, dtype=np.float64)
    except (OverflowError, ValueError, TypeError):
        return None
    values = size if given is None else size[given]
    if not (np.isfinite(values).all() and (values >= 0).all()):
        return None
    return size
