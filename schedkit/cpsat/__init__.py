"""CP-SAT as a second exact backend of the formulations (optional extra ``cpsat``).

Every block states its meaning once more in CP-SAT's scheduling vocabulary
(:meth:`~schedkit.blocks.Block.build_cp`): optional intervals per task and device,
no-overlap on devices, channels and ports, enforcement literals for communication delays.
OR-Tools runs in a worker process of its own (:mod:`.worker`), since it cannot share one
with HiGHS; times become integers on a scale chosen from the data (:mod:`.ticks`); the
answer is read back with exact times (:mod:`.solve`).
"""

from schedkit.cpsat.solve import accepts, make_job, read_answer, require_cpsat
from schedkit.cpsat.ticks import Ticks
from schedkit.cpsat.worker import Answer, Job, Worker, run

__all__ = ["Answer", "Job", "Ticks", "Worker", "accepts", "make_job", "read_answer", "require_cpsat", "run"]
