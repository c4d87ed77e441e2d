"""Running parts: serially, or on any ``concurrent.futures.Executor`` through ``submit``/``result``.

:func:`run_parts` is the only place where an executor is used. It needs nothing but
``executor.submit(solve_part, payload)`` and ``future.result()``, read in the order the
parts were submitted, so any executor with that interface runs parts: a
``ProcessPoolExecutor``, a Dask ``client.get_executor()``, a Ray or MPI pool. It never
uses ``concurrent.futures.as_completed``, which does not work with Dask's futures
(dask/distributed issue #3695); results come back in the order of the parts, whichever
finished first.

:func:`make_executor` turns the words a user types (``--executor process``) into one;
:func:`executor_for` is what a decomposition method uses: the same executors, except that
process pools are kept and reused by later runs in this process (starting worker
processes costs more than most parts).

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
>>> parse_executor("dask://scheduler:8786")
'tcp://scheduler:8786'
"""

from __future__ import annotations

import atexit
import contextlib
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from schedkit.reductions.budget import GRACE
from schedkit.reductions.parts import Part, part_result, solve_here, solve_part
from schedkit.errors import SchedkitError
from schedkit.lifeline import end_with
from schedkit.problem import Problem
from schedkit.schedule import Result

#: The words :func:`make_executor` understands.
EXECUTORS = ("serial", "process", "process:N", "dask", "dask:N", "dask://HOST:PORT")

#: Seconds to wait for a Dask scheduler named by ``dask://HOST:PORT`` (the environment
#: variable ``SCHEDKIT_DASK_TIMEOUT`` overrides it).
DASK_TIMEOUT = 10.0

#: Modules the process pools' fork server imports once, so that each worker starts warm.
PRELOAD = ["schedkit.reductions.parts", "schedkit.heuristics", "schedkit.formulations",
           "schedkit.decompositions"]

OnProgress = Callable[[int, int], object]


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity, where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def run_parts(parts: Sequence[Part], executor: Executor | None = None,
              progress: OnProgress | None = None, *, deadline: float | None = None,
              workers: int = 1, whole: Problem | None = None) -> list[Result]:
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
    deadline : float, optional
        A wall-clock time (``time.time()``) by which every part must end. The parts share
        the time: each gets, when it starts, the time left divided by the waves of
        ``workers`` parts still to run, its own included (:func:`~schedkit.reductions.parts.time_limit`;
        in this process, one part a wave). A part whose answer has not
        come :data:`~schedkit.reductions.budget.GRACE` seconds after the deadline is given
        up (cancelled where it has not started) and has a result without a schedule.
    workers : int
        How many parts the executor runs at once.
    whole : Problem, optional
        The problem the caller validates the combined schedule on: a part run in this
        process whose own problem (:attr:`~schedkit.reductions.parts.Part.local`) is that
        very object is not validated twice (on 10,000 tasks, a validation takes as long as
        a heuristic's schedule).

    Returns
    -------
    list of Result
        One per part: from an executor, rebuilt from the plain data :func:`solve_part`
        returned; in this process, the method's own (the same results).

    Raises
    ------
    PartError
        The first part (in order) that failed; the parts not yet started are cancelled.
    """
    total = len(parts)
    at_once = 1 if executor is None else max(1, workers)
    if deadline is not None:  # part k starts with the parts after it still to run
        parts = [part.timed(deadline, math.ceil((total - k) / at_once)) for k, part in enumerate(parts)]
    if progress is not None:
        progress(0, total)
    answers: list[dict | Result] = []
    if executor is None:
        for part in parts:  # (its own Problem and Result: no copy through plain data)
            answers.append(solve_here(part.payload(here=True), part.local, whole is None or part.local is not whole))
            if progress is not None:
                progress(len(answers), total)
    else:
        futures = [executor.submit(solve_part, part.payload()) for part in parts]
        try:
            for part, future in zip(parts, futures):  # submission order; never as_completed (dask #3695)
                answers.append(_answer(part, future, deadline, executor))
                if progress is not None:
                    progress(len(answers), total)
        except BaseException as exc:
            for future in futures:
                future.cancel()
            lost = _lost(executor, exc, total - len(answers))
            if lost is not None:
                raise lost from None
            raise
    return [answer if isinstance(answer, Result) else part_result(answer) for answer in answers]


def _answer(part: Part, future: Future, deadline: float | None, executor: Executor | None = None) -> dict | Result:
    """The answer of ``future``; after the deadline (and :data:`GRACE`), the part's late result.

    An executor with a ``check()`` (a Dask cluster, whose lost workers leave a part waiting
    for ever) is checked every :data:`CHECK_SECONDS` while the part waits.
    """
    check = getattr(executor, "check", None)
    while True:
        left = None if deadline is None else max(0.0, deadline + GRACE - time.time())
        try:
            return future.result(timeout=left if check is None or left is not None and left <= CHECK_SECONDS
                                 else CHECK_SECONDS)
        except FutureTimeout:
            if left is not None and left <= CHECK_SECONDS or check is None:
                # A running process cannot be stopped from here: its own time limit ends it.
                future.cancel()
                return part.late("no answer by the time limit")
            check()


#: Seconds between looks at a cluster while a part waits (see ``DaskExecutor.check``).
CHECK_SECONDS = 1.0


def _lost(executor: Executor, exc: BaseException, left: int) -> SchedkitError | None:
    """The one-line error of an executor that lost what runs the parts (``None``: another failure).

    A process pool whose worker was killed (the out-of-memory killer) is broken; a Dask
    cluster says what it lost (``DaskExecutor.loss``).
    """
    if isinstance(exc, SchedkitError) and str(exc).startswith("executor "):
        why = str(exc).partition(": ")[2]
    elif isinstance(exc, BrokenExecutor):
        why = "a worker process died (killed, as by the out-of-memory killer?)"
    else:
        why = getattr(executor, "loss", lambda _: None)(exc)
    if why is None:
        return None
    name = getattr(executor, "label", None) or f"process:{getattr(executor, '_max_workers', '?')}"
    return SchedkitError(f"executor '{name}': {why}; {left} part{'' if left == 1 else 's'} lost")


def parse_executor(spec: str) -> int | str | None:
    """Check an executor's name without starting anything.

    Returns ``None`` for ``serial``, the number of worker processes for ``process`` and
    ``process:N``, and for Dask the scheduler's address (``tcp://HOST:PORT``), or
    ``local:N`` for a local cluster of N workers; raises the one-line error
    :func:`make_executor` would raise otherwise.

    Examples
    --------
    >>> parse_executor("serial"), parse_executor("process:3"), parse_executor("dask:2")
    (None, 3, 'local:2')
    >>> parse_executor("threads")
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: unknown executor 'threads' (known: serial, process, process:N, dask, dask:N, dask://HOST:PORT)
    """
    word = spec.strip()
    if word == "serial":
        return None
    if word in ("process", "dask"):
        count = usable_cores()
    elif word.startswith(("process:", "dask:")) and not word.startswith("dask://"):
        text = word.partition(":")[2]
        if not text.isdigit() or int(text) < 1:
            raise SchedkitError(f"executor '{spec}': the number of workers must be a whole number >= 1")
        count = int(text)
    elif word.startswith("dask://"):
        host, _, port = word[len("dask://"):].rpartition(":")
        if not host or not port.isdigit():
            raise SchedkitError(f"executor '{spec}': a Dask scheduler is named dask://HOST:PORT")
        return f"tcp://{host}:{port}"
    else:
        raise SchedkitError(f"unknown executor '{spec}' (known: {', '.join(EXECUTORS)})")
    return count if word.startswith("process") else f"local:{count}"


def bounded_executor(spec: str, threads: int | None) -> str:
    """``spec`` with at most ``threads`` workers (a method's ``threads`` option); a
    scheduler's address and ``serial`` are left as they are.

    Examples
    --------
    >>> bounded_executor("process:8", 2), bounded_executor("dask:1", 4), bounded_executor("serial", 2)
    ('process:2', 'dask:1', 'serial')
    >>> bounded_executor("process", None)
    'process'
    """
    target = parse_executor(spec)
    if threads is None or target is None or (isinstance(target, str) and not target.startswith("local:")):
        return spec
    count = target if isinstance(target, int) else int(target.partition(":")[2])
    kind = "process" if isinstance(target, int) else "dask"
    return f"{kind}:{min(count, threads)}"


def executor_workers(executor: Executor | None) -> int:
    """How many parts ``executor`` runs at once (1 for ``None``: this process).

    Examples
    --------
    >>> executor_workers(None)
    1
    """
    if executor is None:
        return 1
    count = getattr(executor, "_max_workers", None)  # a ProcessPoolExecutor's
    if count is None and hasattr(executor, "workers"):
        count = executor.workers()
    return max(1, count or 1)


def make_executor(spec: str = "serial", timeout: float | None = None) -> Executor | None:
    """The executor a user names, or ``None`` for serial runs.

    Parameters
    ----------
    spec : str
        ``serial``: ``None`` (:func:`run_parts` solves the parts in this process).
        ``process``: a ``ProcessPoolExecutor`` with one worker per core this process may
        use (:func:`usable_cores`); ``process:N``: with ``N`` workers. Workers are started
        by the ``forkserver`` method where the platform has it (never ``fork``: a solver's
        threads do not survive it), else ``spawn``. ``dask``: a Dask ``LocalCluster`` of
        one single-threaded worker process per usable core (``dask:N``: N workers), closed
        with the executor; ``dask://HOST:PORT``: the scheduler at that address, whose
        workers must have schedkit installed (needs the ``dask`` extra).
    timeout : float, optional
        Seconds to wait for a Dask scheduler (default :data:`DASK_TIMEOUT`).

    Returns
    -------
    concurrent.futures.Executor or None
        An executor is a context manager: the caller closes it (``with make_executor(s) or
        contextlib.nullcontext() as executor: ...``).
    """
    target = parse_executor(spec)
    if target is None:
        return None
    if isinstance(target, int):
        return _process_pool(target)
    from schedkit.reductions.dask import DaskExecutor

    if target.startswith("local:"):
        return DaskExecutor(workers=int(target.partition(":")[2]), label=spec)
    return DaskExecutor(address=target, timeout=_dask_timeout() if timeout is None else timeout,
                        label=spec)


_POOLS: dict[int, ProcessPoolExecutor] = {}


@atexit.register
def _shut_pools() -> None:
    # Before the interpreter tears down its modules, or the pools' threads complain.
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


def discard_pools() -> None:
    """Stop the kept process pools now, the parts their workers run abandoned: after Ctrl-C,
    leaving would otherwise wait for each running part to reach its own time limit."""
    for pool in _POOLS.values():
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
    _POOLS.clear()


@contextlib.contextmanager
def executor_for(spec: str) -> Iterator[Executor | None]:
    """The executor ``spec`` names, for one decomposition run (a context manager).

    As :func:`make_executor`, except that a process pool is kept after the run and reused
    by the next run that asks for as many workers (a pool that broke is replaced), and that
    the parts run in this process (``None``, the same results) when worker processes could
    not start (:func:`workers_can_start`); a Dask client and its local cluster are closed
    at the end of the run.
    """
    target = parse_executor(spec)
    if target is None or (isinstance(target, int) and not workers_can_start()):
        yield None
    elif isinstance(target, int):
        pool = _POOLS.get(target)
        if pool is None or getattr(pool, "_broken", False) or getattr(pool, "_shutdown_thread", False):
            pool = _POOLS[target] = _process_pool(target)
        yield pool
    else:
        with make_executor(spec) as executor:
            yield executor


def workers_can_start() -> bool:
    """Whether worker processes can start from this program.

    A worker started by ``forkserver`` or ``spawn`` imports the main script again: a script
    that does its work without an ``if __name__ == "__main__":`` guard would run it again in
    every worker, which fails. Such a script (run as ``python script.py``, its text without
    the guard) gets its parts run in its own process instead; an interactive session,
    ``python -m``, pytest and guarded scripts get worker processes.

    Examples
    --------
    >>> workers_can_start()       # doctests run under a guarded runner
    True
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None:
        return True
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return True
    return "__main__" in text


def _process_pool(workers: int) -> ProcessPoolExecutor:
    # (each worker ends with this process: killed outright, or gone by ``os._exit``, it
    # could not stop them, and they would wait forever on their queue)
    return ProcessPoolExecutor(max_workers=workers, mp_context=_process_context(), initializer=end_with,
                               initargs=(os.getpid(),))


def _process_context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _dask_timeout() -> float:
    text = os.environ.get("SCHEDKIT_DASK_TIMEOUT")
    try:
        return float(text) if text else DASK_TIMEOUT
    except ValueError:
        raise SchedkitError(f"SCHEDKIT_DASK_TIMEOUT={text!r} is not a number of seconds") from None
