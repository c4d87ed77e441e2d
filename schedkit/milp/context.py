"""The build context: shared variable families, created once, and instance-derived constants.

Blocks never create columns of a shared family themselves; they ask the context.
Built-in blocks write sparse rows (:class:`RowBlock`) with column indices from
``x_col``, ``start_col``, ``end_terms``, ``order_col`` and ``makespan_col``: this is the
fast path, with no Pyomo object made. A user block may instead write Pyomo
constraints into its own ``pyo.Block``, with variables from ``x``, ``start``, ``end``,
``order`` and ``makespan``; its rows are read back into the same sparse model.

Columns are named by task and device *names*, so an exported LP file reads
``x(attn_gpu0)``, ``start(attn)``, ``no_overlap.disjunct(attn_mlp_gpu0_before)``.

Big-M constants come from the instance: ``horizon`` is the makespan of a schedule
that satisfies every block of the formulation (or a serial bound), and a
pair's constant is ``horizon - tail(i) - head(j)`` when precedence holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedkit.errors import FormulationError
from schedkit.milp.linear import INF, LinearModel
from schedkit.problem import Problem


class RowBlock:
    """Where one constraint block writes its rows: groups named ``KIND.NAME(key)``.

    Examples
    --------
    >>> lin = LinearModel()
    >>> cols = lin.add_columns("start", [("a",), ("b",)], lower=0, upper=10)
    >>> RowBlock(lin, "precedence").add("delay", ("a", "b"), [cols[1], cols[0]], [1, -1], lower=2)
    >>> lin.row_name(0)
    'precedence.delay(a_b)'
    """

    def __init__(self, lin: LinearModel, kind: str):
        self.lin = lin
        self.kind = kind

    def add(self, name: str, key, cols, coefs, lower: float = -INF, upper: float = INF) -> None:
        """Add ``lower <= sum(coefs * cols) <= upper`` as row ``KIND.name(key)``."""
        self.lin.add_row(self.kind, name, key, cols, coefs, lower, upper)


class BuildContext:
    """The sparse model under construction and its shared column families.

    Parameters
    ----------
    problem : Problem
    lin : LinearModel
    horizon : float
        An upper bound on the optimal makespan, valid for this formulation.
    timing_bounds : bool
        Whether heads and tails may bound start times (true when precedence is built).
    lower_bound : float
        A valid lower bound on the makespan (the variable's lower bound).
    communication : bool
        Whether precedence includes transfer times (device heads and tails count them).

    Attributes
    ----------
    heads, tails : list of float
        Device-free heads and tails (zeros without precedence).
    device_heads, device_tails : list of dict
        ``device_heads[i][d]``: earliest start of ``i`` on ``d``; ``device_tails[i][d]``:
        least time from its end on ``d`` to the makespan (see
        :meth:`~schedkit.problem.Problem.device_heads_tails`).
    """

    def __init__(self, problem: Problem, lin: LinearModel, horizon: float, timing_bounds: bool,
                 lower_bound: float = 0.0, communication: bool = True):
        self.problem = problem
        self.lin = lin
        self.lower_bound = lower_bound
        self.horizon = horizon
        n = len(problem.tasks)
        self.heads = problem.heads if timing_bounds else [0.0] * n
        self.tails = problem.tails if timing_bounds else [0.0] * n
        if timing_bounds:
            self.device_heads, self.device_tails = problem.device_heads_tails(communication)
        else:
            self.device_heads = self.device_tails = [dict.fromkeys(a, 0.0) for a in problem.allowed]
        self._x: dict[tuple[int, int], int] = {}
        self._order: dict[tuple[int, int], int] = {}
        self._families: set[str] = set()
        self.pyomo_model = None
        self.pyomo_vars: list = []

    # ------------------------------------------------------------------ x
    def _ensure_x(self) -> None:
        if "x" in self._families:
            return
        self._families.add("x")
        p = self.problem
        pairs = [(i, d) for i in range(len(p.tasks)) if len(p.allowed[i]) > 1 for d in p.allowed[i]]
        cols = self.lin.add_columns("x", [(p.tasks[i], p.devices[d]) for i, d in pairs], 0, 1, integer=True)
        self._x = dict(zip(pairs, cols))

    def x_col(self, i: int, d: int) -> int | None:
        """Column of the binary ``x[i, d]``, or ``None`` when the assignment is fixed."""
        self._ensure_x()
        return self._x.get((i, d))

    def x_fixed(self, i: int, d: int) -> int:
        """The constant 0 or 1 of an assignment with no column."""
        return 1 if d in self.problem.allowed[i] else 0

    # ------------------------------------------------------------------ timing
    def _ensure_timing(self) -> None:
        if "timing" in self._families:
            return
        self._families.add("timing")
        p = self.problem
        tasks = range(len(p.tasks))
        hd, tl = self.device_heads, self.device_tails
        # A hair of slack so that a schedule whose makespan *is* the horizon stays inside
        # the bounds despite rounding in the sums of durations.
        slack = 1e-9 * max(1.0, self.horizon)
        lower = [min(hd[i].values()) for i in tasks]
        upper = [max(lower[i], self.horizon - min(tl[i][d] + p.durations[i][d] for d in p.allowed[i]) + slack)
                 for i in tasks]
        self._starts = self.lin.add_columns("start", [(t,) for t in p.tasks], lower, upper)
        # Tasks with a choice of device get an 'end' column defined once
        # (end = start + sum_d p[i,d] x[i,d]); rows then refer to end[i] alone, which
        # halves the nonzeros of the disjunctive rows. A fixed task's end is start + p.
        flexible = [i for i in tasks if len(p.allowed[i]) > 1]
        ends = self.lin.add_columns(
            "end", [(p.tasks[i],) for i in flexible],
            [min(hd[i][d] + p.durations[i][d] for d in p.allowed[i]) for i in flexible],
            [self.horizon - min(tl[i].values()) + slack for i in flexible])
        end_of = self._ends = dict(zip(flexible, ends))
        self._end_terms = []
        for i in tasks:
            if i not in end_of:
                self._end_terms.append((p.durations[i][p.allowed[i][0]], [1.0], [self._starts[i]]))
                continue
            cols, coefs = [end_of[i], self._starts[i]], [1.0, -1.0]
            for d, dur in p.durations[i].items():
                if dur:
                    cols.append(self.x_col(i, d))
                    coefs.append(-dur)
            self.lin.add_row(None, "end_def", (p.tasks[i],), cols, coefs, 0.0, 0.0)
            self._end_terms.append((0.0, [1.0], [end_of[i]]))
            # start_i >= sum_d head[i,d] x[i,d]: where the device decides the earliest start
            if max(hd[i].values()) > lower[i]:
                self.lin.add_row(None, "start_head", (p.tasks[i],),
                                 [self._starts[i]] + [self.x_col(i, d) for d in p.allowed[i]],
                                 [1.0] + [-hd[i][d] for d in p.allowed[i]], lower=0.0)

    def start_col(self, i: int) -> int:
        """Column of the start time of task ``i``."""
        self._ensure_timing()
        return self._starts[i]

    def end_col(self, i: int) -> int | None:
        """Column of ``end[i]``, or ``None`` for a task with one device (its end is start + p)."""
        self._ensure_timing()
        return self._ends.get(i)

    def has(self, family: str) -> bool:
        """Whether the shared family (``x``, ``timing``, ``makespan``, ``order``) was made."""
        return family in self._families

    def end_terms(self, i: int) -> tuple[float, list[float], list[int]]:
        """``end[i]`` as ``(constant, coefficients, columns)``: start plus assigned duration."""
        self._ensure_timing()
        return self._end_terms[i]

    # ------------------------------------------------------------------ makespan
    def makespan_col(self) -> int:
        """The makespan column, with ``makespan >= end[i] + tail[i, d]`` for every task (made once).

        The tail is that of the task's device (``sum_d tail[i,d] x[i,d]``).
        """
        if "makespan" not in self._families:
            self._families.add("makespan")
            p = self.problem
            hd, tl = self.device_heads, self.device_tails
            lower = max(self.lower_bound,
                        max(min(hd[i][d] + p.durations[i][d] + tl[i][d] for d in p.allowed[i])
                            for i in range(len(p.tasks))))
            self._makespan = self.lin.add_columns("makespan", [()], lower, self.horizon * (1 + 1e-9))[0]
            for i, t in enumerate(p.tasks):
                constant, coefs, cols = self.end_terms(i)
                # makespan - end_i - sum_d tail[i,d] x[i,d] >= constant
                row_cols, row_coefs = [self._makespan] + cols, [1.0] + [-c for c in coefs]
                if len(p.allowed[i]) == 1:
                    constant += tl[i][p.allowed[i][0]]
                else:
                    for d in p.allowed[i]:
                        if tl[i][d]:
                            row_cols.append(self.x_col(i, d))
                            row_coefs.append(-tl[i][d])
                self.lin.add_row(None, "makespan_def", (t,), row_cols, row_coefs, lower=constant)
        return self._makespan

    # ------------------------------------------------------------------ order
    def order_pairs(self) -> list[tuple[int, int]]:
        """Pairs ``i < j`` that may share a device and that the task graph does not order."""
        if not hasattr(self, "_pairs"):
            p = self.problem
            allowed = [set(a) for a in p.allowed]
            self._pairs = [(i, j) for i in range(len(p.tasks)) for j in range(i + 1, len(p.tasks))
                           if not p.ordered(i, j) and not allowed[i].isdisjoint(allowed[j])]
        return self._pairs

    def order_col(self, i: int, j: int) -> int:
        """Column of the order binary of an unordered pair ``i < j``: 1 when ``i`` comes first."""
        if "order" not in self._families:
            self._families.add("order")
            p = self.problem
            pairs = self.order_pairs()
            cols = self.lin.add_columns("order", [(p.tasks[a], p.tasks[b]) for a, b in pairs], 0, 1,
                                        integer=True)
            self._order = dict(zip(pairs, cols))
        return self._order[i, j]

    # ------------------------------------------------------------------ constants
    def big_m(self, i: int, j: int) -> float:
        """A valid upper bound on ``end[i] - start[j]``."""
        return max(0.0, self.horizon - self.tails[i] - self.heads[j])

    # ------------------------------------------------------------------ Pyomo face
    def _var(self, col: int):
        if self.pyomo_model is None:
            raise FormulationError("Pyomo variables exist only while a Pyomo block builds")
        return self.pyomo_vars[col]

    def x(self, i: int, d: int):
        """Pyomo face: the binary ``x[i, d]``, or the constant 0 or 1 when it is fixed."""
        col = self.x_col(i, d)
        return self.x_fixed(i, d) if col is None else self._var(col)

    def x_var(self, i: int, d: int):
        """Pyomo face: the binary of ``(i, d)``, or ``None`` when the assignment is fixed."""
        col = self.x_col(i, d)
        return None if col is None else self._var(col)

    def start(self, i: int):
        """Pyomo face: the start-time variable of task ``i``."""
        return self._var(self.start_col(i))

    def end(self, i: int):
        """Pyomo face: ``end[i]`` as a Pyomo linear expression."""
        constant, coefs, cols = self.end_terms(i)
        return linear(constant, coefs, [self._var(c) for c in cols])

    def makespan(self):
        """Pyomo face: the makespan variable."""
        return self._var(self.makespan_col())

    def order(self, i: int, j: int):
        """Pyomo face: the order binary of an unordered pair ``i < j``."""
        return self._var(self.order_col(i, j))


def linear(constant: float, coefs: list[float], vars_: list):
    """A Pyomo linear expression built directly (no operator overloading per term)."""
    from pyomo.core.expr.numeric_expr import LinearExpression

    return LinearExpression(constant=constant, linear_coefs=list(coefs), linear_vars=list(vars_))


def add_pyomo_block(ctx: BuildContext, block) -> None:
    """Build a user block that writes Pyomo constraints, and read its rows into ``ctx.lin``.

    The block gets a ``pyo.Block`` named after its kind in the Pyomo model of the
    rows built so far; its constraints must be linear. Variables the block adds
    itself become columns named ``KIND.NAME(index)``.
    """
    import pyomo.environ as pyo
    from pyomo.repn.standard_repn import generate_standard_repn

    if ctx.pyomo_model is None:
        ctx.pyomo_model, ctx.pyomo_vars = ctx.lin.to_pyomo()
    blk = pyo.Block(concrete=True)
    ctx.pyomo_model.add_component(block.kind, blk)
    block.build(ctx, blk)
    column = {id(v): c for c, v in enumerate(ctx.pyomo_vars)}
    for var in blk.component_data_objects(pyo.Var, descend_into=True):
        if id(var) in column:
            continue
        index = var.index()
        key = () if index is None else (index if isinstance(index, tuple) else (index,))
        lower = -INF if var.lb is None else var.lb
        upper = INF if var.ub is None else var.ub
        name = var.parent_component().getname(relative_to=blk)
        column[id(var)] = ctx.lin.add_columns(name, [key], lower, upper, integer=var.is_integer(),
                                              block=block.kind)[0]
        ctx.pyomo_vars.append(var)
    for con in blk.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = generate_standard_repn(con.body, compute_values=True)
        label = con.getname(fully_qualified=True)
        if not repn.is_linear():
            raise FormulationError(f"block '{block.kind}': constraint {label} is not linear")
        constant = float(repn.constant)
        lower = -INF if con.lower is None else float(pyo.value(con.lower)) - constant
        upper = INF if con.upper is None else float(pyo.value(con.upper)) - constant
        index = con.index()
        key = () if index is None else (index if isinstance(index, tuple) else (index,))
        name = con.parent_component().getname(relative_to=blk)
        ctx.lin.add_row(block.kind, name, key, [column[id(v)] for v in repn.linear_vars],
                        [float(a) for a in repn.linear_coefs], lower, upper)


@dataclass
class BuiltModel:
    """A built model with what is needed to solve it and to read a schedule back.

    Attributes
    ----------
    linear : LinearModel
        The sparse MILP (what LP/MPS files and the embedded HiGHS receive).
    problem : Problem
    blocks : list of Block
    context : BuildContext
    horizon : float
        The big-M horizon used.
    warm : Schedule or None
        The schedule the horizon came from (usable as a warm start).
    build_seconds : float
    lower_bound : float
    """

    linear: LinearModel
    problem: Problem
    blocks: list
    context: BuildContext
    horizon: float
    warm: object = None
    build_seconds: float = 0.0
    lower_bound: float = 0.0
    extras: dict = field(default_factory=dict)

    @property
    def model(self):
        """The Pyomo model (one ``pyo.Block`` per constraint block), made on first use."""
        ctx = self.context
        if ctx.pyomo_model is None:
            ctx.pyomo_model, ctx.pyomo_vars = self.linear.to_pyomo()
        return ctx.pyomo_model

    @property
    def variables(self) -> list:
        """The Pyomo variable of every column, in column order."""
        self.model  # noqa: B018 - makes the Pyomo model
        return self.context.pyomo_vars
