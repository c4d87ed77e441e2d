"""A worker process ends as soon as the process it works for is gone.

A process killed outright (SIGKILL, the out-of-memory killer, a runner's timeout, or an
``os._exit`` that skips the ``atexit`` handlers) cannot stop its workers. A CP-SAT worker
would search on to its time limit; a process pool's workers wait forever, since each holds
the writing end of the queue it reads, and the ``forkserver`` that started them, and
``multiprocessing``'s resource tracker, wait for them. :func:`end_with`, called in the
worker, starts a thread that looks every :data:`WATCH_SECONDS` whether that process still
runs, and ends the worker when it does not.

Examples
--------
>>> import os
>>> alive(os.getpid()), alive(2**22 + 1)        # (no process has a pid above the kernel's limit)
(True, False)
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["WATCH_SECONDS", "alive", "end_with"]

#: Seconds between a worker's looks at whether the process it works for still runs.
WATCH_SECONDS = 0.2


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # (someone else's process: it exists)
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):  # (no /proc: the signal's answer stands)
        return True


def end_with(pid: int) -> None:
    """End this process (exit status 1) once process ``pid`` is gone.

    When ``pid`` is this process's parent, the test is whether it still is (a process
    whose parent dies is adopted at once, before the dead parent is reaped); otherwise
    (a pool worker started by a ``forkserver``, whose parent outlives the caller) whether
    ``pid`` still runs (:func:`alive`).
    """
    parent = os.getppid() == pid

    def watch() -> None:
        while (os.getppid() == pid) if parent else alive(pid):
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="schedkit-lifeline", daemon=True).start()
