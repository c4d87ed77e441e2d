"""The Pyomo side of a build: user blocks written with Pyomo, read back into the sparse model.

The built-in blocks write sparse rows and never touch Pyomo. A user block with
``builds_rows = False`` builds Pyomo constraints into its own ``pyo.Block`` in the
Pyomo model of every row built so far, with the context's Pyomo face
(``ctx.x(i, d)``, ``ctx.start(i)``, ...); :func:`add_pyomo_block` then reads its
linear rows (and any variables of its own) into the sparse model, which every
solver and file writer receives.
"""

from __future__ import annotations

from schedkit.errors import FormulationError
from schedkit.milp.linear import INF


def linear(constant: float, coefs: list[float], vars_: list):
    """A Pyomo linear expression built directly (no operator overloading per term)."""
    from pyomo.core.expr.numeric_expr import LinearExpression

    return LinearExpression(constant=constant, linear_coefs=list(coefs), linear_vars=list(vars_))


def add_pyomo_block(ctx, block) -> None:
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
