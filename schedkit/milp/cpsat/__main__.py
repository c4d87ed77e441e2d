"""The CP-SAT worker process (see :func:`schedkit.milp.cpsat.worker.run`): a pickled job on
stdin, the pickled answer on stdout."""

import pickle
import sys

from schedkit.milp.cpsat.worker import answer

reply = pickle.dumps(answer(pickle.load(sys.stdin.buffer)))
sys.stdout.buffer.write(reply)
sys.stdout.buffer.flush()
