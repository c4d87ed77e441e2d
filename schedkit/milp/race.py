"""A bound search beside the exact solve, sharing its incumbent and bound.

HiGHS's branch and bound uses one core. With ``threads >= 2`` (the default on a
machine with two or more cores), a helper thread searches lower bounds on the same
model at the same time (:func:`schedkit.milp.subsets.subset_bounds`). Both threads read and
write one :class:`Shared` record: HiGHS's incumbent, the best lower bound proven, and a
stop flag. HiGHS is interrupted through its callback as soon as the bound meets its
incumbent; the schedule then reports that bound, and its status says ``optimal`` only
when the two meet. highspy releases the GIL while HiGHS runs, so the threads use two
cores.

Examples
--------
>>> shared = Shared(tolerance=1e-6)
>>> shared.found(60.2); shared.proved(59.0); shared.stop.is_set()
False
>>> shared.found(59.0); shared.closed()
True
"""

from __future__ import annotations

import math
import os
import threading
import time

from schedkit.numerics import SOLVER_TOL, closed


def default_threads() -> int:
    """Threads of an exact solve when the user gives none: two when this process may use two cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


class Shared:
    """Incumbent, lower bound and stop flag of one exact solve and its helper.

    Parameters
    ----------
    tolerance : float
        Relative distance at which bound and incumbent meet.
    """

    def __init__(self, tolerance: float = SOLVER_TOL):
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.incumbent = math.inf
        self.bound = -math.inf
        self.tolerance = tolerance
        self._offer: tuple[float, object, object] | None = None
        #: Paces HiGHS while CP-SAT races beside it (``None``: HiGHS at full speed).
        self.pace: Pace | None = None

    def found(self, objective: float) -> None:
        """The exact solve holds a schedule of makespan ``objective``."""
        with self.lock:
            self.incumbent = min(self.incumbent, objective)
        if self.closed():
            self.stop.set()

    def proved(self, bound: float) -> None:
        """The makespan is at least ``bound``."""
        with self.lock:
            self.bound = max(self.bound, bound)
        if self.closed():
            self.stop.set()

    def offer(self, objective: float, values) -> None:
        """Hand the exact solve a schedule: its column ``values`` (``None`` where unknown)."""
        import numpy as np

        index = np.array([c for c, v in enumerate(values) if v is not None], dtype=np.int32)
        with self.lock:
            if objective < self.incumbent and (self._offer is None or objective < self._offer[0]):
                self._offer = (objective, index, np.array([values[c] for c in index], dtype=float))

    def take_offer(self, primal: float):
        """The offered ``(objective, index, values)`` if shorter than ``primal``, once; else ``None``."""
        with self.lock:
            offer, self._offer = self._offer, None
        return offer if offer is not None and offer[0] < primal else None

    def closed(self) -> bool:
        """Whether the bound meets the incumbent: the incumbent is optimal."""
        return closed(self.incumbent, self.bound, self.tolerance)

    def watch(self, h) -> None:
        """Interrupt the HiGHS solve ``h`` once the stop flag is set."""

        def interrupt(event):
            if self.stop.is_set():
                event.data_in.user_interrupt = True

        h.cbMipInterrupt.subscribe(interrupt)

    def watch_main(self, h) -> None:
        """Follow the incumbent of the exact solve ``h``, hand it offered schedules, stop it
        when the bound meets it."""

        def interrupt(event):
            primal = event.data_out.mip_primal_bound
            if primal < self.incumbent:
                self.found(primal)
            if self.pace is not None and not self.stop.is_set():
                self.pace(primal, event.data_out.mip_dual_bound)
            if self.stop.is_set():
                event.data_in.user_interrupt = True

        def improving(event):
            self.found(event.data_out.objective_function_value)

        def user_solution(event):
            offer = self.take_offer(event.data_out.mip_primal_bound)
            if offer is not None:
                event.data_in.setSolution(offer[1], offer[2])

        h.cbMipInterrupt.subscribe(interrupt)
        h.cbMipImprovingSolution.subscribe(improving)
        h.cbMipUserSolution.subscribe(user_solution)


class Pace:
    """How much of its core HiGHS takes while CP-SAT races beside it.

    On two cores, CP-SAT's two workers (a full search with its LP, and large-neighbourhood
    searches that share what they find) prove more than one alone. HiGHS runs at full
    speed for its first ``full_seconds``, where small models are proven by either solver;
    after that it takes ``share`` of its core, pausing in its own callback, which leaves
    the rest to CP-SAT's workers. It still raises its bound and takes CP-SAT's schedules,
    and goes back to full speed when its own gap is below ``close_gap``: about to prove.

    Examples
    --------
    >>> shared = Shared()
    >>> pace = Pace(shared, full_seconds=0.0, share=0.5)
    >>> began = time.perf_counter(); time.sleep(0.05); pace(100.0, 50.0)
    >>> time.perf_counter() - began >= 0.1   # ran 0.05 s, then paused as long
    True
    >>> began = time.perf_counter(); pace(100.0, 99.5)   # gap 0.5 %: full speed
    >>> time.perf_counter() - began < 0.01
    True
    """

    def __init__(self, shared: Shared, full_seconds: float, share: float = 0.1, close_gap: float = 0.01):
        self.shared = shared
        self.full_until = time.perf_counter() + full_seconds
        self.share = share
        self.close_gap = close_gap
        self.awake = time.perf_counter()

    def __call__(self, primal: float, dual: float) -> None:
        """Called in HiGHS's callback with its incumbent and bound: pause, or go on."""
        now = time.perf_counter()
        incumbent = min(primal, self.shared.incumbent)
        if now < self.full_until or (math.isfinite(incumbent) and incumbent - dual <= self.close_gap * abs(incumbent)):
            self.awake = now
            return
        ran = now - self.awake
        if ran >= PACE_SLICE:  # (the callback comes often: pause in slices, not every call)
            self.shared.stop.wait(min(ran * (1 / self.share - 1), MAX_PAUSE))
            self.awake = time.perf_counter()


#: Seconds HiGHS runs between pauses, and the longest pause.
PACE_SLICE = 0.02
MAX_PAUSE = 0.5


#: Seconds between looks at a running HiGHS, and how long an interrupted one is waited for.
POLL_SECONDS = 0.05
STOP_GRACE = 2.0
#: How long a helper (CP-SAT's reader, subset bounds) is waited for once HiGHS has returned.
HELPER_GRACE = 5.0
#: Threads of solver runs given up on, still running: HiGHS's own threads abort the
#: interpreter's shutdown ("terminate called without an active exception"), so the command
#: line leaves without it when there are any (:func:`left_running`).
LEFT_RUNNING: list[threading.Thread] = []


def left_running() -> bool:
    """Whether a solver run given up on is still running in this process."""
    return any(thread.is_alive() for thread in LEFT_RUNNING)


def run_beside(h, helper, shared: Shared, deadline: float | None = None, late_grace: float = STOP_GRACE) -> bool:
    """Run HiGHS ``h`` (:func:`run_highs`) while ``helper(shared)`` runs in a thread; re-raise
    its error; whether HiGHS returned.

    The helper is told to stop (``shared.stop``) when HiGHS returns, and joined.
    """
    failure: list[BaseException] = []

    def body():
        try:
            helper(shared)
        except BaseException as exc:  # surfaced below, in the caller's thread
            failure.append(exc)
            shared.stop.set()

    shared.watch_main(h)
    thread = threading.Thread(target=body, name="schedkit-bounds", daemon=True)
    thread.start()
    finished = False
    try:
        finished = run_highs(h, shared, deadline, late_grace)
    finally:
        shared.stop.set()
        # (a helper's own HiGHS may be stuck in its presolve as well: it is not waited for)
        thread.join(HELPER_GRACE if finished else POLL_SECONDS)  # (told to stop with HiGHS)
        if thread.is_alive():
            LEFT_RUNNING.append(thread)
    if failure and not isinstance(failure[0], KeyboardInterrupt):
        raise failure[0]
    return finished


def run_highs(h, shared: Shared, deadline: float | None = None, late_grace: float = STOP_GRACE) -> bool:
    """Run HiGHS ``h`` in a thread of its own while this one waits; whether it returned.

    HiGHS calls back (and so can be stopped) only once its branch and bound has begun;
    its presolve of a large model can take minutes, past its own time limit (MSR's
    Inception-v2 under a 60 s limit: still in ``strengthenInequalities`` at 220 s).
    Interrupted (Ctrl-C: ``shared.stop`` is set and :func:`schedkit.interrupt.received`
    says so), or past ``deadline`` (:func:`time.perf_counter`), this thread asks HiGHS to
    cancel, waits :data:`STOP_GRACE` seconds for it (``late_grace`` past the deadline), then
    leaves it to stop at its first callback (:data:`LEFT_RUNNING`) and returns ``False``:
    ``h`` may not be read then.
    """
    from schedkit import interrupt

    failure: list[BaseException] = []
    done = threading.Event()

    def body():
        try:
            h.run()
        except BaseException as exc:  # surfaced below, in the caller's thread
            failure.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=body, name="schedkit-highs", daemon=True)
    thread.start()
    given_up = None
    while not done.wait(POLL_SECONDS):
        late = deadline is not None and time.perf_counter() > deadline
        if given_up is None and (late or shared.stop.is_set() and interrupt.received() is not None):
            shared.stop.set()
            try:
                h.cancelSolve()
            except Exception:  # (an older highspy without it: the callbacks stop it)  # noqa: BLE001
                pass
            given_up = time.perf_counter() + (late_grace if late else STOP_GRACE)
        if given_up is not None and time.perf_counter() > given_up:
            LEFT_RUNNING.append(thread)
            return False
    if failure:
        raise failure[0]
    return True




def deadline_after(seconds: float | None) -> float | None:
    """``time.perf_counter()`` value ``seconds`` from now (``None``: no deadline)."""
    return None if seconds is None else time.perf_counter() + seconds
