"""The CP-SAT worker process (see :class:`schedkit.cpsat.worker.Worker`): ``ready``
once loaded, then a pickled ``(job, stream)`` on stdin; framed messages on the descriptor
:data:`~schedkit.cpsat.worker.FRAMES` names (stdout when it names none): each improving
solution and each better bound when ``stream`` is true, then the answer."""

import os
import pickle
import signal
import sys
import threading

from schedkit.cpsat.worker import FRAMES, answer, watch_parent, write_message

watch_parent()  # (first: never outlive the parent, even while OR-Tools loads)

try:  # load OR-Tools while the parent prepares the job (a missing one is said in the answer)
    from ortools.sat.python import cp_model  # noqa: F401
except ImportError:
    pass

out = os.fdopen(int(os.environ[FRAMES]), "wb") if FRAMES in os.environ else sys.stdout.buffer
lock = threading.Lock()  # CP-SAT's threads call back at once: one frame at a time


def send(kind: str, payload) -> None:
    with lock:
        write_message(out, kind, payload)


send("ready", None)
job, stream = pickle.load(sys.stdin.buffer)
if stream:
    found = answer(job, lambda solution: send("solution", solution), lambda ticks: send("bound", ticks))
else:
    found = answer(job)
signal.signal(signal.SIGINT, signal.SIG_IGN)  # (CP-SAT leaves SIGINT at its default: killing)
send("answer", found)
