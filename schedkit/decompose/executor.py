"""Running parts: serially, or on any ``concurrent.futures.Executor`` through ``submit``/``result``.

:func:`run_parts` is the only place where an executor is used. It needs nothing but
``executor.submit(solve_part, payload)`` and ``future.result()``, read in the order the
parts were submitted, so any executor with that interface runs parts: a
``ProcessPoolExecutor``, a Dask ``client.get_executor()``, a Ray or MPI pool. It never
uses ``concurrent.futures.as_completed``, which does not work with Dask's futures
(dask/distributed issue #3695); results come back in the order of the parts, whichever
finished first.

:func:`make_executor` turns the words a user types (``--executor process``) into one.

Examples
--------
>>> from schedkit import Problem
>>> part = Part.of(Problem.load("examples/tiny.yaml"), "heft")
>>> seen = []
>>> [r.status for r in run_parts([part, part], progress=lambda done, total: seen.append(done))]
['heuristic', 'heuristic']
>>> seen
[0, 1, 2]
>>> make_executor("serial") is None
True
>>> make_executor("dask")
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: executor 'dask' is not available yet; use 'serial' or 'process'
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor

from schedkit.decompose.parts import Part, part_result, solve_part
from schedkit.errors import SchedkitError
from schedkit.schedule import Result

#: The words :func:`make_executor` understands.
EXECUTORS = ("serial", "process", "process:N", "dask", "dask://HOST:PORT")

Progress = Callable[[int, int], object]


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity, where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def run_parts(parts: Sequence[Part], executor: Executor | None = None,
              progress: Progress | None = None) -> list[Result]:
    """Solve every part; return their results in the order of ``parts``.

    Parameters
    ----------
    parts : sequence of Part
    executor : concurrent.futures.Executor, optional
        ``None`` (the default): one after the other in this process, deterministic (tests
        and examples use it). Otherwise only ``executor.submit`` and ``future.result()``
        are called; the caller owns the executor and shuts it down.
    progress : callable, optional
        ``progress(done, total)``: called with ``done = 0`` before the first part and after
        each result (in the order of the parts).

    Returns
    -------
    list of Result
        One per part, rebuilt from the plain data :func:`solve_part` returned (the same
        in both modes).

    Raises
    ------
    PartError
        The first part (in order) that failed; the parts not yet started are cancelled.
    """
    payloads = [part.payload() for part in parts]
    total = len(payloads)
    if progress is not None:
        progress(0, total)
    answers: list[dict] = []
    if executor is None:
        for payload in payloads:
            answers.append(solve_part(payload))
            if progress is not None:
                progress(len(answers), total)
    else:
        futures = [executor.submit(solve_part, payload) for payload in payloads]
        try:
            for future in futures:  # submission order; never as_completed (dask #3695)
                answers.append(future.result())
                if progress is not None:
                    progress(len(answers), total)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [part_result(answer) for answer in answers]


def make_executor(spec: str = "serial") -> Executor | None:
    """The executor a user names, or ``None`` for serial runs.

    Parameters
    ----------
    spec : str
        ``serial``: ``None`` (:func:`run_parts` solves the parts in this process).
        ``process``: a ``ProcessPoolExecutor`` with one worker per core this process may
        use (:func:`usable_cores`); ``process:N``: with ``N`` workers. Workers are started
        by the ``forkserver`` method where the platform has it (never ``fork``: a solver's
        threads do not survive it), else ``spawn``. ``dask`` and ``dask://HOST:PORT``: not
        yet available (an error says so).

    Returns
    -------
    concurrent.futures.Executor or None
        An executor is a context manager: the caller closes it (``with make_executor(s) or
        contextlib.nullcontext() as executor: ...``).
    """
    workers = parse_executor(spec)
    if workers is None:
        return None
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def parse_executor(spec: str) -> int | None:
    """Check an executor's name without starting anything: ``None`` for ``serial``, else
    the number of worker processes; the error :func:`make_executor` would raise otherwise.

    Examples
    --------
    >>> parse_executor("serial"), parse_executor("process:3")
    (None, 3)
    >>> parse_executor("threads")
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: unknown executor 'threads' (known: serial, process, process:N, dask, dask://HOST:PORT)
    """
    word = spec.strip()
    if word == "serial":
        return None
    if word == "process":
        return usable_cores()
    if word.startswith("process:"):
        count = word.partition(":")[2]
        if not count.isdigit() or int(count) < 1:
            raise SchedkitError(f"executor '{spec}': the number of processes must be a whole "
                                f"number >= 1")
        return int(count)
    if word == "dask" or word.startswith("dask://"):
        raise SchedkitError(f"executor '{word}' is not available yet; use 'serial' or 'process'")
    raise SchedkitError(f"unknown executor '{spec}' (known: {', '.join(EXECUTORS)})")
