"""Loading a large problem's edges in bulk: the checks of ``ProblemSpec`` on columns.

A file of 60,000 tasks has about 1.8 million edges, the bulk of its 120 MB. Validated as
pydantic models one by one (a Python number check per size, a model per edge), then
checked by name in Python, they took 8 of its 10 seconds of loading and a gigabyte
of memory. Here the edges, and only they, take a fast path:

- :func:`read_json` parses the file with a hook that keeps each plain edge row
  ``{"src": S, "dst": D, "size": X}`` (or without ``size``) as a tuple, its names shared
  with every other row that gives them: a third of the memory of a dict per row;
- :func:`fast_spec` validates everything but the edges as before (pydantic, the model's
  checks), then the edges on columns: names known (a dict look-up each, by C-level
  ``map``), sizes finite and non-negative (numpy), no task depending on itself, no edge
  given twice, no cycle; and stores them as an
  :class:`~schedkit.problem.edge_table.EdgeTable`.

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
import sys
from pathlib import Path
from typing import Any

import numpy as np

from schedkit.problem.edge_table import EdgeTable
from schedkit.problem.reading import parse_json, read_text
from schedkit.problem.spec import FORMAT, ProblemSpec, parse_spec

__all__ = ["BULK_FROM", "load_json", "read_json", "fast_spec"]

#: Fewer edges than this take the full path: the fast one saves nothing worth a second way.
BULK_FROM = 2000

_LARGEST_FLOAT = int(sys.float_info.max)
_NUMBERS = {float, int}


def _compacting() -> tuple:
    """The ``object_pairs_hook`` of :func:`read_json`, and a function telling how many rows
    it kept as tuples (a closure: a third cheaper per call than an object's ``__call__``)."""
    share = {}.setdefault  # one str per name, not one per row
    kept = 0

    def hook(pairs: list) -> Any:
        nonlocal kept
        size = len(pairs)
        if size == 3 or size == 2:
            (k0, src), (k1, dst) = pairs[0], pairs[1]
            if k0 == "src" and k1 == "dst" and src.__class__ is str and dst.__class__ is str:
                if size == 2:  # no size given: the source's output_size
                    kept += 1
                    return share(src, src), share(dst, dst), None
                k2, value = pairs[2]
                if k2 == "size" and value.__class__ in _NUMBERS:
                    kept += 1
                    return share(src, src), share(dst, dst), value
        table = dict(pairs)
        if len(table) != size:
            raise ValueError("duplicate key")  # parse_json names it
        return table

    return hook, lambda: kept


def load_json(path: str | Path) -> ProblemSpec:
    """Load and validate a JSON problem file, its edges in bulk where they are plain rows.

    The text is dropped once parsed, and the parsed rows once checked: 120 MB each at
    60,000 tasks. When the fast path declines, the file is read again and checked in full
    (:func:`~schedkit.problem.spec.parse_spec`), which names any error.

    Examples
    --------
    >>> load_json("examples/topcuoglu2002.json").tasks[0].name
    'n1'
    """
    source = str(path)
    text = read_text(path)
    try:
        data, kept = read_json(text)
    except Exception:  # noqa: BLE001 - malformed, or a key given twice: parse_json names it
        data, kept = parse_json(text, source), 0
    del text
    if kept:
        spec = fast_spec(data, kept)
        if spec is not None:
            return spec
        data = None
        data = parse_json(read_text(path), source)  # the rows as dicts, for the full path
    return parse_spec(data, source)


def read_json(text: str) -> tuple[Any, int]:
    """JSON ``text`` as Python data with plain edge rows as ``(src, dst, size)`` tuples
    (``size`` ``None`` where the row gives none), and how many rows it so kept.

    Any error (malformed JSON, a key given twice) raises; the caller then reads the text
    with :func:`~schedkit.problem.reading.parse_json`, which names it.

    Examples
    --------
    >>> read_json('{"edges": [{"src": "a", "dst": "b", "size": 1.5}, {"src": "a", "dst": "b", "x": 1}]}')
    ({'edges': [('a', 'b', 1.5), {'src': 'a', 'dst': 'b', 'x': 1}]}, 1)
    """
    hook, kept = _compacting()
    return json.loads(text, object_pairs_hook=hook), kept()


def fast_spec(data: Any, kept: int = 0, least: int | None = None) -> ProblemSpec | None:
    """``data`` as a :class:`~schedkit.problem.spec.ProblemSpec` with its edges checked in
    bulk, or ``None``: take the full path (see the module).

    ``kept``: how many edge rows :func:`read_json` kept as tuples (every one of them must
    be among the edges: a tuple elsewhere is no row of the file's). ``least``: fewer edges
    than this answer ``None`` (:data:`BULK_FROM` by default).
    """
    if not isinstance(data, dict) or data.get("format", FORMAT) != FORMAT:
        return None
    rows = data.get("edges")
    if not isinstance(rows, list) or not rows or len(rows) < (BULK_FROM if least is None else least):
        return None
    triples = _triples(rows, kept)
    if triples is None:
        return None
    try:
        spec = ProblemSpec.model_validate({**data, "edges": []})
        names = [t.name for t in spec.tasks]
        table = _edge_table(triples, names)
    except Exception:  # noqa: BLE001 - the full path reports it, in its own words
        return None
    if table is None:
        return None
    spec.__dict__["edges"] = table  # frozen: set once, before anyone holds the spec
    return spec


def _triples(rows: list, kept: int) -> list | None:
    """The rows as ``(src, dst, size)``, or ``None`` when one is not a plain row."""
    kinds = set(map(type, rows))
    if kinds == {tuple}:
        return rows if len(rows) == kept else None
    if not kinds <= {tuple, dict} or (tuple in kinds and sum(r.__class__ is tuple for r in rows) != kept):
        return None
    if tuple not in kinds and kept:
        return None
    out = []
    for row in rows:
        if row.__class__ is dict:
            size = row.get("size")
            if len(row) != 2 + ("size" in row) or "src" not in row or "dst" not in row or \
                    ("size" in row and size.__class__ not in _NUMBERS):
                return None  # another key, or a size that is null, a string, a bool, a map
            row = (row["src"], row["dst"], size)
        out.append(row)
    return out


def _edge_table(triples: list, names: list[str]) -> EdgeTable | None:
    """The checks ``ProblemSpec`` makes on its edges, on columns; ``None`` when one fails."""
    srcs, dsts, sizes = zip(*triples)
    index = {name: k for k, name in enumerate(names)}
    try:  # a name no task has (an empty one, a number) or that cannot be a key
        src = np.fromiter(map(index.__getitem__, srcs), dtype=np.int64, count=len(srcs))
        dst = np.fromiter(map(index.__getitem__, dsts), dtype=np.int64, count=len(dsts))
    except (KeyError, TypeError):
        return None
    size = _sizes(sizes)
    if size is None or (src == dst).any():
        return None
    n = len(names)
    if _repeated(src * n + dst) or not _acyclic(src, dst, n):
        return None
    kind = np.int32 if n < 2**31 else np.int64
    return EdgeTable(names, src.astype(kind), dst.astype(kind), size)


def _sizes(sizes: tuple) -> np.ndarray | None:
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
        sizes = [np.nan if s is None else s for s in sizes]
    try:
        size = np.array(sizes, dtype=np.float64)
    except (OverflowError, ValueError, TypeError):
        return None
    values = size if given is None else size[given]
    if not (np.isfinite(values).all() and (values >= 0).all()):
        return None
    return size


def _repeated(keys: np.ndarray) -> bool:
    """Whether a value of ``keys`` occurs twice (sorted and compared with its neighbour:
    ``np.unique`` costs a hundred times more on 1.8 million keys)."""
    keys = np.sort(keys)
    return bool((keys[1:] == keys[:-1]).any())


def _acyclic(src: np.ndarray, dst: np.ndarray, n: int) -> bool:
    """Whether the edges ``src -> dst`` make no cycle (Kahn's algorithm on int lists; a
    file whose edges all go forward in task order has none to look for)."""
    if (src < dst).all():
        return True
    order = np.argsort(src, kind="stable")
    targets = dst[order].tolist()
    bounds = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))).tolist()
    indegree = np.bincount(dst, minlength=n).tolist()
    ready = [i for i in range(n) if not indegree[i]]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in targets[bounds[i]:bounds[i + 1]]:
            indegree[j] -= 1
            if not indegree[j]:
                ready.append(j)
    return done == n
