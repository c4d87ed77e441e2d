"""A schedule's rows as JSON text: what ``json.dumps`` of each row's dump gives, made fast.

A schedule of 60,000 tasks has 1.8 million transfer rows; ``model_dump`` then
``json.dumps`` per row took seconds per 300,000. :class:`Rows` yields each row's
``model_dump(by_alias=True, exclude_none=True)`` from the row's own field values, and
:func:`encoded` its JSON text: a row of the common shape (names, finite floats, a list
of channel names) by a template with each name escaped once, any other row by json's C
encoder (made once, not once a row). Both give the text of ``json.dumps``, character
for character (tests/schedule/test_rows_json.py).

Examples
--------
>>> from schedkit.schedule import TaskRun, Transfer
>>> rows = [TaskRun(task="a", device="gpu", start=0, end=1.5),
...         Transfer(src="a", dst="b", **{"from": "gpu"}, to="cpu", start=1.5, end=2.0, route=["gpu->cpu"])]
>>> for text in encoded(rows):
...     print(text)
{"task": "a", "device": "gpu", "start": 0.0, "end": 1.5}
{"src": "a", "dst": "b", "from": "gpu", "to": "cpu", "start": 1.5, "end": 2.0, "route": ["gpu->cpu"]}
"""

from __future__ import annotations

import json
from itertools import islice
from json import encoder

import numpy as np

from schedkit.schedule.transfer_table import TransferTable

_TASK_KEYS = ("task", "device", "start", "end", "inputs")
_TRANSFER_KEYS = ("src", "dst", "from_", "to", "start", "end", "route")


class Rows:
    """The rows of a schedule as ``model_dump(by_alias=True, exclude_none=True)`` gives
    them, one at a time from each row's own field values.

    Examples
    --------
    >>> from schedkit.schedule import TaskRun
    >>> list(Rows([TaskRun(task="a", device="d", start=0, end=1)]))
    [{'task': 'a', 'device': 'd', 'start': 0.0, 'end': 1.0}]
    """

    __slots__ = ("rows",)

    def __init__(self, rows: list):
        self.rows = rows

    def __iter__(self):
        for row in self.rows:
            fields = row.__dict__
            name = type(row).__name__
            if name == "Transfer" and tuple(fields) == _TRANSFER_KEYS:
                yield {("from" if key == "from_" else key): item for key, item in fields.items() if item is not None}
            elif name == "TaskRun" and tuple(fields) == _TASK_KEYS:
                yield {key: item for key, item in fields.items() if item is not None}
            else:  # another row: pydantic's own dump
                yield row.model_dump(by_alias=True, exclude_none=True)


def encoded(rows: list):
    """The JSON text of each row's dump (as :class:`Rows` gives it), as ``json.dumps`` writes it."""
    dumps = _row_encoder()
    names: dict[str, str] = {}
    routes: dict[tuple, str] = {}
    quote = encoder.encode_basestring_ascii
    known = names.get
    number = float.__repr__

    def text(name: str) -> str:
        found = names[name] = quote(name)
        return found

    # The template's shape: names are str, times finite floats (x - x is 0.0 only then).
    for row in rows:
        fields = row.__dict__
        values = tuple(fields.values())
        if len(values) == 7 and type(row).__name__ == "Transfer" and tuple(fields) == _TRANSFER_KEYS:
            a, b, u, v, start, end, route = values
            if (type(a) is str and type(b) is str and type(u) is str and type(v) is str
                    and type(start) is float and type(end) is float and start - start == 0.0 and end - end == 0.0):
                if route is None:
                    tail = "}"
                else:
                    key = tuple(route) if type(route) is list else None
                    tail = routes.get(key)
                    if tail is None and key is not None and all(type(c) is str for c in key):
                        tail = routes[key] = ', "route": [' + ", ".join(map(quote, key)) + "]}"
                if tail is not None:
                    yield (f'{{"src": {known(a) or text(a)}, "dst": {known(b) or text(b)}, '
                           f'"from": {known(u) or text(u)}, "to": {known(v) or text(v)}, '
                           f'"start": {number(start)}, "end": {number(end)}{tail}')
                    continue
        elif len(values) == 5 and type(row).__name__ == "TaskRun" and tuple(fields) == _TASK_KEYS:
            a, u, start, end, inputs = values
            if (inputs is None and type(a) is str and type(u) is str and type(start) is float
                    and type(end) is float and start - start == 0.0 and end - end == 0.0):
                yield (f'{{"task": {known(a) or text(a)}, "device": {known(u) or text(u)}, '
                       f'"start": {number(start)}, "end": {number(end)}}}')
                continue
        yield dumps(next(iter(Rows([row]))))


def _row_encoder():
    """``json.dumps`` for one row after another: json's C encoder made once, not once a row
    (making it was two thirds of ``json.dumps`` on a row)."""
    make = getattr(encoder, "c_make_encoder", None)
    if make is None:  # a Python without json's C accelerator
        return json.dumps
    # json.dumps's own defaults: circular check, ASCII, NaN allowed, ": " and ", ".
    encode = make({}, encoder.JSONEncoder().default, encoder.encode_basestring_ascii, None,
                  ": ", ", ", False, False, True)
    return lambda row: "".join(encode(row, 0))


def text_chunks(rows, between: str, size: int = 4096):
    """The JSON text of ``rows`` (as :func:`encoded` writes each), ``size`` rows a chunk
    joined by ``between``: a file takes the chunks one after another, so that the text of
    millions of rows is never held whole.

    A :class:`~schedkit.schedule.TransferTable` is written from its columns, without a row
    or a dict per transfer: each name is escaped once, each device pair's text made once.

    Examples
    --------
    >>> t = TransferTable([0], [1], [0], [1], [1.5], [2.0], ["a", "b"], ["gpu", "cpu"], {(0, 1): ["gpu->cpu"]})
    >>> list(text_chunks(t, ", ")) == list(text_chunks(list(t), ", ")) == list(encoded(list(t)))
    True
    """
    if isinstance(rows, TransferTable) and np.isfinite(rows.start).all() and np.isfinite(rows.end).all():
        yield from _table_chunks(rows, between, size)
        return
    text = encoded(rows)
    chunk = between.join(islice(text, size))
    while chunk:  # (an encoded row is never empty)
        yield chunk
        chunk = between.join(islice(text, size))


def _table_chunks(table: TransferTable, between: str, size: int):
    """:func:`text_chunks` of a table of finite times: the text :func:`encoded` gives its rows."""
    quote = encoder.encode_basestring_ascii
    names = [quote(name) for name in table.tasks]
    heads = [f'{{"src": {name}, "dst": ' for name in names]
    devices, m = [quote(name) for name in table.devices], max(len(table.devices), 1)
    # A row's text between its names and its times, and after them, depend on its device pair.
    pairs = table.pairs()
    code = np.full(m * m, -1, dtype=np.int64)
    code[[u * m + v for u, v in pairs]] = np.arange(len(pairs))
    mids = [f', "from": {devices[u]}, "to": {devices[v]}, "start": ' for u, v in pairs]
    tails = ["}" if table.routes is None else ', "route": [' + ", ".join(map(quote, table.routes[pair])) + "]}"
             for pair in pairs]
    number = float.__repr__
    for lo in range(0, len(table), size):
        cut = slice(lo, lo + size)
        at = code[table.from_[cut].astype(np.int64) * m + table.to[cut]].tolist()
        starts, which = _texts(table.start[cut])
        yield between.join([f'{heads[i]}{names[j]}{mids[p]}{starts[s]}, "end": {number(e)}{tails[p]}'
                            for i, j, p, s, e in zip(table.src[cut].tolist(), table.dst[cut].tolist(), at,
                                                     which, table.end[cut].tolist())])


def _texts(times: np.ndarray) -> tuple[list[str], list[int]]:
    """The text of each distinct time of ``times``, and where each time's text is.

    A transfer leaves when its source ends: the rows of one source (30 a task in layered
    graphs, listed together) share a start, whose text is made once (a float's text is half
    of a row's time). (-0.0 equals 0.0, yet is written otherwise: then each has its own.)
    """
    if (np.signbit(times) & (times == 0)).any():
        return list(map(float.__repr__, times.tolist())), list(range(len(times)))
    distinct, which = np.unique(times, return_inverse=True)
    return list(map(float.__repr__, distinct.tolist())), which.tolist()
