"""Ctrl-C and SIGTERM during a run: a solver stops, and the best schedule so far is kept.

Python turns Ctrl-C (SIGINT) into a :class:`KeyboardInterrupt` at the next bytecode. A
solver running in C++ (HiGHS, CP-SAT's wait) would then be torn down inside a callback,
losing its incumbent. So a solver's wait runs inside :func:`deferred`: there the signal
only records itself (:func:`received`) and asks the solver to stop; the solver returns its
best schedule, and :meth:`schedkit.methods.Method.result` raises
:class:`schedkit.errors.Interrupted` carrying it (a ``KeyboardInterrupt``: a Python
caller's interrupt still propagates).

SIGTERM kills a Python process at once by default, before any ``finally`` runs (a
half-written file stays behind). The command line installs :func:`handled`, under which
SIGTERM is raised like Ctrl-C; its exit status is then ``128 + 15``. A library caller
keeps its own SIGTERM disposition: :func:`deferred` takes over only the handlers that
raise (``signal.default_int_handler`` and :func:`handled`'s).

Examples
--------
>>> import os, signal
>>> with handled():
...     try:
...         os.kill(os.getpid(), signal.SIGINT)   # (SIGTERM alike)
...         import time; time.sleep(1)
...     except KeyboardInterrupt:
...         print("stopped by", signal.Signals(received()).name)
stopped by SIGINT
>>> clear()
>>> with deferred(lambda: print("solver asked to stop")):
...     os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(0.1)
solver asked to stop
>>> take() == signal.SIGINT, received()
(True, None)
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

__all__ = ["SIGNALS", "received", "take", "clear", "scope", "handled", "deferred", "exit_status"]

#: The signals a run stops on.
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_lock = threading.Lock()
_received: int | None = None


def _record(signum: int) -> None:
    global _received
    with _lock:
        _received = _received or signum


def received() -> int | None:
    """The signal that asked this process to stop (``None``: none since :func:`clear`)."""
    return _received


def take() -> int | None:
    """:func:`received`, and forget it (whoever raises the interrupt takes it)."""
    global _received
    with _lock:
        signum, _received = _received, None
    return signum


def clear() -> None:
    """Forget any signal received (a new run begins)."""
    take()


_runs = threading.local()


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Within: a method runs (:meth:`~schedkit.methods.Method.result`). The outermost run of a
    thread begins by forgetting a signal that no run took (a ``run()`` called directly).

    Examples
    --------
    >>> _record(signal.SIGINT)       # left behind by a run nobody took it from
    >>> with scope():
    ...     print(received())
    None
    """
    depth = getattr(_runs, "depth", 0)
    if depth == 0:
        clear()
    _runs.depth = depth + 1
    try:
        yield
    finally:
        _runs.depth = depth


def _raise(signum: int, frame) -> None:
    _record(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise ``KeyboardInterrupt`` (recorded, see :func:`received`),
    so that every ``finally`` runs. The command line runs each command inside it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear()
    previous = {sig: signal.signal(sig, _raise) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def deferred(stop: Callable[[], None]) -> Iterator[None]:
    """Within: a signal that would raise ``KeyboardInterrupt`` calls ``stop()`` instead and is
    recorded (:func:`received`); the caller returns its best answer, and
    :meth:`~schedkit.methods.Method.result` raises the interrupt with it.

    Only in the main thread (where Python runs signal handlers); elsewhere a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def later(signum: int, frame) -> None:
        _record(signum)
        stop()

    previous = {}
    for sig in SIGNALS:
        handler = signal.getsignal(sig)
        if handler is signal.default_int_handler or handler is _raise:
            previous[sig] = signal.signal(sig, later)
    try:
        if received() is not None:  # (it came just before: stop at once)
            stop()
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_status(signum: int | None) -> int:
    """The command line's exit status after the signal ``signum``: ``128 + signum``
    (130 after Ctrl-C, 143 after SIGTERM), as shells report a process killed by it.

    Examples
    --------
    >>> exit_status(signal.SIGINT), exit_status(signal.SIGTERM), exit_status(None)
    (130, 143, 130)
    """
    return 128 + int(signum or signal.SIGINT)
