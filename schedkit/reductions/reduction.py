"""Reductions with checked inverse data: the contract every decomposition keeps (after cvxpy).

A :class:`Reduction` turns one problem into one other problem (a coarsening, say); a
:class:`Split` turns one problem into several independent sub-problems, the *parts*. Both
return, beside their output, an :class:`InverseData`: what ``invert`` needs to turn the
results of the output back into a :class:`~schedkit.schedule.Result` of the input. The
inverse data remembers which reduction made it and from which problem (a
:func:`fingerprint` of the spec), and :meth:`InverseData.check` refuses it anywhere else,
after Pyomo's ``ReverseTransformationToken``.

Every reduction declares how its output relates to its input (``exactness``):

``equivalent``
    Optimal answers of the output give optimal answers of the input (parts that share
    nothing, for instance).
``restriction``
    Every answer of the output gives a valid answer of the input, maybe not an optimal
    one, and its bounds say nothing about the input (a coarsening).
``relaxation``
    Answers are valid, and the bound ``invert`` reports is a valid lower bound of the input.

:func:`~schedkit.reductions.chain.combine` derives the quality of a whole decomposition
from these words; nothing else claims optimality. A step may achieve less than it declares
on a given problem (``bridge_dp`` is exact only on a chain of single-entry, single-exit
modules): it then says so in :attr:`InverseData.exactness`, which the chain uses instead.

A reduction also says which constraint blocks it understands (``supports``): a
formulation with a semantic block outside that set, or a problem it cannot split, is
refused before anything runs, with one line saying why (:meth:`Reduction.refusal`).
A :class:`Split` may come in rounds (``advance``): the parts of one round are independent
jobs, the next round is made from their results (``kedge`` solves its modules in
topological order).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.load("examples/tiny.yaml")
>>> class Identity(Reduction):
...     '''Leave the problem as it is.'''
...     name = "identity_example"
...     exactness = "equivalent"
...     def apply(self, problem, blocks=None):
...         return problem, self.inverse(problem, None)
...     def invert(self, results, inverse):
...         return results[0]
>>> reduced, inverse = Identity().apply(p)
>>> inverse.made_by, inverse.problem == fingerprint(p.spec)
('identity_example', True)
>>> inverse.check(Identity(), p)           # the same reduction on the same problem: fine
>>> inverse.check("bridge_dp", p)
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: inverse data of reduction 'identity_example' used by 'bridge_dp'
"""

from __future__ import annotations

import hashlib
import json
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from schedkit.errors import SchedkitError
from schedkit.problem import Problem, ProblemSpec
from schedkit.problem.edge_table import EdgeTable
from schedkit.registry import Registry, one_line
from schedkit.schedule import Result
from schedkit.timing.rules import TimingRules
from schedkit.validate import semantic_blocks

Exactness = Literal["equivalent", "restriction", "relaxation"]
EXACTNESS: tuple[str, ...] = ("equivalent", "restriction", "relaxation")

#: The blocks every built-in decomposition understands: the problem's own semantics
#: (pins, collocation, precedence with transfers, one task at a time per device, static
#: memory); a decomposition narrows or widens this set in its ``supports``.
DEFAULT_BLOCKS = frozenset({"assignment", "placement", "precedence", "no_overlap", "memory"})


class DecompositionRefused(SchedkitError):
    """A decomposition does not apply to a problem or a formulation; the message says why."""


class DecompositionOutOfTime(DecompositionRefused):
    """A decomposition applies but cannot end before its deadline (:meth:`Reduction.out_of_time`):
    a decomposition method answers with its finisher's schedule of the whole problem instead,
    when that fits in the time left."""


#: Registered decompositions (:class:`Reduction` and :class:`Split` subclasses), by name;
#: :func:`~schedkit.reductions.method.register_decomposition` adds to it (and registers a method).
DECOMPOSITIONS = Registry("decomposition", group="schedkit.decompositions")


def fingerprint(spec: ProblemSpec | Problem | dict) -> str:
    """A stable hash of a problem spec: the SHA-256 of its canonical JSON, 16 hex digits.

    Two specs with the same data have the same fingerprint, in any process and on any
    run; key order in the file does not matter.

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> fingerprint(p) == fingerprint(p.spec) == fingerprint(Problem.load("examples/tiny.yaml"))
    True
    >>> len(fingerprint(p))
    16
    """
    if isinstance(spec, Problem):
        spec = spec.spec
    if not isinstance(spec, ProblemSpec):
        return _digest(spec)
    # A spec is frozen: its fingerprint is computed once. A decomposition asks for it four
    # times or more (apply, the chain, every check in invert), half a second each on
    # 10,000 tasks.
    key = id(spec)
    kept = _FINGERPRINTS.get(key)
    if kept is not None and kept[0]() is spec:
        return kept[1]
    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"edges"})
    data["edges"] = _edges_digest(spec)
    found = _digest(data)
    _FINGERPRINTS[key] = (weakref.ref(spec, lambda _, key=key: _FINGERPRINTS.pop(key, None)), found)
    return found


#: The fingerprints of the specs alive, by ``id`` (a weak reference tells a reused id apart
#: and drops the entry with its spec).
_FINGERPRINTS: dict[int, tuple[weakref.ref, str]] = {}


def _edges_digest(spec: ProblemSpec) -> str:
    """The SHA-256 of the edges as columns (task indices, sizes with NaN where a row gives
    none) and of the transfer times the edges give: the same for a list of ``EdgeSpec`` and
    for the :class:`~schedkit.problem.edge_table.EdgeTable` of the same rows, which is hashed
    without an object per edge (writing 3 million edges as JSON took most of a 30 s limit)."""
    edges = spec.edges
    if isinstance(edges, EdgeTable):
        src, dst, size, times = edges.src, edges.dst, edges.size, []
    else:
        index = {task.name: k for k, task in enumerate(spec.tasks)}
        src = np.fromiter((index[e.src] for e in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((index[e.dst] for e in edges), dtype=np.int64, count=len(edges))
        size = np.fromiter((np.nan if e.size is None else e.size for e in edges), dtype=np.float64,
                           count=len(edges))
        times = [[k, e.transfer_times] for k, e in enumerate(edges) if e.transfer_times]
    size = np.asarray(size, dtype=np.float64)
    hasher = hashlib.sha256()
    for column in (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                   np.where(np.isnan(size), np.nan, size)):  # (one NaN, whatever bits the file gave)
        hasher.update(np.ascontiguousarray(column).tobytes())
    hasher.update(json.dumps(times, sort_keys=True, allow_nan=True).encode())
    return hasher.hexdigest()


def _digest(data: dict) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class InverseData:
    """What a reduction's ``invert`` needs, tagged with who made it and from what.

    Attributes
    ----------
    made_by : str
        The name of the reduction that made it.
    problem : str
        The :func:`fingerprint` of the spec it was made from.
    payload : Any
        The reduction's own data (task maps, boundary devices, merged members...).
    """

    made_by: str
    problem: str
    payload: Any = None
    exactness: Exactness | None = None
    """What this application achieved, when weaker than the reduction's declared
    ``exactness`` (``None``: as declared)."""

    def check(self, reduction: Reduction | Split | str, spec: ProblemSpec | Problem | dict) -> None:
        """Raise a one-line :class:`~schedkit.errors.SchedkitError` unless this inverse data
        was made by ``reduction`` (an instance, a class or a name) from ``spec``."""
        name = reduction if isinstance(reduction, str) else reduction.name
        if name != self.made_by:
            raise SchedkitError(f"inverse data of reduction '{self.made_by}' used by '{name}'")
        found = fingerprint(spec)
        if found != self.problem:
            label = f" '{spec.name}'" if isinstance(spec, (Problem, ProblemSpec)) else ""
            raise SchedkitError(f"inverse data of reduction '{self.made_by}' was made from problem "
                                f"{self.problem}, not from problem{label} {found}")


class NoOptions(BaseModel):
    """A reduction without parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class _Step(ABC):
    """What :class:`Reduction` and :class:`Split` share: name, exactness, options, accepts."""

    name: ClassVar[str] = ""
    exactness: ClassVar[Exactness] = "restriction"
    Options: ClassVar[type[BaseModel]] = NoOptions
    """The reduction's parameters (a pydantic model); its fields become options of the
    decomposition's method."""

    def __init__(self, **options: Any):
        try:
            self.options = self.Options(**options)
        except ValidationError as exc:
            raise SchedkitError(one_line(exc, options, prefix=f"decomposition '{self.name}'",
                                         extra="takes no option '{key}'")) from None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.exactness not in EXACTNESS:
            raise TypeError(f"{cls.__name__}.exactness is {cls.exactness!r}, "
                            f"not one of {', '.join(EXACTNESS)}")

    deadline: float | None = None
    """The ``time.perf_counter()`` time by which ``invert`` must be done: set by the
    decomposition method from its ``time_limit`` before it applies the step (``None``: no
    limit). Only an ``invert`` with work of its own beyond stitching reads it."""

    def invert_seconds(self, left: float) -> float:
        """The seconds, out of ``left`` seconds of the time limit, that ``invert`` wants for
        work of its own (``merge``'s refinement); the parts end that much earlier. Default 0."""
        return 0.0

    supports: ClassVar[frozenset[str] | None] = None
    """The kinds of semantic blocks this reduction keeps the meaning of (``None``: every
    kind). A formulation with another semantic block that applies to the problem is
    refused (:meth:`refusal`)."""

    in_series: ClassVar[bool] = False
    """Whether the parts run one after the other (the modules of a chain, in topological
    order): true only of a formulation that orders the edges, which :meth:`refusal` asks."""

    def refusal(self, problem: Problem, blocks: list | None = None) -> str | None:
        """Why this reduction does not apply to ``problem`` judged by ``blocks``, in one
        line, or ``None`` when it does.

        The default refuses a formulation that does not order the edges where the parts run
        in series (:attr:`in_series`), and a semantic block (one that applies to the problem)
        whose kind is not in :attr:`supports`; subclasses add their own reasons (and call this
        one). ``blocks`` are a formulation's blocks (default: the problem's own semantics).
        """
        if self.in_series and blocks is not None and problem.edges and \
                not TimingRules.of(blocks, problem).ordered_edges:
            return (f"the formulation does not order the edges (it has no 'precedence'): its modules "
                    f"need not run one after the other, as decomposition '{self.name}' has them")
        if self.supports is None:
            return None
        for block in semantic_blocks(problem, blocks):
            if block.kind not in self.supports:
                return f"block '{block.kind}' is not supported by decomposition '{self.name}'"
        return None

    def out_of_time(self, problem: Problem, blocks: list | None = None) -> str | None:
        """Why this reduction, which applies, cannot end before its :attr:`deadline`, in one
        line (with its estimate), or ``None`` when it can or has no deadline. Default ``None``.

        Unlike a :meth:`refusal`, the problem is not at fault: a decomposition method then
        returns its finisher's schedule of the whole problem, saying why.
        """
        return None

    def accepts(self, problem: Problem, blocks: list | None = None) -> bool:
        """Whether this reduction applies to ``problem`` judged by ``blocks`` (see :meth:`refusal`)."""
        return self.refusal(problem, blocks) is None

    def inverse(self, problem: Problem | ProblemSpec, payload: Any = None,
                exactness: Exactness | None = None) -> InverseData:
        """Inverse data made by this reduction from ``problem``, carrying ``payload``;
        ``exactness``: what this application achieved where it differs from the declared
        (weaker on this problem; ``equivalent`` where it left the problem as it is)."""
        if exactness is not None and exactness not in EXACTNESS:
            raise SchedkitError(f"exactness '{exactness}' is not one of {', '.join(EXACTNESS)}")
        if exactness == self.exactness:
            exactness = None
        return InverseData(made_by=self.name, problem=fingerprint(problem), payload=payload,
                           exactness=exactness)

    @abstractmethod
    def invert(self, results: list[Result], inverse: InverseData) -> Result:
        """The result of the input problem from the results of the output(s).

        Called only when every result carries a schedule (unless the split declares
        ``optional_parts``). The quality, termination and
        provenance of what it returns are decided afterwards by
        :func:`~schedkit.reductions.chain.combine`; ``invert`` supplies the schedule of the
        input problem (named after it) and, if it can, a bound.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.exactness})"


class Reduction(_Step):
    """A 1 -> 1 reduction: one problem becomes one other problem (a coarsening, say).

    Subclasses set ``name`` and ``exactness`` and implement :meth:`apply` and
    ``invert`` (which receives a list of one result).
    """

    @abstractmethod
    def apply(self, problem: Problem, blocks: list | None = None) -> tuple[Problem, InverseData]:
        """The reduced problem and the inverse data (see :meth:`inverse`)."""


class Split(_Step):
    """A 1 -> N split: one problem becomes independent sub-problems, the parts.

    Subclasses set ``name`` and ``exactness`` and implement :meth:`apply` and
    ``invert`` (which receives one result per part, in the order of the parts).
    """

    optional_parts: ClassVar[bool] = False
    """Whether ``invert`` can do without some parts (alternatives it chooses among): it is
    then called even when some results carry no schedule, and may return a schedule-less
    result itself (see :func:`~schedkit.reductions.chain.combine`)."""

    @abstractmethod
    def apply(self, problem: Problem, blocks: list | None = None) -> tuple[list[Problem], InverseData]:
        """The parts (sub-problems, each with its own name) and the inverse data."""

    def preview(self, problem: Problem, blocks: list | None = None) -> list[Problem]:
        """The sub-problems a user inspects (``schedkit decompose``): by default the parts
        of :meth:`apply`; a split in rounds returns its pieces as plain problems."""
        return self.apply(problem, blocks)[0]

    def advance(self, results: list[Result], inverse: InverseData) -> tuple[list[Problem], InverseData] | None:
        """The next round of parts, made from the results of every part so far (in order),
        and the updated inverse data; ``None`` (the default) when there is none.

        The parts of one round are independent jobs; a split that needs the answers of
        one round to make the next (modules solved in topological order) overrides this.
        ``invert`` then receives the results of every round, in order.
        """
        return None

    def round_share(self, inverse: InverseData) -> float:
        """The share of the time left that the round just made may use under a time limit
        (:mod:`~schedkit.reductions.budget`): 1, the default; a split with :meth:`advance`
        keeps some for the rounds after it."""
        return 1.0
