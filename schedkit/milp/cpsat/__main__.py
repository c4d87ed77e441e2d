"""The CP-SAT worker process (see :func:`schedkit.milp.cpsat.worker.run`): a pickled job on
stdin, the pickled answer on stdout."""

import pickle
import sys

from schedkit.milp.cpsat.worker import answer

try:  # load OR-Tools while the parent prepares the job (a missing one is said in the answer)
    from ortools.sat.python import cp_model  # noqa: F401
except ImportError:
    pass

reply = pickle.dumps(answer(pickle.load(sys.stdin.buffer)))
sys.stdout.buffer.write(reply)
sys.stdout.buffer.flush()
