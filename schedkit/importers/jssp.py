"""The standard job-shop format (OR-Library, JSPLIB) as a ``schedkit/v1`` problem.

Each operation becomes a task ``j{job}o{k}`` that runs only on its machine
``m{machine}``; the operations of a job form a chain (edges without data).

Examples
--------
>>> data = parse_jssp("2 2\\n0 3 1 2\\n1 4 0 1\\n", name="toy")
>>> [t["name"] for t in data["tasks"]]
['j0o0', 'j0o1', 'j1o0', 'j1o1']
>>> data["tasks"][2]["durations"]
{'m1': 4}
"""

from __future__ import annotations

from pathlib import Path

from schedkit.errors import ProblemError, expect
from schedkit.importers.base import Importer, register_importer
from schedkit.problem.reading import read_text

__all__ = ["Jssp", "parse_jssp", "load_jssp"]


@register_importer("jssp")
class Jssp(Importer):
    """Standard job-shop text (OR-Library, JSPLIB): one task per operation, on its machine.

    The file holds a line ``jobs machines``, then one line of ``machine duration`` pairs
    per job (``#`` starts a comment). The problem is named after the file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "toy.txt"
    >>> _ = src.write_text("1 2\\n0 3 1 2\\n")
    >>> data = Jssp().read(src)
    >>> data["name"], [e["dst"] for e in data["edges"]]
    ('toy', ['j0o1'])
    """

    suffixes = (".txt", ".jss")

    def read(self, path: str | Path, **options) -> dict:
        """Read a job-shop file (no options); see :func:`load_jssp`."""
        if options:
            raise ProblemError(f"jssp import takes no option '{next(iter(options))}'")
        return load_jssp(path)


def parse_jssp(text: str, name: str = "jssp", source: str | None = None) -> dict:
    """Parse job-shop text (``n m`` then one line of ``machine duration`` pairs per job).

    Every job has one operation per machine (``m`` pairs): a line with more or fewer is an
    error naming the job, not a smaller or larger problem read silently.

    Parameters
    ----------
    text : str
        The file's content.
    name : str
        Problem name.
    source : str, optional
        The prefix of error messages (the file); ``name`` by default.

    Returns
    -------
    dict
        ``schedkit/v1`` problem data: devices ``m0, m1, ...``, tasks ``j{job}o{k}``.

    Examples
    --------
    >>> parse_jssp("1 1\\n0 5\\n", name="one")["tasks"]
    [{'name': 'j0o0', 'durations': {'m0': 5}}]
    >>> parse_jssp("2 1\\n0 5\\n", name="short")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: short: header says 2 jobs, found 1 job lines
    >>> parse_jssp("1 2\\n0 5\\n", name="few")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: few: job 0: 1 operation, expected 2 (one per machine)
    >>> parse_jssp("1 2\\n0 5 0 3\\n", name="twice")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: twice: job 0: machine 0 visited twice (one operation per machine)
    """
    where = source or name
    expect(text, str, "job-shop text (str)", ProblemError)
    lines = [ln.split("#", 1)[0].split() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise ProblemError(f"{where}: empty job-shop file")
    try:
        header = [int(v) for v in lines[0]]
    except ValueError:
        raise ProblemError(f"{where}: the first line must hold two integers 'jobs machines'") from None
    if len(header) != 2 or min(header) < 1:
        raise ProblemError(f"{where}: the first line must hold two positive integers 'jobs machines'")
    jobs, machines = header
    if len(lines) - 1 != jobs:
        raise ProblemError(f"{where}: header says {jobs} jobs, found {len(lines) - 1} job lines")
    tasks, edges = [], []
    for j, row in enumerate(lines[1:]):
        try:
            values = [int(v) for v in row]
        except ValueError:
            raise ProblemError(f"{where}: job {j}: values must be integers") from None
        if len(values) % 2:
            raise ProblemError(f"{where}: job {j}: expected 'machine duration' pairs")
        if len(values) != 2 * machines:
            count = len(values) // 2
            raise ProblemError(f"{where}: job {j}: {count} operation{'s' if count != 1 else ''}, "
                               f"expected {machines} (one per machine)")
        visited = set()
        for k in range(len(values) // 2):
            machine, duration = values[2 * k], values[2 * k + 1]
            if not 0 <= machine < machines:
                raise ProblemError(f"{where}: job {j}: machine {machine} outside 0..{machines - 1}")
            if machine in visited:  # (the standard format: every job visits every machine once)
                raise ProblemError(f"{where}: job {j}: machine {machine} visited twice (one operation per machine)")
            visited.add(machine)
            if duration < 0:
                raise ProblemError(f"{where}: job {j}: negative duration {duration}")
            tasks.append({"name": f"j{j}o{k}", "durations": {f"m{machine}": duration}})
            if k:
                edges.append({"src": f"j{j}o{k - 1}", "dst": f"j{j}o{k}", "size": 0})
    return {"format": "schedkit/v1", "name": name,
            "devices": [{"name": f"m{m}"} for m in range(machines)],
            "tasks": tasks, "edges": edges}


def load_jssp(path: str | Path) -> dict:
    """Read a job-shop file; the problem is named after the file.

    Parameters
    ----------
    path : str or Path
        The job-shop file.

    Returns
    -------
    dict
        ``schedkit/v1`` problem data (see :func:`parse_jssp`).

    Examples
    --------
    >>> load_jssp("no/such/file.txt")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: no/such/file.txt: no such file
    """
    return parse_jssp(read_text(path), name=Path(path).stem, source=str(path))
