"""The CP-SAT worker: a process of its own, started fresh, that never loads HiGHS.

``highspy`` 1.15 and ``ortools`` 9.15 cannot be loaded into one Python process (their
shared libraries clash, OR-Tools issue #5246). The parent sends a :class:`Job` (the
problem, the formulation, the ticks, a hint) through a pipe (:func:`run`); the worker builds the CP-SAT
model block by block (:meth:`~schedkit.blocks.Block.build_cp`), solves it and sends back
plain numbers: status, objective and bound in ticks, each task's device and start, each
transfer's start. Nothing of OR-Tools crosses the pipe.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from schedkit import interrupt
from schedkit.errors import SchedkitError, SolverError
from schedkit.lifeline import end_with

#: Seconds the parent waits between looks at the pipe and at its stop flag.
POLL_SECONDS = 0.05
#: Interrupted, seconds the parent waits for the worker's best answer before ending it.
GRACE_SECONDS = 3.0
#: Environment variable that gives the worker its parent's process id (see :func:`watch_parent`).
PARENT = "SCHEDKIT_CPSAT_PARENT"
#: Environment variable that gives the worker the descriptor its frames go to.
FRAMES = "SCHEDKIT_CPSAT_FRAMES"
#: No frame is larger (a corrupted length would otherwise ask for exabytes).
LARGEST_FRAME = 1 << 34
#: Set in the worker when the parent asked it to stop before its search began.
STOP = threading.Event()


@dataclass
class Job:
    """What the worker needs: all of it picklable, none of it from OR-Tools."""

    problem: object
    formulation: object
    ticks: object
    horizon: int
    hint: object = None
    #: Wall-clock time (``time.time()``) by which the answer is due: the worker's start-up counts.
    deadline: float | None = None
    workers: int = 1
    seed: int = 0
    verbose: bool = False
    #: A schedule to fix every variable to (is it a solution of the model?), instead of a hint.
    fixed: object = None


@dataclass
class Answer:
    """The worker's reply: ``status`` is CP-SAT's status name (``OPTIMAL``, ``FEASIBLE``,
    ``INFEASIBLE``, ``UNKNOWN``, ``MODEL_INVALID``); times are in ticks."""

    status: str
    objective: float | None = None
    bound: float | None = None
    devices: list[int] | None = None
    starts: list[int] | None = None
    transfer_starts: dict[tuple[int, int], int] = field(default_factory=dict)
    #: Under ``batching``: ``(task, device, inputs, start)`` of every batch (then no devices, starts).
    batches: list | None = None
    seconds: float = 0.0
    error: str | None = None
    #: Whether a block rounded data the safe way (the answer then proves nothing).
    rounded: bool = False


def solve_job(job: Job, emit=None, emit_bound=None) -> Answer:
    """Build and solve ``job`` in this process (which must not hold HiGHS); ``emit(answer)``,
    when given, receives every improving solution as it is found (status ``FEASIBLE``),
    ``emit_bound(ticks)`` every better lower bound."""
    from ortools.sat.python import cp_model

    from schedkit.cpsat.context import CpContext

    began = time.perf_counter()
    model = cp_model.CpModel()
    cp = CpContext(model, job.problem, job.ticks, job.horizon)
    for block in job.formulation.building():
        if block.role != "cut" and block.applies_to(job.problem):
            block.build_cp(cp)
    if job.fixed is not None:
        cp.fix(job.fixed)
    elif job.hint is not None:
        cp.hint(job.hint)
    solver = cp_model.CpSolver()
    params = solver.parameters
    if job.deadline is not None:
        params.max_time_in_seconds = max(0.01, job.deadline - time.time())
    if STOP.is_set():  # (asked to stop before the search: the hint, checked, at most)
        params.max_time_in_seconds = 0.01
    params.num_workers = job.workers
    params.random_seed = job.seed
    params.log_search_progress = job.verbose
    if job.verbose:  # (the log goes to stderr, where a terminal shows it)
        params.log_to_stdout = False
        solver.log_callback = lambda line: print(line, file=sys.stderr)

    def read(values, status: str) -> Answer:
        found = Answer(status=status, seconds=time.perf_counter() - began, rounded=bool(cp.rounded))
        found.objective, found.bound = values.objective_value, values.best_objective_bound
        if cp.batches is not None:  # under ``batching``: the running batch slots
            found.batches = [(i, d, [l for l, a in enumerate(held) if values.boolean_value(a)], values.value(start))
                             for i, d, _, on, start, _, held in cp.batches if values.boolean_value(on)]
            found.devices, found.starts = [], []
            return found
        found.devices = [next(d for d, on in cp.on[i].items() if values.boolean_value(on))
                         for i in range(len(job.problem.tasks))]
        found.starts = [values.value(s) for s in cp.start]
        found.transfer_starts = {t.edge: values.value(t.start) for t in (cp._transfers or [])}
        return found

    if emit_bound is not None and not cp.rounded:  # (a rounded model's bound proves nothing)
        solver.best_bound_callback = emit_bound
    if emit is None:
        status = solver.solve(model)
    else:
        class Improving(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self):
                emit(read(self, "FEASIBLE"))

        status = solver.solve(model, Improving())
    name = solver.status_name(status)
    if name in ("OPTIMAL", "FEASIBLE"):
        return read(solver, name)
    answer = Answer(status=name, seconds=time.perf_counter() - began, rounded=bool(cp.rounded))
    if name == "UNKNOWN":
        answer.bound = solver.best_objective_bound
    return answer


def answer(job: Job, emit=None, emit_bound=None) -> Answer:
    """:func:`solve_job`, with any failure as an answer that says it in one line."""
    try:
        return solve_job(job, emit, emit_bound)
    except ImportError as exc:
        return Answer(status="ERROR", error=f"the CP-SAT worker cannot load OR-Tools ({exc}): "
                                            f"pip install 'schedkit[cpsat]'")
    except SchedkitError as exc:
        return Answer(status="ERROR", error=str(exc))
    except Exception as exc:  # noqa: BLE001 - the parent turns it into one line
        return Answer(status="ERROR", error=f"CP-SAT worker: {type(exc).__name__}: {exc}")


class Worker:
    """A CP-SAT worker process, started at once so that it loads Python, schedkit and
    OR-Tools while the caller prepares the job (a second, at least); :meth:`solve` sends it.

    The worker is ``python -m schedkit.cpsat`` with this process's import path: it
    says ``ready`` once loaded, reads the pickled job on stdin and writes framed messages on
    a pipe of their own (:func:`write_message`: improving solutions and bounds when asked,
    then the answer); it never re-imports the caller's main module, as ``multiprocessing``
    would. A worker solves one job; :meth:`close` ends one that was never used.
    """

    def __init__(self, verbose: bool = False):
        frames, ours = os.pipe()
        # (this process's import path, its working directory where it has one: a notebook's
        # blocks in a module of its folder unpickle there too)
        path = os.pathsep.join(p or os.getcwd() for p in sys.path)
        env = {**os.environ, "PYTHONPATH": path, PARENT: str(os.getpid()), FRAMES: str(ours)}
        # (its own process group: a Ctrl-C on the terminal reaches this process alone, which
        # stops the worker when it wants its answer; the worker ends itself when this process dies.
        # ``-P``: no working directory on its import path unless this process has it, where a
        # user's ``grp.py`` or ``signal.py`` would replace the standard module. The frames have
        # a pipe of their own: what anything else prints on the worker's stdout joins its stderr.)
        try:
            self.process = subprocess.Popen([sys.executable, "-P", "-m", "schedkit.cpsat"], stdin=subprocess.PIPE,
                                            stdout=2 if verbose else subprocess.PIPE,
                                            stderr=None if verbose else subprocess.STDOUT,
                                            env=env, process_group=0, pass_fds=(ours,))
        except BaseException:
            os.close(frames)
            raise
        finally:
            os.close(ours)
        self.messages: queue.Queue = queue.Queue()
        self.loaded = threading.Event()
        self.errors: list[bytes] = []
        self.threads = [threading.Thread(target=_receive, args=(os.fdopen(frames, "rb"), self.messages, self.loaded),
                                         daemon=True)]
        if self.process.stdout is not None:
            output = self.process.stdout
            self.threads.append(threading.Thread(target=lambda: self.errors.append(output.read()), daemon=True))
        for thread in self.threads:
            thread.start()

    def ready(self, timeout: float | None = None) -> bool:
        """Wait until the worker has loaded OR-Tools (at most ``timeout`` seconds); whether it has."""
        return self.loaded.wait(timeout)

    def solve(self, job: Job, stop=None, improving=None, bounded=None) -> Answer | None:
        """The answer to ``job``; ``None`` when ``stop`` (an event) was set first.

        ``improving(answer)``, when given, receives each improving solution as the worker
        finds it (status ``FEASIBLE``); ``bounded(ticks)`` each better lower bound. Raises
        :class:`~schedkit.errors.SolverError` when the job cannot be sent or the worker fails.
        Interrupted (Ctrl-C, see :mod:`schedkit.interrupt`), the worker is asked for its best
        answer so far (``None`` if it has none within :data:`GRACE_SECONDS`).
        """
        stop = stop if stop is not None else threading.Event()
        with interrupt.deferred(stop.set):
            return self._solve(job, stop, improving, bounded)

    def _solve(self, job: Job, stop, improving, bounded) -> Answer | None:
        try:
            data = pickle.dumps((job, improving is not None or bounded is not None))
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            self.close()
            raise SolverError(f"cannot send the job to the CP-SAT worker ({exc}): user blocks must be "
                              f"defined in an importable module") from None
        process = self.process
        threading.Thread(target=_send, args=(process.stdin, data), daemon=True).start()
        grace = None  # (interrupted: when the worker's answer stops being awaited)
        while True:
            try:
                kind, reply = self.messages.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if grace is None and stop.is_set() and interrupt.received() is not None and self.loaded.is_set():
                    process.send_signal(signal.SIGINT)  # CP-SAT stops its search and answers
                    grace = time.monotonic() + GRACE_SECONDS
                elif stop.is_set() and (grace is None or time.monotonic() > grace):
                    self.close()
                    return None
                continue
            if kind == "solution":
                if improving is not None:
                    improving(reply)
            elif kind == "bound":
                if bounded is not None:
                    bounded(reply)
            else:
                break
        if kind == "end":  # (the stream ended or broke: a worker still running is not awaited)
            try:
                process.wait(timeout=GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self.close()
        else:
            process.wait()
        if kind == "end" and grace is not None:
            return None  # (stopped before it had anything to say)
        if kind == "end":  # the worker died before it answered, or its frames broke
            for thread in self.threads[1:]:
                thread.join(timeout=1)
            last = b"".join(self.errors).decode(errors="replace").strip().splitlines()[-1:] or [""]
            said = reply or (last[0] and f": {last[0]}")
            raise SolverError(f"the CP-SAT worker stopped without an answer (exit code {process.returncode})"
                              + (said or ""))
        if reply.error is not None:
            raise SolverError(reply.error)
        return reply

    def close(self) -> None:
        """End the worker if it still runs."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def watch_parent() -> None:
    """In the worker: end this process as soon as its parent is gone (killed, say).

    The worker is in a process group of its own, so no signal to the parent's group
    reaches it; :func:`schedkit.lifeline.end_with` ends it once the parent process named
    by :data:`PARENT` is gone. A SIGINT asks the search to stop (CP-SAT then answers with
    its best).
    """
    end_with(int(os.environ.get(PARENT) or os.getppid()))
    # (during the search CP-SAT catches SIGINT itself and returns its best answer)
    signal.signal(signal.SIGINT, lambda signum, frame: STOP.set())


def write_message(stream, kind: str, payload) -> None:
    """One framed message on ``stream``: its length, then the pickled ``(kind, payload)``."""
    data = pickle.dumps((kind, payload))
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _send(stream, data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except OSError:  # the worker is gone: the reader says so
        pass


def _receive(stream, messages: queue.Queue, loaded: threading.Event) -> None:
    """Put every framed message of ``stream`` on ``messages`` (``ready`` sets ``loaded``
    instead), then ``("end", why)``: ``why`` is ``None`` at the stream's end, a phrase where
    a frame could not be read."""
    why = None
    try:
        with stream:
            while True:
                head = stream.read(8)
                if len(head) < 8:
                    break
                size = struct.unpack("<Q", head)[0]
                if size > LARGEST_FRAME:
                    why = f": its reply is not a frame (a length of {size} bytes)"
                    break
                message = pickle.loads(stream.read(size))
                if message[0] == "ready":
                    loaded.set()
                else:
                    messages.put(message)
    except (OSError, EOFError):
        pass
    except Exception as exc:  # noqa: BLE001 - a broken frame ends the answer, said in one line
        why = f": its reply cannot be read ({type(exc).__name__})"
    messages.put(("end", why))


class Spare:
    """One started worker this process keeps ready for its next CP-SAT solve.

    A worker takes about a second to load Python, schedkit and OR-Tools; a program that
    solves one model after another (a notebook, a benchmark, a decomposition's parts in
    this process) then finds it loaded. It is started when a solve ends and ended when
    this process exits.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.worker: Worker | None = None
        atexit.register(self.close)

    def take(self, verbose: bool = False) -> Worker:
        """The spare worker if it is alive (and ``verbose`` is not asked for), else a new one."""
        with self.lock:
            worker, self.worker = self.worker, None
        if worker is not None and (verbose or worker.process.poll() is not None):
            worker.close()
            worker = None
        return worker or Worker(verbose)

    def refill(self) -> None:
        """Start the spare worker for the next solve, unless one is waiting."""
        with self.lock:
            if self.worker is None or self.worker.process.poll() is not None:
                self.worker = Worker()

    def wait(self, timeout: float | None = None) -> bool:
        """Start the spare worker unless one waits, and wait until it has loaded (at most
        ``timeout`` seconds); whether it has. A program that solves many models (a
        benchmark, a service) calls it between solves so that no solve waits for the load.

        Examples
        --------
        >>> spare = Spare()
        >>> spare.wait(timeout=60)
        True
        >>> spare.close()
        """
        self.refill()
        with self.lock:
            worker = self.worker
        return worker is not None and worker.ready(timeout)

    def close(self) -> None:
        """End the spare worker."""
        with self.lock:
            worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()


#: This process's spare worker.
SPARE = Spare()


def run(job: Job, stop=None) -> Answer | None:
    """Solve ``job`` in a fresh :class:`Worker`; ``None`` when ``stop`` was set first."""
    return Worker(job.verbose).solve(job, stop)
