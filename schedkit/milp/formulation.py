"""Formulations: an objective plus a list of constraint blocks, as data.

Examples
--------
>>> f = Formulation.from_data({"objective": "makespan",
...                            "blocks": ["assignment", {"precedence": {"communication": False}},
...                                       "no_overlap"]})
>>> [b.kind for b in f.blocks]
['assignment', 'precedence', 'no_overlap']
>>> Formulation.from_data({"blocks": ["no_overlap"]})
Traceback (most recent call last):
...
schedkit.errors.FormulationError: block 'no_overlap' needs family 'x', which no block provides (add 'assignment')
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from schedkit.blocks.base import BLOCKS, FAMILIES, Block, block_from_data
from schedkit.errors import FormulationError, ProblemError
from schedkit.registry import Registry, doc_line

FORMULATIONS = Registry("formulation", group="schedkit.formulations", error=FormulationError)

#: Families the build context defines by itself (no block needs to provide them).
CONTEXT_FAMILIES = {"timing", "makespan"}
_PROVIDER_HINT = {"x": "assignment", "order": "no_overlap"}


class Formulation(BaseModel):
    """An objective and the constraint blocks that define a MILP."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    name: str = "custom"
    objective: Literal["makespan"] = "makespan"
    blocks: tuple[Block, ...]

    def model_post_init(self, _context: Any) -> None:
        kinds = [b.kind for b in self.blocks]
        for kind in kinds:
            if kinds.count(kind) > 1:
                raise FormulationError(f"formulation '{self.name}': block '{kind}' appears twice")
        provided = set(CONTEXT_FAMILIES)
        for block in self.blocks:
            provided |= block.provides
        for block in self.blocks:
            for family in sorted(block.requires - provided):
                hint = f" (add '{_PROVIDER_HINT[family]}')" if family in _PROVIDER_HINT else ""
                raise FormulationError(
                    f"block '{block.kind}' needs family '{family}', which no block provides{hint}")
            unknown = block.requires - set(FAMILIES)
            if unknown:
                raise FormulationError(f"block '{block.kind}' requires unknown family '{sorted(unknown)[0]}'")

    # ------------------------------------------------------------------ data
    @classmethod
    def from_data(cls, data: dict, name: str | None = None) -> Formulation:
        """A formulation from ``{objective: ..., blocks: [...]}`` data (YAML or Python)."""
        if not isinstance(data, dict) or "blocks" not in data:
            raise FormulationError("a formulation is a mapping with 'objective' and 'blocks'")
        extra = set(data) - {"name", "objective", "blocks", "description"}
        if extra:
            raise FormulationError(f"formulation has unknown key '{sorted(extra)[0]}'")
        objective = data.get("objective", "makespan")
        if objective != "makespan":
            raise FormulationError(f"unknown objective '{objective}' (known: makespan)")
        blocks = data["blocks"]
        if not isinstance(blocks, list) or not blocks:
            raise FormulationError("a formulation needs a non-empty list of 'blocks'")
        return cls(name=name or data.get("name", "custom"), objective=objective,
                   blocks=tuple(block_from_data(b) for b in blocks))

    @classmethod
    def load(cls, path: str | Path) -> Formulation:
        """Read a formulation from a YAML or JSON file."""
        from schedkit.problem.spec import read_data

        try:
            data = read_data(path)
        except ProblemError as exc:
            raise FormulationError(str(exc)) from None
        return cls.from_data(data, name=Path(path).stem)

    def to_data(self) -> dict:
        """The formulation as plain data (round-trips through :meth:`from_data`)."""
        return {"name": self.name, "objective": self.objective, "blocks": [b.to_data() for b in self.blocks]}

    def describe(self) -> str:
        """The formulation's mathematics: objective, then every block (Markdown with LaTeX)."""
        parts = [f"## Formulation `{self.name}`\n",
                 "Minimise the makespan $C$: $C \\ge \\mathit{end}_i + \\sum_d q_{i,d}\\,x_{i,d}$ for every "
                 "task $i$, with $C$ bounded below by the critical path and load bounds and above by the "
                 "horizon $H$. With precedence, $\\mathit{start}_i \\ge \\sum_d r_{i,d}\\,x_{i,d}$: "
                 "$r_{i,d}$ and $q_{i,d}$ are the head and tail of $i$ on device $d$, transfers included. "
                 "Window rows $C \\ge r + \\sum_{i: r_i \\ge r} p_{i,d}\\,x_{i,d} + \\min q$ (and their "
                 "mirror with tails) bound every device's load, and chain rows "
                 "$C \\ge \\mathit{end}_j + \\sum_{k \\succ j,\\, q_k \\ge q} p_{k,d}\\,x_{k,d} + q$ "
                 "(and $\\mathit{start}_j \\ge r + \\sum_{k \\prec j,\\, r_k \\ge r} p_{k,d}\\,x_{k,d}$) "
                 "the load of a task's descendants (ancestors) on one device.\n"]
        parts += [block.describe() for block in self.blocks]
        return "\n".join(parts)

    def has(self, kind: str) -> bool:
        """Whether a block of this kind is part of the formulation."""
        return any(b.kind == kind for b in self.blocks)

    # ------------------------------------------------------------------ build
    def build(self, problem, horizon: float | None = None, warm=None):
        """Build the model: the sparse rows of every block, and on demand a Pyomo model.

        ``built.linear`` is what the embedded HiGHS and the LP/MPS writers receive;
        ``built.model`` is the same MILP as a Pyomo model with one ``pyo.Block`` per
        constraint block (made on first use, for Pyomo solvers and for inspection).

        Parameters
        ----------
        problem : Problem
        horizon : float, optional
            Upper bound on the optimal makespan; computed from a heuristic schedule
            that satisfies every block when omitted.
        warm : Schedule, optional
            A schedule of this formulation to use as the horizon and warm start.

        Returns
        -------
        BuiltModel
        """
        from schedkit.problem.bounds import lower_bound
        from schedkit.milp.context import BuildContext, BuiltModel, RowBlock, add_pyomo_block
        from schedkit.milp.horizon import choose_horizon
        from schedkit.milp.linear import LinearModel

        began = time.perf_counter()
        if horizon is None:
            horizon, warm = choose_horizon(problem, self.blocks, warm)
        lower = lower_bound(problem) if self.has("precedence") else 0.0
        lin = LinearModel(name=f"{self.name}:{problem.name}")
        precedence = next((b for b in self.blocks if b.kind == "precedence"), None)
        ctx = BuildContext(problem, lin, horizon, timing_bounds=precedence is not None, lower_bound=lower,
                           communication=bool(getattr(precedence, "communication", True)))
        for block in self.blocks:
            if block.builds_rows:
                block.build(ctx, RowBlock(lin, block.kind))
        lin.set_objective(ctx.makespan_col())
        _add_load_rows(ctx)
        if precedence is not None:
            _add_chain_rows(ctx)
        # Blocks written with Pyomo build last, into the Pyomo model of every row so far.
        for block in self.blocks:
            if not block.builds_rows:
                add_pyomo_block(ctx, block)
        return BuiltModel(linear=lin, problem=problem, blocks=list(self.blocks), context=ctx,
                          horizon=horizon, warm=warm, build_seconds=time.perf_counter() - began,
                          lower_bound=lower)


def _add_load_rows(ctx) -> None:
    """Valid inequalities: one-device relaxations with heads and tails.

    For a device ``d`` and a head value ``r``, the tasks with head at least ``r``
    that run on ``d`` run one after another after ``r``:
    ``C >= r + sum(p[i,d] x[i,d] for r_i >= r) + min tail``; the mirror rows use
    tails. With ``r = 0`` this is the plain load row ``C >= sum_i p[i,d] x[i,d]``.
    (Heads on ``d`` itself would not do: a window's constant must hold even when none
    of its tasks runs on ``d``.)
    """
    p = ctx.problem
    makespan = ctx.makespan_col()
    for d, name in enumerate(p.devices):
        users = [i for i in range(len(p.tasks)) if d in p.allowed[i]]
        if not any(ctx.x_col(i, d) is not None for i in users):
            continue  # only fixed tasks: the device bound already covers them
        for side, key, other in (("head", ctx.heads, ctx.tails), ("tail", ctx.tails, ctx.heads)):
            for value in sorted({key[i] for i in users}):
                if side == "tail" and value == 0:
                    continue  # the head family already holds the plain load row
                window = [i for i in users if key[i] >= value]
                # makespan - sum p x >= constant
                coefs, cols, constant = [1.0], [makespan], value + min(other[i] for i in window)
                for i in window:
                    col = ctx.x_col(i, d)
                    if col is None:
                        constant += p.durations[i][d]
                    else:
                        coefs.append(-p.durations[i][d])
                        cols.append(col)
                if len(cols) > 1:
                    ctx.lin.add_row(None, "device_load", (name, f"{side}_{value:g}"), cols, coefs,
                                    lower=constant)


#: Thresholds per task, device and side in :func:`_add_chain_rows` (evenly spread).
CHAIN_THRESHOLDS = 4


def _add_chain_rows(ctx) -> None:
    """Valid inequalities: a task's descendants (ancestors) on one device, in a row.

    For task ``j``, device ``d`` and a tail value ``q`` among ``j``'s descendants that
    may run on ``d``: those with tail at least ``q`` that do run on ``d`` start after
    ``end_j`` and run one after another, so
    ``C >= end_j + sum(p[k,d] x[k,d] for k in W) + q``. The mirror with ancestors and
    heads: ``start_j >= r + sum(p[k,d] x[k,d] for k in W)``. With no task of ``W`` on
    ``d`` the rows still hold (``q`` is the tail of a descendant, below ``j``'s tail).
    Heads and tails here are device-free and count no transfers. Only rows with an
    assignment column are written; at most :data:`CHAIN_THRESHOLDS` values per task,
    device and side.
    """
    p = ctx.problem
    n = len(p.tasks)
    makespan = ctx.makespan_col()
    descendants = [[k for k in range(n) if (p.descendants[j] >> k) & 1] for j in range(n)]
    ancestors: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        for k in descendants[j]:
            ancestors[k].append(j)
    for j in range(n):
        for d, device in enumerate(p.devices):
            for side, group, key in (("after", descendants[j], ctx.tails), ("before", ancestors[j], ctx.heads)):
                group = [k for k in group if d in p.allowed[k]]
                if not any(ctx.x_col(k, d) is not None for k in group):
                    continue
                values = sorted({key[k] for k in group})
                if len(values) > CHAIN_THRESHOLDS:
                    picks = (round(t * (len(values) - 1) / (CHAIN_THRESHOLDS - 1)) for t in range(CHAIN_THRESHOLDS))
                    values = sorted({values[t] for t in picks})
                for value in values:
                    if side == "after":   # C - end_j - sum p x >= q
                        constant, coefs, cols = ctx.end_terms(j)
                        cols, coefs, rhs = [makespan] + list(cols), [1.0] + [-c for c in coefs], constant + value
                    else:                 # start_j - sum p x >= r
                        cols, coefs, rhs = [ctx.start_col(j)], [1.0], value
                    base = len(cols)
                    for k in group:
                        if key[k] < value:
                            continue
                        col = ctx.x_col(k, d)
                        if col is None:
                            rhs += p.durations[k][d]
                        else:
                            cols.append(col)
                            coefs.append(-p.durations[k][d])
                    if len(cols) > base:
                        ctx.lin.add_row(None, "chain_load", (p.tasks[j], device, side, f"{value:g}"), cols, coefs,
                                        lower=rhs)


def register_formulation(name: str, formulation: Formulation | dict) -> None:
    """Register a preset formulation under ``name``."""
    if isinstance(formulation, dict):
        formulation = Formulation.from_data(formulation, name=name)
    FORMULATIONS.register(name, formulation)


def get_formulation(spec: str | Path | Formulation | dict | None) -> Formulation:
    """A formulation from a preset name, a YAML/JSON path, data, or ``None`` (``latency``)."""
    if spec is None:
        spec = "latency"
    if isinstance(spec, Formulation):
        return spec
    if isinstance(spec, dict):
        return Formulation.from_data(spec)
    text = str(spec)
    if text.endswith((".yaml", ".yml", ".json")) or Path(text).is_file():
        if not Path(text).is_file():
            raise FormulationError(f"{text}: no such formulation file")
        return Formulation.load(text)
    return FORMULATIONS.get(text)


def list_formulations() -> list[tuple[str, str]]:
    """``(name, description)`` of the preset formulations."""
    return [(name, ", ".join(b.kind for b in f.blocks)) for name, f in FORMULATIONS.items()]


def list_blocks() -> list[tuple[str, str]]:
    """``(kind, summary)`` of every registered block."""
    return [(kind, doc_line(cls)) for kind, cls in BLOCKS.items()]
