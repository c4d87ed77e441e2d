"""Progress on a terminal: a one-line bar on stderr, silent when piped or quiet.

:class:`Progress` counts steps (the parts of a decomposition, the iterations of a search,
benchmark cases); :class:`Ticker` shows the time spent against a time limit while one long
call runs (a MILP solve); :func:`steps` gives a ``show(done, total)`` callback for code that
reports steps. These three write the line with ``\\r`` and erase it when the work ends, so
the summary printed after it starts on a clean line. :class:`PhaseLine` shows a method's
phases, incumbent, bound and gap, drawn by ``rich``. All draw
only when standard error is a terminal, outside a :func:`silenced` block; otherwise
every call does nothing.

Examples
--------
>>> import io
>>> bar = Progress(3, "parts", stream=io.StringIO(), enabled=True)
>>> bar.update(1); bar.line()
'parts [=======.............. ] 1/3'
>>> quiet = Progress(3, "parts", stream=io.StringIO())   # not a terminal: silent
>>> quiet.update(3); quiet.stream.getvalue()
''
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from typing import IO, Iterator

__all__ = ["Progress", "Ticker", "PhaseLine", "terminal", "silenced", "steps"]

_WIDTH = 21


_SILENCED = contextvars.ContextVar("schedkit_progress_silenced", default=False)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """No progress line from what starts in this block (``--quiet``; a part of a
    decomposition, whose progress would interleave with the decomposition's own).

    Examples
    --------
    >>> import io
    >>> class Tty(io.StringIO):
    ...     def isatty(self): return True
    >>> with silenced():
    ...     terminal(Tty())
    False
    >>> terminal(Tty())
    True
    """
    token = _SILENCED.set(True)
    try:
        yield
    finally:
        _SILENCED.reset(token)


def terminal(stream: IO | None = None, quiet: bool = False) -> bool:
    """Whether progress should be drawn on ``stream`` (stderr): a terminal, and not quiet.

    Examples
    --------
    >>> import io
    >>> terminal(io.StringIO())
    False
    """
    stream = sys.stderr if stream is None else stream
    if quiet or _SILENCED.get():
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False


def _bar(fraction: float) -> str:
    filled = int(round(max(0.0, min(1.0, fraction)) * _WIDTH))
    return "[" + "=" * filled + "." * (_WIDTH - filled) + " ]"


class Progress:
    """A step counter drawn as ``label [====....] done/total note`` on one line.

    Parameters
    ----------
    total : int
        Number of steps (0 or less: unknown; the count is shown without a bar).
    label : str
        What is counted.
    stream : file, optional
        Where to draw (stderr).
    enabled : bool, optional
        Draw or not; by default only on a terminal (:func:`terminal`).
    """

    def __init__(self, total: int, label: str, stream: IO | None = None, enabled: bool | None = None):
        self.total = total
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = terminal(self.stream) if enabled is None else enabled
        self.done = 0
        self.note = ""
        self._width = 0

    def line(self) -> str:
        """The text of the progress line."""
        count = f"{self.done}/{self.total}" if self.total > 0 else str(self.done)
        bar = _bar(self.done / self.total) + " " if self.total > 0 else ""
        return f"{self.label} {bar}{count}" + (f" {self.note}" if self.note else "")

    def update(self, done: int | None = None, note: str = "") -> None:
        """Set the count (one more step by default) and redraw."""
        self.done = self.done + 1 if done is None else done
        self.note = note
        self._draw(self.line())

    def _draw(self, text: str) -> None:
        if not self.enabled:
            return
        pad = max(0, self._width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        """Erase the line (the next output starts at the left margin)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Ticker(Progress):
    """Elapsed time of one long call, against its time limit, redrawn by a background thread.

    Nothing is drawn during the first ``delay`` seconds, so quick calls leave no trace.

    Parameters
    ----------
    label : str
        What runs (``"milp"``).
    limit : float, optional
        The time limit in seconds (a bar fills up to it), or None.
    delay, every : float
        Seconds before the first line, and between lines.

    Examples
    --------
    >>> import io
    >>> ticker = Ticker("milp", limit=60, stream=io.StringIO(), enabled=True)
    >>> ticker.elapsed_line(15.0)
    'milp [=====................ ] 15.0 s of 60 s'
    >>> with Ticker("heft", stream=io.StringIO()) as t:   # not a terminal: no thread at all
    ...     t.thread is None
    True
    """

    def __init__(self, label: str, limit: float | None = None, stream: IO | None = None,
                 enabled: bool | None = None, delay: float = 1.0, every: float = 0.5):
        super().__init__(0, label, stream, enabled)
        self.limit = limit
        self.delay, self.every = delay, every
        self.thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def elapsed_line(self, seconds: float) -> str:
        """The line shown after ``seconds``."""
        if self.limit:
            return f"{self.label} {_bar(seconds / self.limit)} {seconds:.1f} s of {self.limit:g} s"
        return f"{self.label} {seconds:.1f} s"

    def _run(self, began: float) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                self._draw(self.elapsed_line(time.perf_counter() - began))
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> Ticker:
        if self.enabled:
            self.thread = threading.Thread(target=self._run, args=(time.perf_counter(),), daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.thread is not None:
            self.thread.join()
        with self._lock:
            self.close()


def steps(label: str, unit: str = "", stream: IO | None = None):
    """A ``show(done, total)`` callback drawing a :class:`Progress` line, or ``None`` off a terminal.

    The line is erased when ``done`` reaches ``total``; a later call opens a new one (the
    rounds of a decomposition).

    Examples
    --------
    >>> steps("annealing") is None       # doctests do not run on a terminal
    True
    """
    if not terminal(stream):
        return None
    state: dict = {}

    def show(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            if done >= total:
                return
            bar = state["bar"] = Progress(total, label, stream, enabled=True)
        bar.total = total
        bar.update(done, unit)
        if done >= total:
            bar.close()
            del state["bar"]

    return show


class PhaseLine:
    """A live line of a method that runs phases (``auto``): phase, elapsed time, incumbent,
    bound and gap, redrawn four times a second by `rich <https://rich.readthedocs.io>`_ on
    stderr and erased at the end. Off a terminal, or silenced, it draws nothing.

    Call it with each event (any object with ``phase``, ``makespan``, ``bound`` and ``gap``);
    an event whose phase is ``done`` closes the line.

    Parameters
    ----------
    label : str
        The method (``"auto"``).
    limit : float, optional
        Its time limit in seconds.
    stream : file, optional
        Where to draw (stderr).
    enabled : bool, optional
        Draw or not; by default only on a terminal (:func:`terminal`).

    Examples
    --------
    >>> from types import SimpleNamespace as Event
    >>> line = PhaseLine("auto", limit=60, enabled=False)
    >>> line(Event(phase="exact", makespan=12.5, bound=10.0, gap=0.2))
    >>> line.line(elapsed=3.04)
    'auto  exact  3.0 s of 60 s  incumbent 12.5  bound 10  gap 20.00%'
    """

    def __init__(self, label: str, limit: float | None = None, stream: IO | None = None,
                 enabled: bool | None = None):
        self.label, self.limit = label, limit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = terminal(self.stream) if enabled is None else enabled
        self.began = time.perf_counter()
        self.event = None
        self._live = None

    def line(self, elapsed: float | None = None) -> str:
        """The text shown ``elapsed`` seconds after the start (by default: now)."""
        elapsed = time.perf_counter() - self.began if elapsed is None else elapsed
        event = self.event
        text = f"{self.label}  {getattr(event, 'phase', 'starting')}  {elapsed:.1f} s"
        if self.limit:
            text += f" of {self.limit:g} s"
        if event is not None and event.makespan is not None:
            text += f"  incumbent {event.makespan:.6g}"
        if event is not None and event.bound is not None:
            text += f"  bound {event.bound:.6g}"
        if event is not None and event.gap is not None:
            text += f"  gap {100 * event.gap:.2f}%"
        return text

    def __rich__(self):
        from rich.text import Text

        return Text(self.line())

    def __call__(self, event) -> None:
        if event.phase == "done":
            self.close()
            return
        self.event = event
        if self.enabled and self._live is None and not _SILENCED.get():
            from rich.console import Console
            from rich.live import Live

            self._live = Live(self, console=Console(file=self.stream), transient=True, refresh_per_second=4)
            self._live.start()

    def close(self) -> None:
        """Erase the line (a later event draws a new one)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
