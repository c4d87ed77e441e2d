"""The build context: shared variable families, created once, and instance-derived constants.

Blocks never create variables of a shared family themselves; they ask the context.
Variables are indexed by task and device *names*, so an exported LP file reads
``x(attn_gpu0)``, ``start(attn)``, ``no_overlap.order_on(attn_mlp_gpu0)``.

Big-M constants come from the instance: ``horizon`` is the makespan of a schedule
that satisfies every block of the formulation (or a serial bound), and a
pair's constant is ``horizon - tail(i) - head(j)`` when precedence holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .problem import Problem


class BuildContext:
    """Holds the Pyomo model under construction and the shared variable families.

    Parameters
    ----------
    problem : Problem
    model : pyomo.environ.ConcreteModel
    horizon : float
        An upper bound on the optimal makespan, valid for this formulation.
    timing_bounds : bool
        Whether heads and tails may bound start times (true when precedence is built).
    lower_bound : float
        A valid lower bound on the makespan (the variable's lower bound).
    """

    def __init__(self, problem: Problem, model: pyo.ConcreteModel, horizon: float, timing_bounds: bool,
                 lower_bound: float = 0.0):
        self.problem = problem
        self.lower_bound = lower_bound
        self.model = model
        self.horizon = horizon
        n = len(problem.tasks)
        self.heads = problem.heads if timing_bounds else [0.0] * n
        self.tails = problem.tails if timing_bounds else [0.0] * n
        self._x: dict[tuple[int, int], pyo.Var] = {}
        self._families: set[str] = set()

    # ------------------------------------------------------------------ x
    def _ensure_x(self) -> None:
        if "x" in self._families:
            return
        self._families.add("x")
        p = self.problem
        index = [(p.tasks[i], p.devices[d]) for i in range(len(p.tasks)) if len(p.allowed[i]) > 1
                 for d in p.allowed[i]]
        self.model.x = pyo.Var(index, domain=pyo.Binary, dense=True)
        for i in range(len(p.tasks)):
            if len(p.allowed[i]) > 1:
                for d in p.allowed[i]:
                    self._x[i, d] = self.model.x[p.tasks[i], p.devices[d]]

    def x(self, i: int, d: int):
        """Assignment of task ``i`` to device ``d``: a binary, or the constant 0 or 1."""
        self._ensure_x()
        var = self._x.get((i, d))
        if var is not None:
            return var
        return 1 if d in self.problem.allowed[i] else 0

    def x_var(self, i: int, d: int):
        """The binary of ``(i, d)``, or ``None`` when the assignment is fixed."""
        self._ensure_x()
        return self._x.get((i, d))

    # ------------------------------------------------------------------ timing
    def _ensure_timing(self) -> None:
        if "timing" in self._families:
            return
        self._families.add("timing")
        p = self.problem
        model = self.model
        # A hair of slack so that a schedule whose makespan *is* the horizon stays inside
        # the bounds despite rounding in the sums of durations.
        slack = 1e-9 * max(1.0, self.horizon)
        bounds = {p.tasks[i]: (self.heads[i],
                               max(self.heads[i], self.horizon - self.tails[i] - p.min_duration[i] + slack))
                  for i in range(len(p.tasks))}
        model.start = pyo.Var(p.tasks, domain=pyo.NonNegativeReals, bounds=lambda m, t: bounds[t], dense=True)
        self._starts = [model.start[t] for t in p.tasks]
        # Tasks with a choice of device get an 'end' column defined once
        # (end = start + sum_d p[i,d] x[i,d]); rows then refer to end[i] alone, which
        # halves the nonzeros of the disjunctive rows. A fixed task's end is start + p.
        flexible = [t for i, t in enumerate(p.tasks) if len(p.allowed[i]) > 1]
        end_bounds = {t: (bounds[t][0] + p.min_duration[p.task_index[t]],
                          self.horizon - self.tails[p.task_index[t]] + slack) for t in flexible}
        model.end = pyo.Var(flexible, domain=pyo.NonNegativeReals, bounds=lambda m, t: end_bounds[t],
                            dense=True)
        ends = []
        definitions = {}
        for i in range(len(p.tasks)):
            if len(p.allowed[i]) == 1:
                ends.append((p.durations[i][p.allowed[i][0]], [1.0], [self._starts[i]]))
                continue
            end = model.end[p.tasks[i]]
            coefs, vars_ = [1.0, -1.0], [end, self._starts[i]]
            for d, dur in p.durations[i].items():
                if dur:
                    coefs.append(-dur)
                    vars_.append(self.x_var(i, d))
            definitions[p.tasks[i]] = (coefs, vars_)
            ends.append((0.0, [1.0], [end]))
        model.end_def = pyo.Constraint(list(definitions), rule=lambda m, t: (
            0.0, linear(0.0, *definitions[t]), 0.0))
        self._end_terms = ends

    def start(self, i: int):
        """The start-time variable of task ``i``."""
        self._ensure_timing()
        return self._starts[i]

    def end_terms(self, i: int) -> tuple[float, list[float], list]:
        """``end[i]`` as ``(constant, coefficients, variables)``: start plus assigned duration."""
        self._ensure_timing()
        return self._end_terms[i]

    def end(self, i: int):
        """``end[i]`` as a Pyomo linear expression."""
        constant, coefs, vars_ = self.end_terms(i)
        return linear(constant, coefs, vars_)

    # ------------------------------------------------------------------ makespan
    def makespan(self):
        """The makespan variable, with ``makespan >= end[i]`` for every task (created once)."""
        if "makespan" not in self._families:
            self._families.add("makespan")
            p = self.problem
            lower = max(self.lower_bound,
                        max(self.heads[i] + p.min_duration[i] + self.tails[i] for i in range(len(p.tasks))))
            self.model.makespan = pyo.Var(domain=pyo.NonNegativeReals,
                                         bounds=(lower, self.horizon * (1 + 1e-9)))
            self.model.makespan_def = pyo.Constraint(p.tasks, rule=lambda m, t: _ge(
                self.model.makespan, self.end_terms(p.task_index[t]), self.tails[p.task_index[t]]))
        return self.model.makespan

    # ------------------------------------------------------------------ order
    def order_pairs(self) -> list[tuple[int, int]]:
        """Pairs ``i < j`` that may share a device and that the task graph does not order."""
        if not hasattr(self, "_pairs"):
            p = self.problem
            allowed = [set(a) for a in p.allowed]
            self._pairs = [(i, j) for i in range(len(p.tasks)) for j in range(i + 1, len(p.tasks))
                           if not p.ordered(i, j) and not allowed[i].isdisjoint(allowed[j])]
        return self._pairs

    def order(self, i: int, j: int):
        """Order binary of an unordered pair ``i < j``: 1 when ``i`` comes first."""
        if "order" not in self._families:
            self._families.add("order")
            p = self.problem
            self.model.order = pyo.Var([(p.tasks[a], p.tasks[b]) for a, b in self.order_pairs()],
                                       domain=pyo.Binary, dense=True)
        return self.model.order[self.problem.tasks[i], self.problem.tasks[j]]

    # ------------------------------------------------------------------ constants
    def big_m(self, i: int, j: int) -> float:
        """A valid upper bound on ``end[i] - start[j]``."""
        return max(0.0, self.horizon - self.tails[i] - self.heads[j])


def _ge(makespan, end_terms, tail):
    constant, coefs, vars_ = end_terms
    if not tail and len(vars_) == 1:
        return makespan >= vars_[0] + constant
    return makespan >= linear(constant + tail, coefs, vars_)


def linear(constant: float, coefs: list[float], vars_: list):
    """A Pyomo linear expression built directly (no operator overloading per term)."""
    return LinearExpression(constant=constant, linear_coefs=list(coefs), linear_vars=list(vars_))


@dataclass
class BuiltModel:
    """A built Pyomo model with what is needed to read a schedule back.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
    problem : Problem
    blocks : list of Block
    horizon : float
        The big-M horizon used.
    warm : Schedule or None
        The schedule the horizon came from (usable as a warm start).
    build_seconds : float
    """

    model: pyo.ConcreteModel
    problem: Problem
    blocks: list
    context: BuildContext
    horizon: float
    warm: object = None
    build_seconds: float = 0.0
    lower_bound: float = 0.0
    extras: dict = field(default_factory=dict)
