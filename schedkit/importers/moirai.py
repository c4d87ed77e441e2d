"""MOIRAI's device-placement tables (Zhang et al., 2023) as ``schedkit/v1`` problems.

The tables come with the MOIRAI code (``moirai-placement/moirai``, ``sample-data/``). A table
(first sheet of a legacy ``.xls`` file) has a header row, then one row per task in
topological order, the first a virtual source. Tasks and data flows share one id space.
Columns: ``task`` (id), ``c_task`` (ids of the flows leaving it), ``dir_succ`` (successor
task ids, in the order of ``c_task``), ``dir_succ_add`` (flows and successors together),
``p0 ..`` (time on each device), ``pc00 ..`` (time of each flow on each directed channel
``k1 -> k2``, a comma list when there are several flows), ``mi`` (memory of the task) and
``m0 ..`` (device capacities, first data row only). Reading stops at the first empty
``task`` cell. The problem has

- devices ``d0 ...`` with their capacities, one one-way link per ordered pair, so that each
  direction is its own channel ``dA->dB`` as in MOIRAI (MOIRAI also lets a device send one
  and receive one transfer at a time: a limit on ports, a formulation's choice, not data);
- one task ``t{id}`` per row with its times and memory;
- one edge per (task, successor); a flow's edge gets ``transfer_times`` for every directed
  pair, the table's times exactly, and a positive ``size``; an edge without a flow, or whose
  times are all 0, has size 0 (a plain precedence).

When every time is one per-channel factor times a per-flow size (true of the four real
models, to the rounding of the stored times), the slowest channel gets bandwidth 1, the
others ``1 / factor``, and each size is the flow's time on the slowest channel; otherwise
every link has bandwidth 1 and a size is the flow's largest time.

Examples
--------
>>> header = ["task", "c_task", "dir_succ", "dir_succ_add", "p0", "p1",
...           "pc00", "pc01", "pc10", "pc11", "mi", "m0", "m1"]
>>> rows = [[0.0, "", 1.0, 1.0, 0.0, 0.0, "", "", "", "", 0.0, 10.0, 8.0],
...         [1.0, "2,3", "4,5", "2,3,4,5", 3.0, 5.0, "0,0", "2,4", "1,2", "0,0", 6.0, "", ""],
...         [4.0, "", "", "", 2.0, 1.0, "", "", "", "", 2.0, "", ""],
...         [5.0, "", "", "", 2.0, 2.0, "", "", "", "", 0.0, "", ""]]
>>> data = parse_moirai([header] + rows, name="toy")
>>> [(e["src"], e["dst"], e["size"]) for e in data["edges"]]
[('t0', 't1', 0), ('t1', 't4', 2), ('t1', 't5', 4)]
>>> data["edges"][2]["transfer_times"], [link["bandwidth"] for link in data["links"]]
({'d0->d1': 4, 'd1->d0': 2}, [1, 2.0])
"""

from __future__ import annotations

import io
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from schedkit.errors import ProblemError, quoted
from schedkit.importers.base import Importer, register_importer
from schedkit.problem.reading import file_path

__all__ = ["Moirai", "parse_moirai", "load_moirai"]

#: Slack of the factor x size test beyond the tables' rounding, relative to the flow's size:
#: the factors are estimated from rounded times (about 2e-6 off on the shipped tables).
_FACTOR_SLACK = 1e-5


@register_importer("moirai")
class Moirai(Importer):
    """MOIRAI placement table: task times per device, flow times per channel, memory.

    Examples
    --------
    >>> data = Moirai().read("data/moirai/example-1.xls")
    >>> data["name"], len(data["tasks"]), len(data["devices"]), len(data["links"])
    ('example-1', 14, 3, 6)
    """

    suffixes = (".xls",)
    extra = "moirai"

    def read(self, path: str | Path, **options: Any) -> dict:
        """Read a MOIRAI table (no options); see :func:`load_moirai`."""
        if options:
            raise ProblemError(f"moirai import takes no option '{next(iter(options))}'")
        return load_moirai(path)


def load_moirai(path: str | Path) -> dict:
    """Read the first sheet of a MOIRAI ``.xls`` file (needs ``xlrd``; see :func:`parse_moirai`).

    The problem is named after the file; errors name the file.

    Examples
    --------
    >>> data = load_moirai("data/moirai/GoogLeNet.xls")
    >>> data["name"], len(data["tasks"]), data["devices"][0]
    ('GoogLeNet', 141, {'name': 'd0', 'memory': 495848000000})
    """
    xlrd = Moirai().need("xlrd")
    path = file_path(path)
    if not path.exists():
        raise ProblemError(f"{path}: no such file")
    try:
        # xlrd writes warnings to stdout unless given a log file; a corrupt file can raise
        # more than XLRDError (struct, index and assertion errors), so every failure of the
        # open is reported as an unreadable file.
        book = xlrd.open_workbook(str(path), logfile=io.StringIO(), on_demand=True)
        sheet = book.sheet_by_index(0)
        table = [[_cell(xlrd, cell) for cell in sheet.row(r)] for r in range(sheet.nrows)]
    except Exception as exc:  # noqa: BLE001 - see above
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ProblemError(f"{path}: not a readable .xls file ({reason})") from None
    return parse_moirai(table, name=path.stem, source=str(path))


def _cell(xlrd: Any, cell: Any) -> float | str:
    """A cell as a float, a stripped string or '' (booleans and errors as their text)."""
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        return cell.value
    if cell.ctype == xlrd.XL_CELL_TEXT:
        return cell.value.strip()
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if cell.value else "FALSE"
    return ""


def parse_moirai(table: list[list], name: str = "moirai", *, source: str | None = None) -> dict:
    """Turn a MOIRAI table into ``schedkit/v1`` problem data (see the module documentation).

    Parameters
    ----------
    table : list of list
        The sheet's rows, the header first; a cell is a number, a string or ``''``.
    name : str
        Problem name.
    source : str, optional
        Prefix of error messages (the file); ``name`` by default.

    Returns
    -------
    dict
        ``schedkit/v1`` problem data.

    Raises
    ------
    ProblemError
        A header without the ``p``, ``pc`` or ``m`` columns, a cell that is not a number or an
        id list, a ``pc`` list whose length is not that of ``c_task``, or a flow that joins no
        (task, successor) pair (one line, naming the row and column or the flow).

    Examples
    --------
    >>> parse_moirai([["task", "c_task", "dir_succ", "dir_succ_add", "p0", "mi"]], name="bad")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: bad: header: missing column 'pc00'
    """
    where = source or name
    if not table:
        raise ProblemError(f"{where}: empty sheet")
    col = _columns(table[0], where)
    k_count = len(col["p"])
    rows = []
    for r, raw in enumerate(table[1:], start=2):  # spreadsheet row numbers, header = 1
        raw = list(raw) + [""] * (len(table[0]) - len(raw))
        if raw[col["task"]] == "":
            break
        rows.append(_row(raw, r, col, k_count, where))
    if not rows:
        raise ProblemError(f"{where}: no task rows below the header")
    first = list(table[1]) + [""] * (len(table[0]) - len(table[1]))
    memory = [_number(first[c], f"{where}: row 2, column m{k}") for k, c in enumerate(col["m"])]
    edges = _edges(rows, where)
    devices = [f"d{k}" for k in range(k_count)]
    pairs = [(a, b) for a in range(k_count) for b in range(k_count) if a != b]
    # A flow moves data when one of its times is positive; all-zero flows are precedences.
    moving = [e for e in edges if e["times"] and any(e["times"][p][0] > 0 for p in pairs)]
    bandwidth, sizes = _bandwidths([e["times"] for e in moving], pairs)
    for edge, size in zip(moving, sizes):
        edge["size"] = size
    out_edges = []
    for edge in edges:
        out: dict[str, Any] = {"src": f"t{edge['src']}", "dst": f"t{edge['dst']}", "size": 0}
        if "size" in edge:
            out["size"] = _plain(edge["size"])
            out["transfer_times"] = {f"d{a}->d{b}": _plain(edge["times"][a, b][0])
                                     for a, b in pairs}
        out_edges.append(out)
    tasks = []
    for row in rows:
        task: dict[str, Any] = {"name": f"t{row['id']}",
                                "durations": {d: _plain(t) for d, t in zip(devices, row["p"])}}
        if row["mi"]:
            task["memory"] = _plain(row["mi"])
        tasks.append(task)
    return {"format": "schedkit/v1", "name": name,
            "devices": [{"name": d, "memory": _plain(m)} for d, m in zip(devices, memory)],
            "links": [{"src": f"d{a}", "dst": f"d{b}", "bandwidth": bandwidth[a, b],
                       "bidirectional": False} for a, b in pairs],
            "tasks": tasks, "edges": out_edges}


def _columns(header: list, where: str) -> dict[str, Any]:
    """Column indices by role: fixed names, ``p`` and ``m`` per device, ``pc`` per pair."""
    names = [str(h).strip() for h in header]
    index = {}
    for c, label in enumerate(names):
        if label and label in index:
            raise ProblemError(f"{where}: header: column '{label}' appears twice")
        index[label] = c
    k_count = sum(1 for label in names if re.fullmatch(r"p\d+", label))
    fixed = ["task", "c_task", "dir_succ", "dir_succ_add"]
    for label in fixed + [f"p{k}" for k in range(max(k_count, 1))]:
        if label not in index:
            raise ProblemError(f"{where}: header: missing column '{label}'")
    # pc names are ambiguous beyond 10 devices (pc110 is 1->10 or 11->0), so the pc columns
    # are taken in header order, which must be the table's row-major order k1, k2.
    pc_names = [label for label in names if label.startswith("pc")]
    expected = [f"pc{a}{b}" for a in range(k_count) for b in range(k_count)]
    for label in expected + ["mi"] + [f"m{k}" for k in range(k_count)]:
        if label not in index:
            raise ProblemError(f"{where}: header: missing column '{label}'")
    if pc_names != expected:
        raise ProblemError(f"{where}: header: expected the pc columns {expected[0]} .. "
                           f"{expected[-1]} for {k_count} device(s) (p0 .. p{k_count - 1}), in "
                           f"this order; got {', '.join(pc_names)}")
    pc_at = [c for c, label in enumerate(names) if label.startswith("pc")]
    col: dict[str, Any] = {label: index[label] for label in fixed + ["mi"]}
    col["p"] = [index[f"p{k}"] for k in range(k_count)]
    col["m"] = [index[f"m{k}"] for k in range(k_count)]
    col["pc"] = {(a, b): pc_at[a * k_count + b] for a in range(k_count) for b in range(k_count)}
    return col


def _row(raw: list, r: int, col: dict, k_count: int, where: str) -> dict[str, Any]:
    """One task row, its cells checked; ``pc`` maps each pair to the times of the row's flows."""
    at = f"{where}: row {r}"
    row = {"r": r, "id": _ids(raw[col["task"]], f"{at}, column task", single=True)[0],
           "flows": _ids(raw[col["c_task"]], f"{at}, column c_task"),
           "succs": _ids(raw[col["dir_succ"]], f"{at}, column dir_succ"),
           "add": _ids(raw[col["dir_succ_add"]], f"{at}, column dir_succ_add"),
           "p": [_number(raw[c], f"{at}, column p{k}") for k, c in enumerate(col["p"])],
           "mi": _number(raw[col["mi"]], f"{at}, column mi"), "pc": {}}
    for (a, b), c in col["pc"].items():
        label = f"{at}, column pc{a}{b}"
        cell = raw[c]
        texts = [] if cell == "" else [cell] if isinstance(cell, float) else str(cell).split(",")
        if len(texts) != len(row["flows"]):
            raise ProblemError(f"{label}: {len(texts)} time(s) for the {len(row['flows'])} "
                               f"flow(s) of c_task")
        row["pc"][a, b] = [(_number(t, label), t) for t in texts]
    return row


def _ids(cell: Any, where: str, single: bool = False) -> list[int]:
    """An id cell: a number or a comma list of whole numbers ('' is no id)."""
    if cell == "" and not single:
        return []
    texts = [cell] if isinstance(cell, float) else str(cell).split(",")
    if single and len(texts) != 1:
        raise ProblemError(f"{where}: expected one id, got {quoted(cell)}")
    ids = []
    for text in texts:
        value = _number(text, where)
        if not float(value).is_integer():
            raise ProblemError(f"{where}: expected whole-number ids, got {quoted(cell)}")
        ids.append(int(value))
    return ids


def _number(value: Any, where: str) -> float:
    """A finite number >= 0 from a numeric or text cell."""
    try:
        number = value if isinstance(value, float) else float(str(value).strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise ProblemError(f"{where}: expected a number >= 0, got {quoted(value)}")
    return number


def _edges(rows: list[dict], where: str) -> list[dict]:
    """Edges (task, successor), each with its flow's times by pair or None; the flows are
    matched to successors by position within a row and checked against dir_succ_add."""
    tasks: dict[int, int] = {}
    for row in rows:
        if row["id"] in tasks:
            raise ProblemError(f"{where}: row {row['r']}: task {row['id']} repeats row "
                               f"{tasks[row['id']]}")
        tasks[row["id"]] = row["r"]
    flows: dict[int, int] = {}
    edges = []
    for row in rows:
        at = f"{where}: row {row['r']} (task {row['id']})"
        fl, succs = row["flows"], row["succs"]
        for q in fl:
            if q in tasks:
                raise ProblemError(f"{at}: flow {q} has the id of a task")
            if q in flows:
                raise ProblemError(f"{at}: flow {q} also leaves the task of row {flows[q]}")
            flows[q] = row["r"]
        if len(fl) > len(succs):
            raise ProblemError(f"{at}: flow {fl[len(succs)]} joins no edge (dir_succ lists "
                               f"{len(succs)} successor(s))")
        if fl and len(fl) < len(succs):
            raise ProblemError(f"{at}: successor {succs[len(fl)]} has no flow (c_task lists "
                               f"{len(fl)} flow(s) for {len(succs)} successors)")
        extra = sorted(set(row["add"]) - set(fl) - set(succs))
        missing = [q for q in fl + succs if q not in row["add"]]
        if extra:
            raise ProblemError(f"{at}: dir_succ_add lists {extra[0]}, neither a flow nor a "
                               f"successor of the task")
        if missing:
            raise ProblemError(f"{at}: {missing[0]} is missing from dir_succ_add")
        seen = set()
        for k, j in enumerate(succs):
            what = f"flow {fl[k]} joins task {row['id']} to {j}" if fl else f"successor {j}"
            if j not in tasks:
                raise ProblemError(f"{at}: {what}, which is not a task")
            if j in seen:
                raise ProblemError(f"{at}: successor {j} is listed twice")
            seen.add(j)
            times = {pair: values[k] for pair, values in row["pc"].items()} if fl else None
            edges.append({"src": row["id"], "dst": j, "times": times})
    return edges


def _quantum(flows: list[dict], pairs: list) -> float:
    """The finest decimal step of the stored positive times (the tables round them)."""
    texts = [repr(value) if isinstance(text, float) else str(text).strip()
             for times in flows for value, text in (times[p] for p in pairs) if value > 0]
    steps = [Decimal(text).as_tuple().exponent for text in texts]
    return 10.0 ** min(steps) if steps else 0.0


def _bandwidths(flows: list[dict], pairs: list) -> tuple[dict, list]:
    """Bandwidth per directed pair and the size of each flow (``flows`` map a pair to
    ``(time, stored text)``).

    Factor x size when every time fits it to within the rounding of the stored times plus
    :data:`_FACTOR_SLACK` (see the module documentation), else bandwidth 1 and the flow's
    largest time as its size.
    """
    times = [{p: t[p][0] for p in pairs} for t in flows]
    totals = {p: sum(t[p] for t in times) for p in pairs}
    if times and all(totals.values()):
        # The slowest channel (largest total) is the reference: bandwidth 1, and a flow's
        # size is its time there, the factor of every other channel its share of that total.
        ref = max(pairs, key=totals.__getitem__)
        factor = {p: totals[p] / totals[ref] for p in pairs}
        sizes = [t[ref] for t in times]
        quantum = _quantum(flows, pairs)
        if all(s > 0 and abs(t[p] - factor[p] * s) <= quantum + _FACTOR_SLACK * s
               for t, s in zip(times, sizes) for p in pairs):
            return {p: 1 if p == ref else float(f"{1 / factor[p]:.9g}") for p in pairs}, sizes
    return {p: 1 for p in pairs}, [max(t.values()) for t in times]


def _plain(value: float) -> float | int:
    """An integral float as an int (a shorter, exact file)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
