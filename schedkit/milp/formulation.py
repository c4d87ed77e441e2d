"""Formulations built into a sparse MILP: :func:`build_model`.

What a formulation *is* (its blocks, objective, presets, ``describe`` and timing rules) is
plain data in :mod:`schedkit.semantics.formulation`, below every method; its names are
re-exported here, where they lived before. This module adds what the MILP makes of it
and registers that builder, so that :meth:`Formulation.build` works.

Examples
--------
>>> from schedkit import Problem
>>> built = build_model(get_formulation("jssp"), Problem.load("examples/tiny.yaml"))
>>> built.formulation.name, built.rules.ordered_edges
('jssp', True)
"""

from __future__ import annotations

import time

from schedkit.semantics.objectives import OBJECTIVES
from schedkit.semantics.formulation import (BUILDERS, FORMULATIONS, KEYS, Formulation, get_formulation,
                                            list_blocks, list_formulations, register_formulation)

__all__ = ["FORMULATIONS", "KEYS", "Formulation", "build_model", "get_formulation", "list_blocks",
           "list_formulations", "register_formulation"]


def build_model(formulation: Formulation, problem, horizon: float | None = None, warm=None):
    """Build the model: the sparse rows of every block, and on demand a Pyomo model.

    ``built.linear`` is what the embedded HiGHS and the LP/MPS writers receive;
    ``built.model`` is the same MILP as a Pyomo model with one ``pyo.Block`` per
    constraint block (made on first use, for Pyomo solvers and for inspection).

    Parameters
    ----------
    formulation : Formulation
    problem : Problem
    horizon : float, optional
        Upper bound on the optimal makespan; computed from a heuristic schedule
        that satisfies every block when omitted.
    warm : Schedule, optional
        A schedule of this formulation to use as the horizon and warm start (relabelled
        into the canonical order of the formulation's symmetry blocks, see
        :func:`~schedkit.validate.canonical`).

    Returns
    -------
    BuiltModel
    """
    from schedkit.milp.context import BuiltModel, ModelContext
    from schedkit.semantics.horizon import choose_horizon
    from schedkit.milp.linear import LinearModel
    from schedkit.milp.pyomo_model import add_pyomo_block
    from schedkit.problem.bounds import formulation_bound
    from schedkit.machine import paused_gc
    from schedkit.validate import canonical

    began = time.perf_counter()
    if horizon is None:
        horizon, warm = choose_horizon(problem, formulation.blocks, warm)
    # (the blocks' symmetry rows accept only the canonical one of a schedule's mirror images)
    warm = canonical(problem, warm, formulation.blocks)
    rules = formulation.timing_rules(problem)
    lower = formulation_bound(problem, formulation.blocks)  # (0 without a block that orders edges)
    lin = LinearModel(name=f"{formulation.name}:{problem.name}")
    ctx = ModelContext(problem, lin, horizon, orders_edges=rules.ordered_edges, lower_bound=lower,
                       communication=rules.communication)
    # (rows hold no reference cycles: the cycle collector's passes over the growing model
    # took 40 % of the row building of benchmarks/build.py's 200 tasks)
    with paused_gc():
        for block in formulation.building():
            if block.builds_rows:
                block.build(ctx, lin.rows(block.kind))
        OBJECTIVES.get(formulation.objective).apply(ctx)
    # Blocks written with Pyomo build last, into the Pyomo model of every row so far.
    for block in formulation.building():
        if not block.builds_rows:
            add_pyomo_block(ctx, block)
    return BuiltModel(linear=lin, problem=problem, blocks=list(formulation.blocks), context=ctx,
                      horizon=horizon, warm=warm, build_seconds=time.perf_counter() - began,
                      lower_bound=lower, formulation=formulation, rules=rules)


BUILDERS.register("milp", build_model)
