"""Parts on a Dask cluster: a ``LocalCluster`` started for the run, or a running scheduler.

:class:`DaskExecutor` is a ``concurrent.futures.Executor`` that owns a
``distributed.Client`` (and the ``LocalCluster`` it started, if any) and submits through
``client.get_executor()``, so :func:`~schedkit.reductions.executor.run_parts` treats it like
a process pool. Needs the ``dask`` extra (``pip install 'schedkit[dask]'``); a missing
extra, or a scheduler that does not answer in time, is a one-line
:class:`~schedkit.errors.SchedkitError`.

The workers of a remote scheduler must have schedkit (and the plug-ins the parts use)
installed: parts travel as plain data and are solved by name there.

Examples
--------
>>> DaskExecutor(address="tcp://127.0.0.1:9", timeout=0.5, label="dask://127.0.0.1:9")
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: executor 'dask://127.0.0.1:9': no Dask scheduler answered at tcp://127.0.0.1:9 within 0.5 s
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from concurrent.futures import CancelledError, Executor, Future
from typing import Any, Callable

from schedkit.errors import SchedkitError, shorten


def _distributed():
    try:
        import distributed
    except ImportError:
        raise SchedkitError("executor 'dask' needs dask.distributed: pip install 'schedkit[dask]'") from None
    return distributed


def _connect(distributed, address: str, timeout: float):
    """``distributed.Client(address)``, given up after ``timeout`` seconds (and one to spare).

    Dask's own timeout covers the connection, not the handshake: a server that accepts and
    never answers (a web server reading what it takes for a request line) holds the client
    for ever. The client is made in a daemon thread, which a process may leave behind.
    """
    box: dict[str, Any] = {}

    def connect():
        try:
            box["client"] = distributed.Client(address, timeout=timeout)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=connect, name="schedkit-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise TimeoutError(f"no answer from {address} within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["client"]


class DaskExecutor(Executor):
    """A ``concurrent.futures.Executor`` on a Dask cluster.

    Parameters
    ----------
    address : str, optional
        A scheduler's address (``tcp://HOST:PORT``); without one, a ``LocalCluster`` is
        started and closed with the executor.
    workers : int, optional
        Worker processes of the local cluster (one thread each).
    timeout : float
        Seconds to wait for the scheduler at ``address``.
    processes : bool
        Local cluster only: workers in processes (the default) or in threads of this one.
    label : str, optional
        How the user named the executor, for messages.
    """

    def __init__(self, address: str | None = None, workers: int | None = None, timeout: float = 10.0,
                 processes: bool = True, label: str | None = None):
        distributed = _distributed()
        self.cluster = None
        label = self.label = label or ("dask" if address is None else address)
        self._workerless_since: float | None = None
        # (a lost scheduler is this executor's one-line error, not the client's logged traceback)
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        if address is None:
            self._start_local(distributed, workers, processes)
        else:
            try:
                self.client = _connect(distributed, address, timeout)
            except (OSError, TimeoutError) as exc:
                raise SchedkitError(f"executor '{label}': no Dask scheduler answered at {address} "
                                    f"within {timeout:g} s") from exc
            except Exception as exc:  # another service's reply, read as Dask frames, fails anywhere
                raise SchedkitError(f"executor '{label}': what answered at {address} is not a Dask "
                                    f"scheduler ({type(exc).__name__})") from exc
        self._executor = self.client.get_executor(pure=False)

    def _start_local(self, distributed: Any, workers: int | None, processes: bool) -> None:
        """Start a ``LocalCluster`` and its client. One stopped half-way (Ctrl-C, a worker that
        died while it started) is closed here, quietly: left to distributed's exit hook, it
        prints a traceback, and a failure is one line naming the executor."""
        from distributed.deploy.spec import SpecCluster

        before = set(SpecCluster._instances)
        try:
            self.cluster = distributed.LocalCluster(
                n_workers=workers or 1, threads_per_worker=1, processes=processes,
                dashboard_address=":0", silence_logs=logging.CRITICAL,
                **({"preload": [__name__]} if processes else {}))  # (see dask_setup)
            self.client = distributed.Client(self.cluster)
        except BaseException as exc:
            for cluster in set(SpecCluster._instances) - before:
                with contextlib.suppress(BaseException):  # (half started: closing may fail too)
                    cluster.close(timeout=5)
                SpecCluster._instances.discard(cluster)
            self.cluster = None
            if not isinstance(exc, Exception):  # Ctrl-C, SIGTERM: the run's own interrupt
                raise
            raise SchedkitError(f"executor '{self.label}': the local Dask cluster did not start "
                                f"({type(exc).__name__}: {shorten(str(exc).splitlines()[0] if str(exc) else '', 120)})"
                                ) from None

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        """Run ``fn(*args, **kwargs)`` on a worker; a ``concurrent.futures.Future`` of its value."""
        return self._executor.submit(fn, *args, **kwargs)

    def workers(self) -> int:
        """The number of worker threads of the cluster now (each runs one part at a time)."""
        info = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.values()))

    def check(self) -> None:
        """Raise the one-line error of a cluster that can no longer run parts: its scheduler
        is gone, or it has had no worker for :data:`WORKERLESS_SECONDS` (every worker died)."""
        try:
            if self.client.status != "running":  # (lost its scheduler: reconnecting, or closed)
                raise ConnectionError(self.client.status)
            alive = bool(self.client.nthreads())
        except Exception:  # noqa: BLE001 - whatever the client says, the scheduler is not answering
            raise SchedkitError(f"executor '{self.label}': the Dask scheduler is gone") from None
        now = time.monotonic()
        if alive:
            self._workerless_since = None
        elif self._workerless_since is None:
            self._workerless_since = now
        elif now - self._workerless_since > WORKERLESS_SECONDS:
            raise SchedkitError(f"executor '{self.label}': no Dask worker left for {WORKERLESS_SECONDS:g} s "
                                f"(every worker died or left)")

    def loss(self, exc: BaseException) -> str | None:
        """What ``exc``, raised by a part's future, says the cluster lost (``None``: a part's own error)."""
        if type(exc).__name__ == "KilledWorker":
            return ("a Dask worker died while it ran a part (killed, as by the out-of-memory killer?), "
                    "as often as Dask allows")
        if isinstance(exc, CancelledError) or type(exc).__name__ in ("CommClosedError", "FutureCancelledError"):
            try:
                self.check()
            except SchedkitError as lost:
                return str(lost).partition(": ")[2]
            return "the Dask cluster cancelled a part"
        return None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Close the client, and the local cluster if this executor started one."""
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


#: Seconds a cluster may have no worker while parts wait (a restarted worker is back in one or two).
WORKERLESS_SECONDS = 10.0


def dask_setup(worker) -> None:
    """Dask preload of a local cluster's worker processes: Ctrl-C reaches the whole process
    group, and this process (not each worker, with its traceback) stops the run."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
