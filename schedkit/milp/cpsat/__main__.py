"""The CP-SAT worker process (see :class:`schedkit.milp.cpsat.worker.Worker`): a pickled
``(job, stream)`` on stdin; framed messages on stdout: each improving solution when
``stream`` is true, then the answer."""

import pickle
import sys

from schedkit.milp.cpsat.worker import answer, write_message

try:  # load OR-Tools while the parent prepares the job (a missing one is said in the answer)
    from ortools.sat.python import cp_model  # noqa: F401
except ImportError:
    pass

job, stream = pickle.load(sys.stdin.buffer)
out = sys.stdout.buffer
write_message(out, "answer", answer(job, (lambda found: write_message(out, "solution", found)) if stream else None))
