"""What a block's ``build`` sees of a MILP build: the context, its families and the row sink.

Declared here as protocols, so that blocks never import the MILP layer
(:mod:`schedkit.milp.context` provides the one implementation, ``ModelContext``). Every
family hands out :class:`~schedkit.blocks.expr.Expr` values: a block writes its rows as
arithmetic on them and never looks at a column index or a fixed variable itself.

Examples
--------
The ``assignment`` block's rows, as a block writes them:

>>> from schedkit import Problem
>>> from schedkit.milp import Formulation
>>> built = Formulation.from_data({"blocks": ["assignment"]}).build(Problem.load("examples/tiny.yaml"))
>>> ctx = built.context
>>> x = ctx.family("x")
>>> one = sum(x.x(1, d) for d in ctx.problem.allowed[1])
>>> row = one == 1
>>> [built.linear.column_name(c) for c in row.expr.cols], row.lower
(['x(attn_gpu0)', 'x(attn_cpu)'], 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable, Iterable, Literal, Protocol, Sequence, overload

from schedkit.blocks.expr import Expr, Row

if TYPE_CHECKING:  # pragma: no cover
    from schedkit.problem import Problem


class RowSink(Protocol):
    """Where a block writes its rows, named ``KIND.name(key)``.

    ``add(name, key, expr >= 3)`` or ``add(name, key, expr, lower=3)``: the sides of a
    :class:`~schedkit.blocks.expr.Row` already hold the expression's constant, while
    ``lower`` and ``upper`` given with a bare expression have it taken off.
    """

    def add(self, name: str, key: Hashable, row: Expr | Row, *, lower: float = ...,
            upper: float = ..., distinct: bool = ...) -> None:
        """Add ``lower <= row <= upper`` as row ``KIND.name(key)``; a column met twice is
        summed once, unless ``distinct`` says that none is (no search)."""

    def add_sum(self, name: str, key: Hashable, base: Expr, terms: Iterable[tuple[Expr, float]], *,
                const: float = ..., lower: float = ..., upper: float = ..., distinct: bool = ...) -> None:
        """Add ``lower <= base + const + sum(a * e for e, a in terms) <= upper``: the row
        ``(base + const).add_terms(terms)`` with no expression made (for the hottest rows)."""


class Columns(Protocol):
    """The model's columns as a block may use them: their bounds, and new columns of its own."""

    lower: list[float]
    upper: list[float]

    def add_columns(self, name: str, keys: Sequence[tuple], lower: float | Sequence[float],
                    upper: float | Sequence[float], integer: bool = False,
                    block: str | None = None) -> list[int]:
        """Add one column per key; return their indices."""


class AssignmentView(Protocol):
    """Family ``x``: ``x(i, d)`` is 1 when task ``i`` runs on device ``d``."""

    def x(self, i: int, d: int) -> Expr:
        """The binary, or the constant 1 or 0 of a task with one allowed device."""

    def col(self, i: int, d: int) -> int | None:
        """The column of ``x[i, d]``, ``None`` when it is fixed."""


class TimingView(Protocol):
    """Family ``timing``: each task's start and end."""

    def start(self, i: int) -> Expr:
        """The start of task ``i``."""

    def end(self, i: int) -> Expr:
        """The end of task ``i`` (its column, or start plus the one duration)."""

    def start_col(self, i: int) -> int:
        """The column of the start of task ``i``."""

    def end_col(self, i: int) -> int | None:
        """The column of ``end[i]``, ``None`` for a task with one device."""


class MakespanView(Protocol):
    """Family ``makespan``."""

    col: int

    def expr(self) -> Expr:
        """The makespan."""


class OrderView(Protocol):
    """Family ``order``: one binary per pair of tasks that the graph leaves unordered."""

    pairs: list[tuple[int, int]]

    def y(self, i: int, j: int) -> Expr:
        """1 when ``i`` comes before ``j`` (the pair ``i < j``)."""

    def col(self, i: int, j: int) -> int:
        """The column of the pair ``i < j``."""


class TransferView(Protocol):
    """Family ``transfer``: a start and an end per edge that may move data."""

    edges: list[tuple[int, int, float]]
    pairs: list[list[tuple[int, int, float]]]
    index: dict[tuple[int, int], int]

    def start(self, k: int) -> Expr:
        """The start of transfer ``k``."""

    def end(self, k: int) -> Expr:
        """The end of transfer ``k``."""

    def presence(self, k: int, u: int, v: int) -> Expr:
        """1 when transfer ``k`` goes from ``u`` to ``v`` (exact on binary ``x``)."""

    def usage(self, k: int, held: set[tuple[int, int]]) -> Expr:
        """1 when transfer ``k`` goes between a pair of ``held``, at most 0 when not."""

    def add_orders(self, pairs: Sequence[tuple[int, int]]) -> list[Expr]:
        """Order binaries for transfer pairs ``(k, l)``: 1 when ``k`` goes first."""


class BatchView(Protocol):
    """Family ``batch``: DiviML's batch slots ``(task, device, k)``."""

    slots: list[tuple[int, int, int]]

    def setup(self, most: int | None) -> None:
        """Create the slots, at most ``most`` per task and device."""

    def makespan(self) -> Expr:
        """The makespan of the workload."""

    def active(self, slot: tuple[int, int, int]) -> Expr:
        """1 when the slot runs a batch."""

    def size(self, slot: tuple[int, int, int], b: int) -> Expr:
        """1 when the slot's batch has size ``b``."""

    def holds(self, slot: tuple[int, int, int], l: int) -> Expr:
        """1 when the slot holds input ``l``."""

    def start(self, slot: tuple[int, int, int]) -> Expr:
        """The slot's start."""

    def end(self, slot: tuple[int, int, int]) -> Expr:
        """The slot's end: its start plus the chosen size's batch time."""

    def order(self, first: tuple[int, int, int], second: tuple[int, int, int]) -> Expr:
        """1 when slot ``first`` runs before slot ``second``."""


class FamilyView(Protocol):
    """A family a plug-in registered: whatever accessors it defines."""

    name: str

    def __getattr__(self, attribute: str) -> object: ...


class BuildContext(Protocol):
    """What a block's ``build`` receives as ``ctx``.

    Attributes
    ----------
    problem : Problem
    lin : Columns
        The model's columns (bounds in ``lin.lower`` and ``lin.upper``).
    horizon : float
        The makespan of a schedule that satisfies every block: the big-M scale.
    heads, tails : list of float
        Device-free heads and tails (zeros when no block orders the edges).
    device_heads, device_tails : list of dict
        Heads and tails of every task per device.
    orders_edges : bool
        Whether a block of the formulation makes every edge wait (see
        :meth:`Block.edge_delays <schedkit.blocks.Block.edge_delays>`).
    """

    problem: Problem
    lin: Columns
    horizon: float
    orders_edges: bool
    heads: list[float]
    tails: list[float]
    device_heads: list[dict[int, float]]
    device_tails: list[dict[int, float]]

    @overload
    def family(self, name: Literal["x"]) -> AssignmentView: ...
    @overload
    def family(self, name: Literal["timing"]) -> TimingView: ...
    @overload
    def family(self, name: Literal["makespan"]) -> MakespanView: ...
    @overload
    def family(self, name: Literal["order"]) -> OrderView: ...
    @overload
    def family(self, name: Literal["transfer"]) -> TransferView: ...
    @overload
    def family(self, name: Literal["batch"]) -> BatchView: ...
    @overload
    def family(self, name: str) -> FamilyView: ...

    def family(self, name: str) -> object:
        """The variable family ``name`` (made on first use)."""

    def has(self, name: str) -> bool:
        """Whether the family ``name`` was made."""

    def big_m(self, i: int, j: int) -> float:
        """A valid upper bound on ``end[i] - start[j]``."""
