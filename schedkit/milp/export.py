"""LP/MPS export with readable names, and reading an external solver's solution back.

The file is written straight from the formulation's sparse model
(:mod:`schedkit.milp.lpfile`); no Pyomo object is made. Every row's name starts with its
block: ``precedence.delay(attn_norm_data)``, ``no_overlap.disjunct(attn_mlp_gpu0_before)``,
``assignment.one_device(attn)``, ``cuts.device_load(gpu0_head_0)``; rows that define a
variable family are named after it: ``end_def(...)``, ``makespan_def(...)``. Columns are ``x(attn_gpu0)``,
``start(attn)``, ``end(attn)``, ``order(attn_mlp)`` and ``makespan``. Characters other
than letters, digits, ``_``, ``.`` and parentheses become ``_``.

Examples
--------
>>> import tempfile, pathlib, highspy
>>> from schedkit import Problem
>>> from schedkit.milp import Milp
>>> problem = Problem.load("examples/tiny.yaml")
>>> built = Milp().build(problem)
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_model(built, folder / "tiny.lp")
>>> h = highspy.Highs(); h.silent(); _ = h.readModel(str(folder / "tiny.lp")); _ = h.run()
>>> _ = h.writeSolution(str(folder / "tiny.sol"), 0)
>>> schedule = load_solution(built, folder / "tiny.sol")   # the file carries HiGHS's Objective_bound
>>> schedule.status, round(schedule.makespan, 5), round(schedule.bound, 3)
('optimal', 4.51625, 4.516)
>>> bound = h.getInfo().mip_dual_bound                            # a bound given by hand counts too
>>> load_solution(built, folder / "tiny.sol", bound=bound).status
'optimal'
"""

from __future__ import annotations

import math
from pathlib import Path

from schedkit.atomic import atomic_output
from schedkit.errors import SchedkitError, ScheduleError
from schedkit.milp.context import BuiltModel
from schedkit.milp.readback import exact_result
from schedkit.milp.solution_files import BOUND_TOLERANCE, read_solution
from schedkit.milp.solvers.base import RawSolution
from schedkit.schedule import Schedule, Termination
from schedkit.validate import validate

FORMATS = {".lp": "lp", ".mps": "mps"}


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise SchedkitError(f"{path}: unknown model format '{path.suffix}' (use .lp or .mps)")
    return fmt


#: Bytes of file per nonzero (measured on examples/hetero20.yaml: 35 in LP, 87 in MPS; per
#: nonzero estimated, a layered graph of 1,000 tasks on 4 devices: 31 and 73, DenseNet-121: 25 and 66).
FILE_BYTES_PER_NONZERO = {"lp": 40, "mps": 100}
#: Bytes of memory per nonzero estimated, at the peak of the whole ``export`` process: the
#: model's rows in Python, then the file streamed out a chunk at a time (MPS also keeps every
#: row's name and sorts the nonzeros by column). Measured peaks, LP and MPS: layered graphs
#: on 4 devices of 1,000 tasks (13.8 M nonzeros estimated, 12.0 M made) 1.0 and 1.4 GB, of
#: 2,000 tasks (45 M) 2.7 and 3.7 GB, LP of 3,500 tasks (123 M) 7.6 GB; DenseNet-121 (4.06 M)
#: 0.28 and 0.35 GB: at most 72 and 101 bytes. (Before the writers streamed, 1.25 and 1.94 GB
#: on the 1,000 tasks, and the check took the solve's 300 bytes: 2,000 tasks were refused.)
MEMORY_PER_NONZERO = {"lp": 80, "mps": 110}


def check_export(formulation, problem, path: str | Path, memory: int | None = None,
                 disk: int | None = None) -> int:
    """Refuse, before anything is built, a model that cannot be built and written in the
    memory free (``memory``, bytes; by default what the machine has:
    :func:`~schedkit.machine.ensure_fits`) or to the disk free at ``path`` (``disk``,
    bytes); return the estimated nonzeros.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.milp import get_formulation
    >>> f, p = get_formulation("latency"), Problem.load("examples/hetero20.yaml")
    >>> 3000 < check_export(f, p, "h.lp") < 30000
    True
    >>> check_export(f, p, "h.mps", disk=10**5)
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: h.mps: not written: its model of about 5,461 nonzeros (0.00 GB of MPS): 0.00 GB are free on its disk
    >>> check_export(f, p, "h.lp", memory=8 * 10**5)
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: h.lp: not written: its model of about 5,461 nonzeros (0.00 GB of LP), built and written: about 0.0 GB of memory, more than half of the 0.0 GB free
    """
    import shutil

    from schedkit.machine import ensure_fits
    from schedkit.milp.model_size import model_size

    path = Path(path)
    fmt = _format_of(path)
    nonzeros = model_size(formulation, problem)
    size = nonzeros * FILE_BYTES_PER_NONZERO[fmt]
    what = f"{path}: not written: its model of about {nonzeros:,} nonzeros ({size / 2**30:.2f} GB of {fmt.upper()})"
    ensure_fits(f"{what}, built and written", nonzeros * MEMORY_PER_NONZERO[fmt], SchedkitError, memory)
    if disk is None:
        disk = shutil.disk_usage(path.resolve().parent).free
    if size > disk:
        raise SchedkitError(f"{what}: {disk / 2**30:.2f} GB are free on its disk")
    return nonzeros


def write_model(built: BuiltModel, path: str | Path) -> dict[str, int]:
    """Write ``built`` as an LP or MPS file (by suffix), atomically; return column name -> index."""
    from schedkit.milp.lpfile import write_lp, write_mps

    path = Path(path)
    writer = write_lp if _format_of(path) == "lp" else write_mps
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as out:
            columns = writer(built.linear, out)
    return {name: col for col, name in enumerate(columns)}


def variable_names(built: BuiltModel) -> dict[str, int]:
    """Column name -> column index, exactly as :func:`write_model` names them (the rows
    are not named: on a large model their names take more memory than the columns')."""
    from schedkit.milp.lpnames import column_names

    return {name: col for col, name in enumerate(column_names(built.linear))}


def load_solution(built: BuiltModel, path: str | Path, method: str = "external",
                  bound: float | None = None) -> Schedule:
    """Turn an external solver's solution of an exported model into a validated schedule.

    The solution must be of this very model: every value names one of its columns, every
    column that is not fixed has a value, and the values satisfy every row (a solution of
    another formulation or problem is refused, naming what does not fit). The schedule is
    read back from the values (devices and device orders; exact left-shifted times) and
    validated on the problem and formulation.

    A solver's "optimal" only says its own tolerances were met, so the status is
    ``feasible`` unless the makespan meets a proven lower bound: ``bound`` (the solver's
    best bound, from its log), else the bound the solution file states (HiGHS's
    ``Objective_bound``), or the instance's own. The gap is then the real one.
    """
    names = variable_names(built)
    found = read_solution(path, names)
    lin = built.linear
    missing = [n for n, col in names.items() if n not in found.values and lin.lower[col] != lin.upper[col]]
    if missing:
        more = f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ScheduleError(f"{path}: no value for variable '{missing[0]}'{more}")
    vector = [found.values.get(name, lin.lower[col]) for name, col in names.items()]
    broken = lin.violated_rows(vector, tol=max(1e-6, found.precision))
    label = getattr(built.formulation, "name", "custom")
    if broken:
        more = f" (+{len(broken) - 1} more)" if len(broken) > 1 else ""
        raise ScheduleError(f"{path}: the values break '{broken[0]}'{more} of the model of formulation "
                            f"'{label}': was it exported with another formulation or problem? see -f")
    if bound is not None and not math.isfinite(bound):
        raise ScheduleError(f"{path}: the bound {bound} is not a finite number")
    objective = vector[built.context.family("makespan").col]
    # Without --bound, the solver's own bound as its file states it (HiGHS: Objective_bound),
    # which may exceed the exact read-back by the solver's tolerances.
    slack = 1e-9 if bound is not None else BOUND_TOLERANCE
    if bound is None:
        bound = found.proven_bound(objective)
    raw = RawSolution(Termination.FINISHED, optimal=False, values=vector, bound=bound,
                      objective=objective)
    result = exact_result(built, raw, method)
    if built.formulation is not None:
        result = result.model_copy(update={"formulation": built.formulation.to_data()})
    schedule = result.to_schedule()
    if bound is not None and schedule.makespan is not None and bound > schedule.makespan * (1 + slack):
        raise ScheduleError(f"{path}: the bound {bound:g} is above the makespan {schedule.makespan:g} "
                            f"of the schedule read back: not a valid lower bound")
    validate(built.problem, schedule, built.blocks)
    return schedule
