"""What this machine has: the memory free, whether what a few bytes of input ask for fits it,
and the cycle collector held while large tables are made.

A problem file of a few hundred bytes can ask for a workload of 10^12 inputs or a random
graph of 10^9 tasks. Sizes like these are checked against the memory free before anything
is allocated, so that they end in one line naming the item rather than in the kernel's
out-of-memory killer.

Examples
--------
>>> ensure_fits("tasks: 10 tasks", 1e3, memory=2**30)
>>> ensure_fits("tasks: 10**9 tasks", 1e12, memory=16 * 2**30)
Traceback (most recent call last):
...
schedkit.errors.ProblemError: tasks: 10**9 tasks: about 931.3 GB of memory, more than half of the 16.0 GB free
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager

from schedkit.errors import ProblemError

__all__ = ["available_memory", "ensure_fits", "paused_gc"]

#: Share of the free memory one request may take: the rest is for the operating system,
#: the solvers' workers and the peaks of what comes next.
MEMORY_SHARE = 0.5


def available_memory() -> int | None:
    """Bytes of memory free for this process (``MemAvailable``), ``None`` when unknown."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def ensure_fits(what: str, needed: float, error: type[Exception] = ProblemError,
                memory: int | None = None) -> None:
    """Raise ``error`` naming ``what`` when ``needed`` bytes are more than :data:`MEMORY_SHARE`
    of the memory free (``memory``, by default :func:`available_memory`; unknown: no check)."""
    free = available_memory() if memory is None else memory
    if free is not None and needed > MEMORY_SHARE * free:
        raise error(f"{what}: about {needed / 2**30:.1f} GB of memory, more than half of the "
                    f"{free / 2**30:.1f} GB free")


@contextmanager
def paused_gc():
    """Hold the cycle collector while many rows are made: rows hold no cycles, and on a
    schedule of 300,000 transfers its full passes took three quarters of making them.

    Examples
    --------
    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
