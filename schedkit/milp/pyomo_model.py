"""The Pyomo model of a build: user blocks written with Pyomo, read back into the sparse model.

(The Pyomo *solver adapter*, which hands a model to any Pyomo solver, is
:mod:`schedkit.milp.solvers.pyomo`.)

The built-in blocks write sparse rows and never touch Pyomo. A user block with
``builds_rows = False`` builds Pyomo constraints into its own ``pyo.Block`` in the
Pyomo model of every row built so far, with the context's Pyomo face
(``ctx.x(i, d)``, ``ctx.start(i)``, ...); :func:`add_pyomo_block` then reads its
linear rows (and any variables of its own) into the sparse model, which every
solver and file writer receives. The face is the families' :class:`~schedkit.blocks.expr.Expr`
values made Pyomo expressions (:func:`as_pyomo`); :func:`to_pyomo` makes the whole model.

Examples
--------
>>> from schedkit.milp.linear import LinearModel
>>> lin = LinearModel("demo")
>>> a, b = lin.add_columns("v", [("a",), ("b",)], lower=0, upper=1, integer=True)
>>> lin.rows("demo").add("pick", (), Expr(0.0, [a, b], [1.0, 1.0]) == 1)
>>> model, variables = to_pyomo(lin)
>>> print(as_pyomo(2 * Expr.term(b) + 1, variables))
1.0 + 2.0*v[b]
>>> model.demo.pick.ub
1.0
"""

from __future__ import annotations

import math

from schedkit.blocks.expr import Expr
from schedkit.errors import FormulationError
from schedkit.milp.linear import INF, LinearModel


def as_pyomo(expr: Expr, variables: list):
    """``expr`` as a Pyomo linear expression over ``variables`` (the Pyomo variable of every
    column), built directly: no operator overloading per term."""
    from pyomo.core.expr.numeric_expr import LinearExpression

    return LinearExpression(constant=expr.const, linear_coefs=list(expr.coefs),
                            linear_vars=[variables[c] for c in expr.cols])


def add_pyomo_block(ctx, block) -> None:
    """Build a user block that writes Pyomo constraints, and read its rows into ``ctx.lin``.

    The block gets a ``pyo.Block`` named after its kind in the Pyomo model of the
    rows built so far; its constraints must be linear. Variables the block adds
    itself become columns named ``KIND.NAME(index)``.
    """
    import pyomo.environ as pyo
    from pyomo.repn.standard_repn import generate_standard_repn

    if ctx.pyomo_model is None:
        ctx.pyomo_model, ctx.pyomo_vars = to_pyomo(ctx.lin)
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
    rows = ctx.lin.rows(block.kind)
    for con in blk.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = generate_standard_repn(con.body, compute_values=True)
        label = con.getname(fully_qualified=True)
        if not repn.is_linear():
            raise FormulationError(f"block '{block.kind}': constraint {label} is not linear")
        body = Expr(float(repn.constant), [column[id(v)] for v in repn.linear_vars],
                    [float(a) for a in repn.linear_coefs])
        index = con.index()
        key = () if index is None else (index if isinstance(index, tuple) else (index,))
        rows.add(con.parent_component().getname(relative_to=blk), key, body,
                 lower=-INF if con.lower is None else float(pyo.value(con.lower)),
                 upper=INF if con.upper is None else float(pyo.value(con.upper)))


def to_pyomo(lin: LinearModel):
    """A Pyomo model of the sparse model ``lin``: one ``pyo.Block`` per constraint block.

    Variables and constraints are built by rules over each group's keys, so the model is
    only made when asked for (a Pyomo solver, a user block written with Pyomo).

    Returns
    -------
    (pyomo.environ.ConcreteModel, list)
        The model and its variable of every column, in column order.
    """
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    model = pyo.ConcreteModel(name=lin.name)
    variables: list = [None] * lin.num_cols
    for group in lin.col_groups.values():
        owner = _owner(model, group.block)
        index = group.indices
        domain = pyo.Binary if all(lin.integer[c] and lin.lower[c] >= 0 and lin.upper[c] <= 1
                                   for c in index) else None
        if group.keys == [()]:
            var = pyo.Var(bounds=_bounds(lin, index[0]),
                          domain=domain or _domain(lin, index[0]))
            owner.add_component(group.name, var)
            variables[index[0]] = var
            continue
        keys = [_pyomo_key(k) for k in group.keys]
        position = dict(zip(keys, index))
        var = pyo.Var(keys, dense=True, bounds=lambda m, *k: _bounds(lin, position[_pyomo_key(k)]),
                      domain=domain or (lambda m, *k: _domain(lin, position[_pyomo_key(k)])))
        owner.add_component(group.name, var)
        for key, col in position.items():
            variables[col] = var[key]
    for group in lin.row_groups.values():
        owner = _owner(model, group.block)
        keys = [_pyomo_key(k) for k in group.keys]
        rows = dict(zip(keys, group.indices))

        def rule(m, *key, rows=rows):
            r = rows[_pyomo_key(key)]
            cols, coefs = lin.row(r)
            expr = LinearExpression(constant=0.0, linear_coefs=list(coefs),
                                    linear_vars=[variables[c] for c in cols])
            return (_finite_or_none(lin.row_lower[r]), expr, _finite_or_none(lin.row_upper[r]))

        if group.keys == [()]:
            # (made now: Pyomo passes a scalar rule's default arguments as keywords)
            owner.add_component(group.name, pyo.Constraint(expr=rule(model)))
        else:
            owner.add_component(group.name, pyo.Constraint(keys, rule=rule))
    model.objective = pyo.Objective(
        expr=sum(coef * variables[c] for c, coef in lin.objective.items()), sense=pyo.minimize)
    return model, variables


def _pyomo_key(key: tuple):
    return key[0] if len(key) == 1 else tuple(key)


def _owner(model, block: str | None):
    import pyomo.environ as pyo

    if block is None:
        return model
    owner = model.component(block)
    if owner is None:
        owner = pyo.Block(concrete=True)
        model.add_component(block, owner)
    return owner


def _finite_or_none(value: float):
    return value if math.isfinite(value) else None


def _bounds(lin: LinearModel, col: int):
    return (_finite_or_none(lin.lower[col]), _finite_or_none(lin.upper[col]))


def _domain(lin: LinearModel, col: int):
    import pyomo.environ as pyo

    return pyo.Integers if lin.integer[col] else pyo.Reals
