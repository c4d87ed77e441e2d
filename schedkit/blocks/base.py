"""The constraint-block base class and its registry.

A block is a frozen pydantic model with a ``kind`` tag. It has three duties:
``build`` (add its constraints, named after the block), ``violations`` (check
its meaning on any schedule, numerically) and ``describe`` (its mathematics,
rendered from a jinja2 template).

A block builds in one of two ways. By default, ``build(ctx, blk)`` receives its
own ``pyo.Block`` and Pyomo variables from the context (``ctx.x``, ``ctx.start``,
``ctx.end``, ``ctx.order``, ``ctx.makespan``); its linear rows are read back into
the formulation's sparse model. A block with ``builds_rows = True`` (every built-in
block) receives a :class:`~schedkit.milp.context.RowBlock` instead and adds sparse rows
with column indices (``ctx.x_col``, ``ctx.start_col``, ``ctx.end_terms``,
``ctx.order_col``): no Pyomo object is made, which keeps large builds fast.

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

from typing import Any, ClassVar

import jinja2
from pydantic import BaseModel, ConfigDict, ValidationError

from schedkit.errors import FormulationError
from schedkit.registry import Registry

BLOCKS = Registry("block", group="schedkit.blocks", error=FormulationError)

#: Variable families the build context creates (see :mod:`schedkit.milp.context`).
FAMILIES = {
    "x": "assignment binaries x[i,d]: task i runs on device d",
    "timing": "start[i] variables and end[i] = start[i] + sum_d p[i,d] x[i,d]",
    "makespan": "makespan >= end[i] for every task",
    "order": "order binaries y[i,j] for pairs of tasks the graph does not order",
}

_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


class Block(BaseModel):
    """Base class of constraint blocks.

    Class attributes
    ----------------
    kind : str
        The block's name in formulations (set by :func:`register_block`).
    requires : frozenset of str
        Variable families the block uses.
    provides : frozenset of str
        Families whose meaning the block defines (``assignment`` provides ``x``).
    template : str
        jinja2 template of the block's mathematics (Markdown with LaTeX); the
        block's fields are available in it.
    builds_rows : bool
        ``True`` when :meth:`build` writes sparse rows into a
        :class:`~schedkit.milp.context.RowBlock`; ``False`` (the default) when it adds
        Pyomo constraints to a ``pyo.Block``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str] = ""
    requires: ClassVar[frozenset[str]] = frozenset()
    provides: ClassVar[frozenset[str]] = frozenset()
    template: ClassVar[str] = ""
    builds_rows: ClassVar[bool] = False

    def build(self, ctx, blk) -> None:
        """Add this block's constraints to ``blk``: a ``pyo.Block``, or a ``RowBlock`` (``builds_rows``)."""
        raise NotImplementedError(f"block '{self.kind}' does not implement build()")

    def violations(self, problem, schedule) -> list[str]:
        """Messages for every way ``schedule`` breaks this block (empty when it holds)."""
        raise NotImplementedError(f"block '{self.kind}' does not implement violations()")

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


def register_block(kind: str):
    """Class decorator: register a :class:`Block` subclass under ``kind``."""
    def add(cls):
        if not issubclass(cls, Block):
            raise TypeError(f"{cls.__name__} is not a Block")
        cls.kind = kind
        BLOCKS.register(kind, cls)
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
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise FormulationError(f"block '{kind}' has no parameter '{key}'") from None
        raise FormulationError(f"block '{kind}': parameter '{key}': {err['msg']}") from None
