"""Family ``order``: one binary per pair of tasks that may share a device and that the graph leaves open."""

from __future__ import annotations

from schedkit.blocks.expr import Expr, FrozenExpr
from schedkit.milp.families.base import Family, register_family


@register_family("order")
class OrderFamily(Family):
    """Order binaries y[i,j] = 1 when i comes before j, for pairs the task graph does not order."""

    defined_by = "no_overlap"
    template = r"""$y_{ij} \in \{0,1\}$ for every pair $i < j$ with $D_i \cap D_j \ne \emptyset$ that the
transitive closure of the task graph leaves unordered: $y_{ij} = 1$ when $i$ comes first."""

    def create(self) -> None:
        p = self.ctx.problem
        allowed = [set(a) for a in p.allowed]
        self.pairs = [(i, j) for i in range(len(p.tasks)) for j in range(i + 1, len(p.tasks))
                      if not p.ordered(i, j) and not allowed[i].isdisjoint(allowed[j])]
        cols = self.ctx.lin.add_columns("order", [(p.tasks[a], p.tasks[b]) for a, b in self.pairs], 0, 1,
                                        integer=True)
        self.cols = dict(zip(self.pairs, cols))

    def y(self, i: int, j: int) -> Expr:
        """The order binary of an unordered pair ``i < j``: 1 when ``i`` comes first.

        Made on each call, not kept: a block asks for each pair's once or twice, and a kept
        expression per pair (three objects) is what the cycle collector walks after a build.
        """
        return FrozenExpr.term(self.cols[i, j])

    def col(self, i: int, j: int) -> int:
        """Column of the order binary of an unordered pair ``i < j``."""
        return self.cols[i, j]

    def warm(self, schedule, values: list) -> None:
        p = self.ctx.problem
        where = {r.task: r for r in schedule.tasks}
        for (a, b), col in self.cols.items():
            ra, rb = where[p.tasks[a]], where[p.tasks[b]]
            values[col] = runs_first(ra, a, rb, b)


def runs_first(ra, a: int, rb, b: int) -> float:
    """1.0 when task ``a`` (its row ``ra`` of a schedule) comes before task ``b`` (row ``rb``),
    else 0.0: the value of an order binary in a warm start. A task of zero duration at another's
    start goes first (its end is the earlier); equal rows are ordered by task index."""
    return 1.0 if (ra.start, ra.end, a) <= (rb.start, rb.end, b) else 0.0
