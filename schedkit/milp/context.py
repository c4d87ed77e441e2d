"""The build context: variable families created on first use, and instance-derived constants.

Blocks never create columns of a shared family themselves; they ask the context
for the family by name (``ctx.family("x")``), which creates it the first time,
after the families it requires (:mod:`schedkit.milp.families`). Every family hands out
its variables as :class:`~schedkit.blocks.expr.Expr` values (``x.x(i, d)``,
``timing.end(i)``); built-in blocks write rows as arithmetic on them into a sparse
row sink (:class:`~schedkit.milp.linear.RowBlock`): the fast path, with no Pyomo object
made. A user block may instead write Pyomo constraints into its own ``pyo.Block`` with
the context's Pyomo face (``ctx.x(i, d)``, ``ctx.end(i)``, ...: the same expressions,
made Pyomo ones by :meth:`ModelContext.pyomo`); its rows are read back into the same
sparse model (:func:`schedkit.milp.pyomo_model.add_pyomo_block`).

Columns are named by task and device *names*, so an exported LP file reads
``x(attn_gpu0)``, ``start(attn)``, ``no_overlap.disjunct(attn_mlp_gpu0_before)``.

Big-M constants come from the instance: ``horizon`` is the makespan of a schedule
that satisfies every block of the formulation (or a serial bound), and a pair's
constant is ``horizon - tail(i) - head(j)`` when the task graph orders its edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedkit.blocks.expr import Expr
from schedkit.errors import FormulationError
from schedkit.milp.families import FAMILIES, Family
from schedkit.milp.linear import LinearModel, RowBlock
from schedkit.problem import Problem
from schedkit.timing.rules import TimingRules

__all__ = ["ModelContext", "BuiltModel", "RowBlock"]


class ModelContext:
    """The sparse model under construction, its variable families and constants: the one
    implementation of :class:`schedkit.blocks.BuildContext`, the protocol blocks build against.

    Parameters
    ----------
    problem : Problem
    lin : LinearModel
    horizon : float
        An upper bound on the optimal makespan, valid for this formulation.
    orders_edges : bool
        Whether a block makes every edge's destination wait for its source (heads and
        tails then bound start times).
    lower_bound : float
        A valid lower bound on the makespan (the makespan column's lower bound).
    communication : bool
        Whether the waits include transfer times (device heads and tails count them).

    Attributes
    ----------
    heads, tails : list of float
        Device-free heads and tails (zeros when no block orders the edges).
    device_heads, device_tails : list of dict
        ``device_heads[i][d]``: earliest start of ``i`` on ``d``; ``device_tails[i][d]``:
        least time from its end on ``d`` to the makespan (see
        :meth:`~schedkit.problem.Problem.device_heads_tails`).
    families : dict
        The families made so far, by name, in the order they were made.
    """

    def __init__(self, problem: Problem, lin: LinearModel, horizon: float, orders_edges: bool,
                 lower_bound: float = 0.0, communication: bool = True):
        self.problem = problem
        self.lin = lin
        self.lower_bound = lower_bound
        self.horizon = horizon
        self.orders_edges = orders_edges
        self.communication = communication
        n = len(problem.tasks)
        self.heads = problem.heads if orders_edges else [0.0] * n
        self.tails = problem.tails if orders_edges else [0.0] * n
        if orders_edges:
            self.device_heads, self.device_tails = problem.device_heads_tails(communication)
        else:
            self.device_heads = self.device_tails = [dict.fromkeys(a, 0.0) for a in problem.allowed]
        self.families: dict[str, Family] = {}
        self._making: list[str] = []
        self.pyomo_model = None
        self.pyomo_vars: list = []

    def __getstate__(self) -> dict:
        # A Pyomo model holds rule closures that do not pickle; it is made again on demand
        # from the sparse rows, which hold every row (user blocks' included).
        state = dict(self.__dict__)
        state["pyomo_model"], state["pyomo_vars"] = None, []
        return state

    # ------------------------------------------------------------------ families
    def family(self, name: str) -> Family:
        """The family called ``name``, made now if it does not exist yet."""
        made = self.families.get(name)
        if made is not None:
            return made
        if name in self._making:
            raise FormulationError(f"variable families require each other in a cycle: "
                                   f"{' -> '.join(self._making + [name])}")
        cls = FAMILIES.get(name)
        self._making.append(name)
        try:
            for required in cls.requires:
                self.family(required)
            made = cls(self)
            made.create()
        finally:
            self._making.pop()
        self.families[name] = made
        return made

    def has(self, name: str) -> bool:
        """Whether the family ``name`` was made."""
        return name in self.families

    def big_m(self, i: int, j: int) -> float:
        """A valid upper bound on ``end[i] - start[j]``."""
        return max(0.0, self.horizon - self.tails[i] - self.heads[j])

    # ------------------------------------------------------------------ Pyomo face
    def pyomo(self, expr: Expr):
        """Pyomo face: ``expr`` as a Pyomo linear expression over the model's variables."""
        from schedkit.milp.pyomo_model import as_pyomo

        if self.pyomo_model is None:
            raise FormulationError("Pyomo variables exist only while a Pyomo block builds")
        return as_pyomo(expr, self.pyomo_vars)

    def x(self, i: int, d: int):
        """Pyomo face: ``x[i, d]`` as a Pyomo linear expression, always.

        The binary itself (coefficient 1) when task ``i`` has a choice of device, else
        the constant 1 (``d`` is its only device) or 0: sums and comparisons need no
        special case. :meth:`x_var` gives the variable itself.
        """
        return self.pyomo(self.family("x").x(i, d))

    def x_var(self, i: int, d: int):
        """Pyomo face: the binary of ``(i, d)``, or ``None`` when the assignment is fixed."""
        col = self.family("x").col(i, d)
        return None if col is None else self._var(col)

    def start(self, i: int):
        """Pyomo face: the start-time variable of task ``i``."""
        return self._var(self.family("timing").start_col(i))

    def end(self, i: int):
        """Pyomo face: ``end[i]`` as a Pyomo linear expression."""
        return self.pyomo(self.family("timing").end(i))

    def makespan(self):
        """Pyomo face: the makespan variable."""
        return self._var(self.family("makespan").col)

    def order(self, i: int, j: int):
        """Pyomo face: the order binary of an unordered pair ``i < j``."""
        return self._var(self.family("order").col(i, j))

    def _var(self, col: int):
        if self.pyomo_model is None:
            raise FormulationError("Pyomo variables exist only while a Pyomo block builds")
        return self.pyomo_vars[col]


@dataclass
class BuiltModel:
    """A built model with what is needed to solve it and to read a schedule back.

    Picklable, also after its Pyomo model was made (a process pool or a cluster can
    carry it); the Pyomo model is made again on first use after unpickling.

    Attributes
    ----------
    linear : LinearModel
        The sparse MILP (what LP/MPS files and the embedded HiGHS receive).
    problem : Problem
    blocks : list of Block
    context : ModelContext
    horizon : float
        The big-M horizon used.
    warm : Schedule or None
        The schedule the horizon came from (usable as a warm start).
    build_seconds : float
    lower_bound : float
    formulation : Formulation or None
        The formulation the model was built from.
    rules : TimingRules
        What the formulation asks of timing on ``problem`` (the read-back's rules).
    """

    linear: LinearModel
    problem: Problem
    blocks: list
    context: ModelContext
    horizon: float
    warm: object = None
    build_seconds: float = 0.0
    lower_bound: float = 0.0
    formulation: object = None
    extras: dict = field(default_factory=dict)
    rules: TimingRules = field(default_factory=TimingRules)

    @property
    def model(self):
        """The Pyomo model (one ``pyo.Block`` per constraint block), made on first use."""
        ctx = self.context
        if ctx.pyomo_model is None:
            from schedkit.milp.pyomo_model import to_pyomo

            ctx.pyomo_model, ctx.pyomo_vars = to_pyomo(self.linear)
        return ctx.pyomo_model

    @property
    def variables(self) -> list:
        """The Pyomo variable of every column, in column order."""
        self.model  # noqa: B018 - makes the Pyomo model
        return self.context.pyomo_vars
