"""Lower bounds from critical subsets of tasks: the model restricted to a few tasks.

Leaving tasks out of a scheduling problem can only shorten its best schedule. The
model restricted to a subset ``S`` of tasks (:meth:`~schedkit.milp.linear.LinearModel.restrict`:
every other column projected out of each row) is therefore a relaxation, and its
optimum a lower bound on the makespan. It keeps what the whole model knows about
``S``: device heads and tails (transfers included), the precedence and device order
among tasks of ``S``, the load and chain rows; *distance rows*
``start_j >= end_i + L_ij`` put back the chains of left-out tasks between two tasks of
``S`` (``L_ij``: the longest chain of shortest durations strictly between them).

Which tasks? Those that make schedules long. The search starts from a critical path of
the best schedule known, solves the restricted model, extends its device choice to
every task with a list schedule and adds that schedule's critical path, until the bound
meets the best makespan (optimality is then proven) or every task is in.

The extended schedule is itself a candidate: when it is shorter than the incumbent and
satisfies every block, it is handed to the exact solve.

A small subset is often enough where the whole model's relaxation is weak. On the
40-task, 4-device random instance ``er40x4-s3`` of ``benchmarks/exact.py --seeds 4``, the root bound
of the whole model is 52.2 against an optimum of 60.07, and HiGHS alone needs about
20 s to prove it. Here 26 of the 40 tasks, found in three rounds, bound the makespan at
60.07 within about 6 s, and the extension of that round's sub-schedule is an optimal
schedule. The search runs beside the exact solve (:mod:`schedkit.milp.race`), on a
core that HiGHS's branch and bound leaves idle.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.milp import Milp
>>> problem = Problem.load("examples/hetero20.yaml")
>>> built = Milp().build(problem)
>>> path = critical_tasks(problem, built.warm)
>>> sub, _ = subset_model(built, path)
>>> sub.num_cols < built.linear.num_cols
True
"""

from __future__ import annotations

import math
import time

from schedkit.milp.context import BuiltModel
from schedkit.errors import ProblemError
from schedkit.milp.linear import LinearModel
from schedkit.numerics import shorter, time_tolerance
from schedkit.problem import Problem
from schedkit.schedule import Schedule

#: Once a subset holds this share of the tasks, the next round takes them all.
FULL_SHARE = 0.8
#: No round on a restricted model larger than this: HiGHS's root cut loop on a model of
#: millions of nonzeros overruns its time limit by tens of seconds (inceptionv4 under
#: ``-f moirai``, 2.7 M nonzeros after presolve: 57 s for a 40 s limit), and the bound
#: search would hold the whole method past its own.
MAX_SUBSET_NONZEROS = 1_000_000


def critical_tasks(problem: Problem, schedule: Schedule) -> list[int]:
    """The tasks of one critical path of ``schedule``, last first.

    From a task that ends last, step back to what its start waits for: the arrival of a
    predecessor's data (its end plus the transfer) or the end of the task before it on
    its device, whichever is later, until a task that starts at 0 or waits for nothing.

    Examples
    --------
    >>> from schedkit import Problem, solve
    >>> p = Problem.load("examples/tiny.yaml")
    >>> s = solve(p, "heft")    # attn waits for mlp on gpu0, not for its input embed
    >>> [p.tasks[i] for i in critical_tasks(p, s)]
    ['sample', 'logits', 'norm', 'attn', 'mlp', 'embed']
    """
    rows = [None] * len(problem.tasks)
    index = problem.task_index
    on_device: dict[str, list] = {}
    for r in schedule.tasks:
        rows[index[r.task]] = r
        on_device.setdefault(r.device, []).append(r)
    tol = time_tolerance(schedule.makespan)
    current = max(range(len(rows)), key=lambda i: (rows[i].end, -i))
    path, seen = [], set()
    while current is not None and current not in seen:
        path.append(current)
        seen.add(current)
        here = rows[current]
        if here.start <= tol:
            break
        d = problem.device_index[here.device]
        waits, cause = -math.inf, None
        for k, size in problem.preds[current]:
            before = rows[k]
            arrival = before.end + problem.comm_time(size, problem.device_index[before.device], d)
            if arrival > waits:
                waits, cause = arrival, k
        for other in on_device[here.device]:
            k = index[other.task]
            if k != current and other.end <= here.start + tol and other.end > waits \
                    and (other.start, other.end) < (here.start, here.end):
                waits, cause = other.end, k
        current = cause if waits >= here.start - tol else None
    return path


def subset_model(built: BuiltModel, tasks) -> tuple[LinearModel, dict[int, int]]:
    """The model of ``built`` restricted to ``tasks``, with distance rows.

    Distance rows need a block that orders the edges (``precedence``): without one the
    task graph orders nothing and only the restriction itself is added.

    Returns
    -------
    (LinearModel, dict)
        A relaxation of ``built.linear`` on the columns of ``tasks`` (their devices,
        times and the order of their pairs) and the makespan; the new index of every
        kept column.
    """
    p = built.problem
    ctx = built.context
    x, timing = ctx.family("x"), ctx.family("timing")
    chosen = set(tasks)
    keep = [ctx.family("makespan").col]
    for i in sorted(chosen):
        keep += [c for d in p.allowed[i] for c in x.x(i, d).cols]
        keep.append(timing.start_col(i))
        if timing.end_col(i) is not None:
            keep.append(timing.end_col(i))
    if ctx.has("order"):
        order = ctx.family("order")
        keep += [order.col(a, b) for a, b in order.pairs if a in chosen and b in chosen]
    sub, where = built.linear.restrict(keep)
    if len(chosen) < len(p.tasks) and ctx.orders_edges:
        _add_distance_rows(built, sorted(chosen), sub, where)
    return sub, where


def _add_distance_rows(built: BuiltModel, tasks: list[int], sub: LinearModel, where: dict[int, int]) -> None:
    """``start_j - end_i >= L_ij`` for ``i`` before ``j`` in ``tasks`` with tasks between them."""
    p = built.problem
    timing = built.context.family("timing")
    rows = sub.rows("subset")
    order = p.topological_order
    position = {i: k for k, i in enumerate(order)}
    chosen = set(tasks)
    for i in tasks:
        # longest chain of shortest durations from the end of i to the start of each task
        after = {i: 0.0}
        for v in order[position[i]:]:
            if v not in after:
                continue
            gap = after[v] + (p.min_duration[v] if v != i else 0.0)
            for w, _ in p.succs[v]:
                if after.get(w, -1.0) < gap:
                    after[w] = gap
        end = timing.end(i)
        for j, length in after.items():
            if j in chosen and j != i and length > 0:
                rows.add("distance", (p.tasks[i], p.tasks[j]), (timing.start(j) - end).renumbered(where) >= length)


def subset_bounds(built: BuiltModel, schedule: Schedule, shared, deadline: float | None = None,
                  verbose: bool = False) -> None:
    """Raise ``shared``'s lower bound with subsets of tasks until it meets the incumbent.

    Parameters
    ----------
    built : BuiltModel
        The whole model.
    schedule : Schedule
        The best schedule known; its critical path is the first subset.
    shared : schedkit.milp.race.Shared
        Incumbent, bound and stop flag shared with the exact solve.
    deadline : float, optional
        ``time.perf_counter()`` value at which to stop.
    verbose : bool
        Print one line per round.
    """
    from schedkit.milp.readback import warm_values
    from schedkit.milp.solvers.highs import highs_for
    from schedkit.timing import list_schedule, to_schedule
    from schedkit.validate import violations

    p = built.problem
    x, timing = built.context.family("x"), built.context.family("timing")
    n = len(p.tasks)
    chosen = set(critical_tasks(p, schedule))
    while not shared.stop.is_set():
        if len(chosen) >= FULL_SHARE * n:
            chosen = set(range(n))
        began = time.perf_counter()
        cutoff = min(shared.incumbent, schedule.makespan)
        sub, where = subset_model(built, chosen)
        left = None if deadline is None else deadline - time.perf_counter()
        if (left is not None and left <= 0) or sub.num_nonzeros > MAX_SUBSET_NONZEROS:
            return
        h = highs_for(sub, time_limit=left, gap=0.0)
        # only sub-schedules shorter than the incumbent matter; none at all proves it optimal
        h.setOptionValue("objective_bound", float(cutoff))
        shared.watch(h)
        h.run()
        state = h.modelStatusToString(h.getModelStatus())
        if state == "Infeasible":
            bound = cutoff
        else:
            info = h.getInfo()
            bound = min(info.mip_dual_bound, cutoff) if info.valid else -math.inf
        shared.proved(bound)
        if verbose:
            print(f"schedkit: subset bound {bound:.6g} from {len(chosen)} of {n} tasks "
                  f"({state}, {time.perf_counter() - began:.2f} s)", flush=True)
        if state != "Optimal" or len(chosen) == n:
            return
        values = h.getSolution().col_value
        rows = {r.task: r for r in schedule.tasks}
        device_of = [p.device_index[rows[t].device] for t in p.tasks]
        for i in chosen:
            if len(p.allowed[i]) > 1:
                device_of[i] = max(p.allowed[i], key=lambda d: values[where[x.col(i, d)]])
        # Extend the sub-schedule: its devices and order for the subset, the best
        # schedule's for the rest (list scheduling takes the earliest start first).
        priority = [-(values[where[timing.start_col(i)]] if i in chosen else rows[t].start)
                    for i, t in enumerate(p.tasks)]
        transfers = built.rules.transfers(p)
        try:
            devices, starts = list_schedule(p, priority, device_of=device_of, transfers=transfers)
        except ProblemError:  # memory or collocation: that device choice does not extend
            chosen = set(range(n))
            continue
        extended = to_schedule(p, devices, starts, "subset", transfers)
        if shorter(extended.makespan, min(shared.incumbent, schedule.makespan)) \
                and not violations(p, extended, built.blocks):
            shared.offer(extended.makespan, warm_values(built, extended))
            schedule = extended
            if verbose:
                print(f"schedkit: subset schedule of makespan {extended.makespan:.6g} offered", flush=True)
        new = set(critical_tasks(p, extended)) - chosen
        # a critical path inside the subset already: only more tasks can raise the bound
        chosen = chosen | new if new else set(range(n))
