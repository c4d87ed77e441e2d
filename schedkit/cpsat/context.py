"""The CP-SAT model of a formulation, as the blocks' ``build_cp`` see it.

It lives in the CP-SAT worker process only (OR-Tools and HiGHS cannot share one process):
the worker hands each block a :class:`CpContext`, whose ``model`` is an OR-Tools
``CpModel`` and whose variables are created once, here, so that blocks share them.

- per task ``i``: ``start[i]``, ``end[i]`` (integer ticks, see :mod:`.ticks`), and per
  allowed device ``d`` a presence literal ``on[i][d]`` with an optional interval
  ``interval[i][d]`` of the task's duration there (``end = start + duration`` holds on
  the device the task runs on);
- the makespan, the latest end, which the objective minimises;
- on first use (the ``channels`` block), per edge that may move data a transfer: its start
  and end and, per moving device pair, a literal (both ends there) with an optional
  interval of the transfer time (:meth:`CpContext.transfers`).

Each block adds what it means with the scheduling vocabulary: ``add_exactly_one``,
``add_no_overlap`` on the intervals of a device, a channel or a port, enforcement literals
for communication delays. The context imports nothing from OR-Tools itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedkit.problem import Problem


@dataclass
class Transfer:
    """The CP variables of one edge's transfer (see :meth:`CpContext.transfers`)."""

    edge: tuple[int, int]
    start: object
    end: object
    #: ``(u, v) -> (literal, interval)`` for every device pair that moves the data.
    pairs: dict[tuple[int, int], tuple[object, object]] = field(default_factory=dict)


class CpContext:
    """Variables of one CP-SAT model of ``problem``, in integer ticks of ``1 / scale`` time units.

    Parameters
    ----------
    model : ortools.sat.python.cp_model.CpModel
        The model the blocks add to.
    problem : Problem
        The instance.
    ticks : schedkit.cpsat.ticks.Ticks
        How times become integers.
    horizon : int
        Upper bound of every time variable, in ticks.
    """

    def __init__(self, model, problem: Problem, ticks, horizon: int):
        self.model, self.problem, self.ticks, self.horizon = model, problem, ticks, horizon
        p = problem
        self.duration = [{d: ticks.up(table[d]) for d in p.allowed[i]} for i, table in enumerate(p.durations)]
        self.start, self.end, self.on, self.interval = [], [], [], []
        for i, name in enumerate(p.tasks):
            least = min(self.duration[i].values())
            start = model.new_int_var(0, max(0, horizon - least), f"start({name})")
            end = model.new_int_var(least, max(least, horizon), f"end({name})")
            on, interval = {}, {}
            for d in p.allowed[i]:
                label = f"{name}_{p.devices[d]}"
                if len(p.allowed[i]) == 1:
                    on[d] = model.new_constant(1)
                    interval[d] = model.new_interval_var(start, self.duration[i][d], end, f"on({label})")
                else:
                    # Each optional interval ends at its own expression, tied to the task's end
                    # when present: OR-Tools 9.15 declares feasible models infeasible when
                    # optional intervals of different sizes share one end variable (a 5-task
                    # case in tests/cpsat/test_cpsat.py).
                    on[d] = model.new_bool_var(f"x({label})")
                    length = self.duration[i][d]
                    interval[d] = model.new_optional_interval_var(start, length, start + length, on[d],
                                                               f"on({label})")
                    model.add(end == start + length).only_enforce_if(on[d])
            self.start.append(start)
            self.end.append(end)
            self.on.append(on)
            self.interval.append(interval)
        self.makespan = model.new_int_var(0, horizon, "makespan")
        model.add_max_equality(self.makespan, self.end)
        model.minimize(self.makespan)
        self._transfers: list[Transfer] | None = None
        #: What a block had to round the safe way (memory in no whole unit): not a proof then.
        self.rounded: list[str] = []
        #: Under ``batching``, its slots ``(task, device, k, presence, start, length, input literals)``
        #: (read back as batches), and how to fix them to a schedule (:meth:`fix`).
        self.batches: list | None = None
        self.fix_batches = None

    def transfers(self) -> list[Transfer]:
        """The transfers of every edge that may move data, created on first use.

        A transfer leaves after its source ends and, on the device pair ``(u, v)`` its ends
        take, lasts the transfer time from ``u`` to ``v`` (an optional interval present
        exactly when the source runs on ``u`` and the consumer on ``v``); on one device, or
        between devices with no link path, nothing moves.
        """
        if self._transfers is not None:
            return self._transfers
        p, model, up = self.problem, self.model, self.ticks.up
        self._transfers = []
        for i, j, size in p.edges:
            moving = [(u, v) for u in p.allowed[i] for v in p.allowed[j]
                      if p.pair_allowed(size, u, v) and p.moves(size, u, v)]
            if not moving:
                continue
            key = f"{p.tasks[i]}_{p.tasks[j]}"
            start = model.new_int_var(0, self.horizon, f"tstart({key})")
            end = model.new_int_var(0, self.horizon, f"tend({key})")
            model.add(start >= self.end[i])
            model.add(end >= start)
            transfer = Transfer((i, j), start, end)
            for u, v in moving:
                both = model.new_bool_var(f"presence({key}_{p.devices[u]}_{p.devices[v]})")
                model.add_bool_and([self.on[i][u], self.on[j][v]]).only_enforce_if(both)
                model.add_bool_or([self.on[i][u].negated(), self.on[j][v].negated(), both])
                length = up(p.comm_time(size, u, v))
                # (its own end expression: see the task intervals above)
                interval = model.new_optional_interval_var(start, length, start + length, both,
                                                        f"transfer({key}_{p.devices[u]}_{p.devices[v]})")
                model.add(end == start + length).only_enforce_if(both)
                transfer.pairs[u, v] = (both, interval)
            self._transfers.append(transfer)
        return self._transfers

    def fix(self, schedule) -> None:
        """Fix every task's device and start, and every transfer's start, to ``schedule``'s
        (the conformance kit asks whether the model accepts a valid schedule)."""
        p, model, up = self.problem, self.model, self.ticks.up
        if self.fix_batches is not None:
            self.fix_batches(schedule)
            return
        for row in schedule.tasks:
            i = p.task_index[row.task]
            model.add(self.on[i][p.device_index[row.device]] == 1)
            model.add(self.start[i] == up(row.start))
        starts = {(p.task_index[t.src], p.task_index[t.dst]): t.start for t in schedule.transfers}
        for transfer in self.transfers() if self._transfers is not None else ():
            if transfer.edge in starts:
                model.add(transfer.start == up(starts[transfer.edge]))

    def hint(self, schedule) -> None:
        """Hint the solver with ``schedule`` (its devices and its start times, rounded up)."""
        p, model, up = self.problem, self.model, self.ticks.up
        if self.batches is not None:
            return  # (a batched schedule hints no task-level variable)
        rows = {r.task: r for r in schedule.tasks}
        for i, name in enumerate(p.tasks):
            row = rows.get(name)
            if row is None:
                continue
            d = p.device_index[row.device]
            model.add_hint(self.start[i], min(self.horizon, up(row.start)))
            for e, literal in self.on[i].items():
                if len(self.on[i]) > 1:
                    model.add_hint(literal, int(e == d))
