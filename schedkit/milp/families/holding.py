"""Family ``holding``: order binaries of pairs of tasks that hold one resource, made per resource."""

from __future__ import annotations

from typing import Sequence

from schedkit.blocks.expr import Expr
from schedkit.milp.families.base import Family, register_family
from schedkit.milp.families.order import runs_first


@register_family("holding")
class HoldingFamily(Family):
    """Order binaries w[r,i,j] = 1 when ``i`` comes before ``j`` on resource ``r``, for the pairs a
    block asks for (:meth:`orders`, through :func:`schedkit.blocks.holding.resource_rows`)."""

    requires = ("timing",)
    template = r"""$w_{\rho,ij} \in \{0,1\}$ for every pair $i < j$ of tasks that hold resource $\rho$
and may overlap: $w_{\rho,ij} = 1$ when $i$ comes first."""

    def create(self) -> None:
        #: ``(resource name, i, j) -> column`` of every binary made so far
        self.cols: dict[tuple[str, int, int], int] = {}

    def orders(self, resource: str, pairs: Sequence[tuple[int, int]]) -> list[Expr]:
        """Order binaries of the holders of ``resource`` for ``pairs`` ``(i, j)``, ``i < j``."""
        p = self.ctx.problem
        cols = self.ctx.lin.add_columns("hold_order", [(resource, p.tasks[i], p.tasks[j]) for i, j in pairs],
                                        0, 1, integer=True)
        self.cols.update(((resource, i, j), c) for (i, j), c in zip(pairs, cols))
        return [Expr.term(c) for c in cols]

    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        where = {r.task: r for r in schedule.tasks}
        for (_, a, b), col in self.cols.items():
            ra, rb = where[p.tasks[a]], where[p.tasks[b]]
            values[col] = runs_first(ra, a, rb, b)
