"""The constraint-block base class and its registry.

A block is a frozen pydantic model with a ``kind`` tag. It has three duties:
``build`` (add its constraints, named after the block), ``violations`` (check
its meaning on any schedule, numerically) and ``describe`` (its mathematics,
rendered from a jinja2 template). It declares a ``role``: ``semantic`` blocks state
what a valid schedule is and the validator checks them; ``cut`` blocks only add
valid inequalities; ``symmetry`` blocks remove mirror images (schedules are
relabelled by :meth:`Block.canonicalize`, never rejected).

A block builds in one of two ways. With ``builds_rows = True`` (every built-in
block) ``build(ctx, rows)`` receives a :class:`RowSink` and adds rows written as
:class:`~schedkit.blocks.expr.Expr` arithmetic on the variables of the families it names
in ``requires`` (``x = ctx.family("x")``, then ``rows.add("cap", key, x.x(i, d) <= 1)``):
no Pyomo object is made, which keeps large builds fast. Otherwise ``build(ctx, blk)``
receives its own ``pyo.Block`` and the context's Pyomo face (``ctx.x(i, d)``,
``ctx.start(i)``, ``ctx.end(i)``, ``ctx.makespan()``); its linear rows are read back into
the formulation's sparse model. ``ctx`` satisfies :class:`BuildContext`, declared in
:mod:`schedkit.blocks.context` so that blocks never import the MILP layer.

Examples
--------
A user block that keeps every task off device ``cpu``:

>>> from schedkit.blocks import Block, register_block
>>> @register_block("no_cpu")
... class NoCpu(Block):
...     '''No task runs on the CPU.'''
...     requires = frozenset({"x"})
...     template = "$$x_{i,\\\\mathrm{cpu}} = 0 \\\\quad \\\\forall i$$"
...     def build(self, ctx, blk):
...         pass
...     def violations(self, problem, schedule):
...         return [f"task '{r.task}' runs on the cpu" for r in schedule.tasks if r.device == "cpu"]
>>> block_from_data("no_cpu").kind
'no_cpu'
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import jinja2
from pydantic import BaseModel, ConfigDict, ValidationError

from schedkit.blocks.context import BuildContext, RowSink
from schedkit.errors import FormulationError
from schedkit.registry import Registry, one_line
from schedkit.schedule.batched import is_batched, rows_by_input

BLOCKS = Registry("block", group="schedkit.blocks", error=FormulationError)

Role = Literal["semantic", "cut", "symmetry"]


_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


class Block(BaseModel):
    """Base class of constraint blocks.

    Class attributes
    ----------------
    kind : str
        The block's name in formulations (set by :func:`register_block`).
    role : {"semantic", "cut", "symmetry"}
        ``semantic``: part of what a valid schedule is, checked by the validator;
        ``cut``: valid inequalities only; ``symmetry``: removes mirror images.
    default : bool
        Part of the problem's own semantics, checked on every schedule when no
        formulation is given (the built-in semantic blocks; a user block is checked
        within the formulations that list it).
    requires : frozenset of str
        Variable families the block uses, by name (see :mod:`schedkit.milp.families`).
    interprets : str
        The problem data this block gives meaning to (``"memory capacities"``): a formulation
        without the block ignores it, and ``schedkit solve`` says so.
    subsumes : frozenset of str
        Blocks whose data this block honours too (``memory_timeline`` holds static
        ``memory`` within the capacities): with it, their data is not ignored.
    template : str
        jinja2 template of the block's mathematics (Markdown with LaTeX); the
        block's fields are available in it.
    build_only : frozenset of str
        Parameters that change how the block builds, not what it checks (``no_overlap``'s
        ``encoding``): :meth:`covers` ignores them.
    holds_on_parts : bool
        Whether the block, on a part of the problem (some of its tasks, with stand-ins for the
        data that enters them), asks no more than it asks of those tasks in the whole problem,
        so that a part's optimum under it never exceeds the whole problem's: ``auto``'s series
        search then sums parts' bounds. True of every built-in block; ``False`` by default, since
        a block of your own may not (at least one task per device: a part of two tasks on three
        devices would be infeasible). Set it on yours to let that search run.
    builds_rows : bool
        ``True`` when :meth:`build` writes sparse rows into a :class:`RowSink`; ``False`` (the default) when it adds
        Pyomo constraints to a ``pyo.Block``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    kind: ClassVar[str] = ""
    role: ClassVar[Role] = "semantic"
    default: ClassVar[bool] = False
    interprets: ClassVar[str] = ""
    subsumes: ClassVar[frozenset[str]] = frozenset()
    #: Blocks whose MILP rows this block builds in their place when both are in a formulation.
    replaces: ClassVar[frozenset[str]] = frozenset()
    requires: ClassVar[frozenset[str]] = frozenset()
    template: ClassVar[str] = ""
    builds_rows: ClassVar[bool] = False
    build_only: ClassVar[frozenset[str]] = frozenset()
    holds_on_parts: ClassVar[bool] = False

    def build(self, ctx: BuildContext, blk: RowSink | Any) -> None:
        """Add this block's constraints to ``blk``: a ``pyo.Block``, or a :class:`RowSink` (``builds_rows``)."""
        raise NotImplementedError(f"block '{self.kind}' does not implement build()")

    def build_cp(self, cp) -> None:
        """Add this block's meaning to a CP-SAT model (``cp``: a
        :class:`~schedkit.cpsat.context.CpContext`, in the CP-SAT worker process).

        A block without this form cannot be solved with ``--solver cpsat``; :func:`has_cp_form`
        says so before any model is built.
        """
        raise NotImplementedError(f"block '{self.kind}' has no CP-SAT form")

    def violations(self, problem, schedule) -> list[str]:
        """Messages for every way ``schedule`` breaks this block (empty when it holds)."""
        raise NotImplementedError(f"block '{self.kind}' does not implement violations()")

    def estimate(self, problem) -> int:
        """About how many nonzeros the block's rows will hold on ``problem`` (0: unknown).

        Read before a model is built, to decide whether it can be built and solved within
        a time limit and the memory at hand; within a factor of two is enough.
        """
        return 0

    def estimate_cp(self, problem) -> int:
        """About how many constraints the block's CP-SAT form (:meth:`build_cp`) adds on
        ``problem``; by default :meth:`estimate`, which is never fewer (CP-SAT has intervals
        and no-overlap constraints where the MILP has a big-M row per pair)."""
        return self.estimate(problem)

    def applies_to(self, problem) -> bool:
        """Whether the block says anything about ``problem`` (``memory``: only with a finite capacity)."""
        return True

    def finds_data(self, problem) -> bool:
        """Whether ``problem`` gives the data this block interprets (its ``interprets``), so that
        a formulation without the block ignores it; by default :meth:`applies_to`."""
        return self.applies_to(problem)

    def covers(self, other: Block) -> bool:
        """Whether this block's check implies ``other``'s: the same kind, with the same
        parameters apart from ``build_only`` ones (a block whose parameters weaken its check
        says which cover which).

        Examples
        --------
        >>> from schedkit.blocks import NoOverlap, Precedence
        >>> NoOverlap(encoding="bigm").covers(NoOverlap()), Precedence().covers(NoOverlap())
        (True, False)
        >>> with_data, without = Precedence(), Precedence(communication=False)
        >>> with_data.covers(without), without.covers(with_data)
        (True, False)
        """
        return other.kind == self.kind and \
            self.model_dump(exclude=set(self.build_only)) == other.model_dump(exclude=set(other.build_only))

    def edge_delays(self) -> bool | None:
        """What the block guarantees about edges: ``None`` (nothing), ``False`` (every
        destination starts after its source ends) or ``True`` (and after its data arrived).

        Heads, tails and the bounds derived from them are valid only when some block of
        the formulation orders the edges.
        """
        return None

    def timing_rules(self, rules, problem):
        """The :class:`~schedkit.timing.rules.TimingRules` of a formulation with this block:
        ``rules`` (what the blocks before it contributed) changed by what this block asks of
        timing on ``problem``, or ``rules`` unchanged.

        Every method times schedules by these rules (the heuristics, the MILP's horizon and
        read-back, CP-SAT), so a block that changes timing says so here and nowhere else. By
        default a block that orders the edges (:meth:`edge_delays` not ``None``) says so; a
        block that overrides this hook and orders edges too calls ``super()``.

        Examples
        --------
        >>> from schedkit import Problem
        >>> from schedkit.blocks import Congestion, Precedence
        >>> from schedkit.timing.rules import TimingRules
        >>> p = Problem.load("examples/tiny.yaml")
        >>> Congestion(resource="both").timing_rules(TimingRules(), p).congestion
        'both'
        >>> Precedence(communication=False).timing_rules(TimingRules(), p).communication
        False
        """
        delays = self.edge_delays()
        if delays is None:
            return rules
        return rules.replace(ordered_edges=True, communication=rules.communication or delays)

    def canonicalize(self, problem, schedule):
        """``schedule`` relabelled into this block's canonical form (symmetry blocks)."""
        return schedule

    def describe(self) -> str:
        """The block's mathematics as Markdown with LaTeX, rendered from ``template``."""
        title = f"### `{self.kind}`"
        params = self.model_dump()
        if params:
            title += " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
        doc = (type(self).__doc__ or "").strip().split("\n\n")[0]
        body = _JINJA.from_string(self.template).render(**params, block=self)
        return f"{title}\n\n{doc}\n\n{body.strip()}\n"

    def to_data(self) -> str | dict[str, Any]:
        """The block as formulation data: its kind, or ``{kind: {params}}``."""
        params = self.model_dump(exclude_defaults=True)
        return {self.kind: params} if params else self.kind


def register_block(kind: str, *, replace: bool = False):
    """Class decorator: register a :class:`Block` subclass under ``kind``.

    A kind that is already registered is an error unless ``replace=True``.
    """
    def add(cls):
        if not (isinstance(cls, type) and issubclass(cls, Block)):
            raise TypeError(f"{getattr(cls, '__name__', cls)!r} is not a Block")
        BLOCKS.register(kind, cls, replace=replace)
        cls.kind = kind
        return cls
    return add


def block_from_data(data: str | dict | Block) -> Block:
    """A block from formulation data: ``"memory"`` or ``{"no_overlap": {"encoding": "bigm"}}``."""
    if isinstance(data, Block):
        return data
    if isinstance(data, str):
        kind, params = data, {}
    elif isinstance(data, dict) and len(data) == 1:
        kind, params = next(iter(data.items()))
        params = params or {}
        if not isinstance(params, dict):
            raise FormulationError(f"block '{kind}': parameters must be a mapping, got {params!r}")
    else:
        raise FormulationError(f"a block is a name or a one-key mapping, got {data!r}")
    cls = BLOCKS.get(kind)
    try:
        return cls(**params)
    except ValidationError as exc:
        raise FormulationError(one_line(exc, params, prefix=f"block '{kind}'",
                                        extra="has no parameter '{key}'")) from None


def placed_edges(problem, schedule):
    """Every edge of ``problem`` as ``schedule`` places it, for the blocks' ``violations``.

    Yields ``(size, a, b, u, v, moved)``: the edge's size, its source and consumer rows, their
    device indices and the schedule's transfer row of the edge (``None`` when there is none).
    The schedule's rows name every task (the structural checks run first). A batched
    schedule yields every edge once per input, from the batch that holds the input at the
    source to the one that holds it at the consumer, without transfer rows (under
    batching a transfer is a delay).
    """
    if is_batched(schedule):
        held, _ = rows_by_input(problem.tasks, problem.inputs, schedule)
        for i, j, size in problem.edges:
            sources, pairs = held[problem.tasks[i]], {}
            for l, b in held[problem.tasks[j]].items():
                a = sources.get(l)
                if a is not None:
                    pairs[id(a), id(b)] = (a, b)  # inputs batched alike: one check
            for a, b in pairs.values():
                yield (size, a, b, problem.device_index[a.device], problem.device_index[b.device], None)
        return
    rows = {r.task: r for r in schedule.tasks}
    moved = {(t.src, t.dst): t for t in schedule.transfers}
    for i, j, size in problem.edges:
        a, b = rows[problem.tasks[i]], rows[problem.tasks[j]]
        yield (size, a, b, problem.device_index[a.device], problem.device_index[b.device],
               moved.get((a.task, b.task)))


def has_cp_form(block: Block) -> bool:
    """Whether ``block`` means anything to CP-SAT that it must be told: a semantic or symmetry
    block with a :meth:`Block.build_cp` of its own (cuts are the MILP's business), or a cut.

    Examples
    --------
    >>> from schedkit.blocks import NoOverlap, Cuts
    >>> has_cp_form(NoOverlap()), has_cp_form(Cuts())
    (True, True)
    """
    return block.role == "cut" or type(block).build_cp is not Block.build_cp

