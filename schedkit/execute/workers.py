"""Workers that run a cut model: one thread per device, tensors handed on through a board.

Each device of a plan is a :class:`Worker`: a thread that owns its segments' sessions (any
object with onnxruntime's ``run(output_names, feeds)``) and runs them in the schedule's order.
One run of the model shares one :class:`Board`: a segment waits on it until every tensor it
reads has arrived, and puts its outputs there when it ends, which wakes the segments waiting
for them. :func:`run_workers` starts the threads once, runs the model ``warmup + runs`` times
and measures each run's latency (from the release of the inputs to the end of the last
segment) and each worker's busy time (the sum of its sessions' run times).

An exception in a worker fails the board, which stops every worker waiting on it; the run
then raises one :class:`ExecuteError` naming the worker and segment. The threads are always
joined, on success, on an error and on Ctrl-C.

Examples
--------
>>> class Double:
...     def run(self, outputs, feeds):
...         return [2 * next(iter(feeds.values()))]
>>> parts = {"cpu0": [Part("cpu0[a]", Double(), ["x"], ["h"])],
...          "cpu1": [Part("cpu1[b]", Double(), ["h"], ["y"])]}
>>> timing = run_workers(parts, {"x": 1}, runs=3, warmup=1)
>>> timing.values["y"], len(timing.latency), sorted(timing.busy)
(4, 3, ['cpu0', 'cpu1'])
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from schedkit.errors import SchedkitError

__all__ = ["ExecuteError", "Board", "Part", "Timing", "run_workers"]


class ExecuteError(SchedkitError):
    """A placed model could not be run, or its split run disagrees with the whole model's."""


class Stopped(Exception):
    """Raised in a worker waiting on a board that another worker failed."""


class Board:
    """The tensors of one run, as they arrive, and the first failure.

    Parameters
    ----------
    values : dict
        What is known at the start: the model's inputs.

    Examples
    --------
    >>> board = Board({"x": 1})
    >>> board.put({"h": 2}); board.take(["x", "h"])
    {'x': 1, 'h': 2}
    >>> board.fail("cpu0: broken"); board.take(["y"])
    Traceback (most recent call last):
    ...
    schedkit.execute.workers.Stopped: cpu0: broken
    """

    def __init__(self, values: dict[str, Any]):
        self._values = dict(values)
        self._changed = threading.Condition()
        self.failure: str | None = None

    def put(self, values: dict[str, Any]) -> None:
        """Add tensors and wake the workers waiting for them."""
        with self._changed:
            self._values.update(values)
            self._changed.notify_all()

    def take(self, names: list[str]) -> dict[str, Any]:
        """Wait until every tensor of ``names`` has arrived; raise :class:`Stopped` on a failure."""
        with self._changed:
            self._changed.wait_for(lambda: self.failure is not None
                                   or all(n in self._values for n in names))
            if self.failure is not None:
                raise Stopped(self.failure)
            return {n: self._values[n] for n in names}

    def fail(self, failure: str) -> None:
        """Record the first failure and wake every waiting worker, which then stops."""
        with self._changed:
            if self.failure is None:
                self.failure = failure
            self._changed.notify_all()

    def values(self) -> dict[str, Any]:
        """Every tensor that arrived."""
        with self._changed:
            return dict(self._values)


@dataclass
class Part:
    """A segment ready to run: its label, its session, the tensors it reads and writes."""

    label: str
    session: Any
    inputs: list[str]
    outputs: list[str]


@dataclass
class Timing:
    """What :func:`run_workers` measured, in seconds.

    Attributes
    ----------
    latency : list of float
        Per measured run, from the release of the inputs to the end of the last segment.
    busy : dict
        Device -> per measured run, the time its sessions ran.
    values : dict
        Every tensor of the last run.
    """

    latency: list[float] = field(default_factory=list)
    busy: dict[str, list[float]] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)


class Worker:
    """A thread that runs one device's parts, once per board its inbox receives (``None``: quit)."""

    def __init__(self, device: str, parts: list[Part], results: queue.Queue):
        self.device, self.parts, self.results = device, parts, results
        self.inbox: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._serve, name=f"schedkit-execute-{device}", daemon=True)

    def _serve(self) -> None:
        while (board := self.inbox.get()) is not None:
            busy, part = 0.0, None
            try:
                for part in self.parts:
                    feeds = board.take(part.inputs)
                    began = perf_counter()
                    values = part.session.run(part.outputs, feeds)
                    busy += perf_counter() - began
                    board.put(dict(zip(part.outputs, values)))
            except Stopped:
                self.results.put((self.device, None, None, None))
            except Exception as exc:  # onnxruntime's own errors included: reported, never lost
                text = str(exc).strip()
                reason = text.splitlines()[0] if text else type(exc).__name__
                failure = f"{part.label if part else self.device}: {reason}"
                board.fail(failure)
                self.results.put((self.device, None, None, failure))
            else:
                self.results.put((self.device, busy, perf_counter(), None))


def run_workers(parts: dict[str, list[Part]], feeds: dict[str, Any], runs: int, warmup: int = 0) -> Timing:
    """Run the parts on one thread per device, ``warmup`` times unmeasured then ``runs`` times.

    Parameters
    ----------
    parts : dict
        Device -> its parts, in run order.
    feeds : dict
        The model's inputs.
    runs, warmup : int
        Measured and unmeasured runs.

    Returns
    -------
    Timing

    Raises
    ------
    ExecuteError
        When a part fails: one line naming it (the other workers are stopped and joined).

    Examples
    --------
    >>> class Broken:
    ...     def run(self, outputs, feeds):
    ...         raise RuntimeError("bad input\\nmore detail")
    >>> class Echo:
    ...     def run(self, outputs, feeds):
    ...         return list(feeds.values())
    >>> run_workers({"cpu0": [Part("cpu0[a]", Broken(), ["x"], ["h"])],
    ...              "cpu1": [Part("cpu1[b]", Echo(), ["h"], ["y"])]}, {"x": 1}, runs=1)
    Traceback (most recent call last):
    ...
    schedkit.execute.workers.ExecuteError: cpu0[a]: bad input
    """
    made = set(feeds) | {t for ps in parts.values() for p in ps for t in p.outputs}
    orphans = [t for ps in parts.values() for p in ps for t in p.inputs if t not in made]
    if orphans:  # a part would wait for them forever
        raise ExecuteError(f"no part writes tensor '{orphans[0]}', which a part reads")
    results: queue.Queue = queue.Queue()
    workers = [Worker(device, list(p), results) for device, p in parts.items()]
    timing = Timing(busy={w.device: [] for w in workers})
    board = None
    try:
        for w in workers:
            w.thread.start()
        for k in range(warmup + runs):
            board = Board(feeds)
            began = perf_counter()
            for w in workers:
                w.inbox.put(board)
            answers = [_next(results) for _ in workers]
            failures = [a[3] for a in answers if a[3] is not None]
            if failures:
                raise ExecuteError(failures[0])
            if k >= warmup:
                timing.latency.append(max(a[2] for a in answers) - began)
                for device, busy, _, _ in answers:
                    timing.busy[device].append(busy)
        timing.values = board.values() if board is not None else dict(feeds)
        return timing
    except BaseException:
        if board is not None:
            board.fail("stopped")  # wakes the workers still waiting, so that they can be joined
        raise
    finally:
        for w in workers:
            if w.thread.is_alive():
                w.inbox.put(None)
        for w in workers:
            if w.thread.ident is not None:
                w.thread.join()


def _next(results: queue.Queue) -> tuple:
    # A timeout, so that Ctrl-C reaches the main thread while the workers run.
    while True:
        try:
            return results.get(timeout=0.2)
        except queue.Empty:
            continue
