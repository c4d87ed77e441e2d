"""The formulation a heuristic's schedules must satisfy, and what it changes in their timing.

By default a heuristic is judged by the problem's own semantics. Its ``formulation``
option (``-f`` on the command line, as for ``milp``) names a preset or a file instead: the
schedule is then validated against that formulation's blocks, and with a ``congestion``
block every transfer is booked on channel and port timelines
(:class:`~schedkit.timing.transfers.Transfers`), so that the schedule passes the same
validator as the MILP's.

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.methods import METHODS
>>> p = Problem.load("examples/tiny.yaml")
>>> heft = METHODS.get("heft")(formulation="jssp")
>>> [b.kind for b in heft.blocks(p)][:3], heft.transfers(p).congested
(['assignment', 'precedence', 'no_overlap'], False)
"""

from __future__ import annotations

from pydantic import Field, field_validator

from schedkit.errors import FormulationError
from schedkit.methods import Method, MethodOptions
from schedkit.semantics.formulation import formulation_given, get_formulation
from schedkit.problem import Problem
from schedkit.timing import MemoryLevels, TimingRules, Transfers
from schedkit.validate import semantic_blocks

__all__ = ["FormulationOptions", "FollowsFormulation", "HONOURED", "FOLLOWED"]

#: Block kinds whose meaning the heuristics build into their schedules (blocks of other
#: roles than ``semantic`` never constrain a schedule). A block of another kind is honoured
#: too when all it asks is timing rules the method follows (:attr:`FollowsFormulation.follows`).
HONOURED = frozenset({"assignment", "placement", "precedence", "no_overlap", "memory",
                      "channels", "batching"})
#: The :class:`~schedkit.timing.rules.TimingRules` every heuristic times its schedules by
#: (transfers, and the resources tasks hold, booked through :meth:`FollowsFormulation.transfers`).
FOLLOWED = frozenset({"congestion", "ordered_edges", "communication", "resources"})


class FormulationOptions(MethodOptions):
    """The ``formulation`` option of the heuristics."""

    formulation: str | None = Field(None, json_schema_extra={"flag": "-f"})
    """A preset name or a YAML/JSON formulation file whose blocks the schedule must satisfy
    (with ``congestion``, transfers wait for their channels or ports); by default the
    problem's own semantics."""

    @field_validator("formulation", mode="before")
    @classmethod
    def _path_to_str(cls, value):
        return None if value is None else str(value)


class FollowsFormulation(Method):
    """A method whose schedules follow its ``formulation`` option (a mixin of the heuristics).

    In Python the option may also be a :class:`~schedkit.semantics.formulation.Formulation` or
    its data, as for ``milp``: the option then records its name.
    """

    #: Block kinds whose meaning this method builds into its schedules.
    honours: frozenset = HONOURED
    #: Timing rules this method's engines follow (a method that passes :meth:`levels` to its
    #: engine follows ``memory`` too).
    follows: frozenset = FOLLOWED
    runs_batches = True  # (every split of the inputs, run as one input each: heuristics.batched)

    def __init__(self, formulation=None, **options):
        self._given, formulation = formulation_given(formulation)
        super().__init__(**({} if formulation is None else {"formulation": formulation}), **options)

    def formulation(self):
        """The :class:`~schedkit.semantics.formulation.Formulation` named by the option, or ``None``."""
        if self._given is not None:
            return self._given
        name = getattr(self.options, "formulation", None)
        return None if name is None else get_formulation(name)

    def blocks(self, problem: Problem) -> list:
        formulation = self.formulation()
        if formulation is None:
            return semantic_blocks(problem)
        blocks = list(formulation.blocks)
        for block in blocks:
            if block.role == "semantic" and not self.honours_block(block, problem) and block.applies_to(problem):
                raise FormulationError(f"method '{self.name}' cannot honour block '{block.kind}' "
                                       f"of formulation '{formulation.name}' (use milp)")
        return blocks

    def honours_block(self, block, problem: Problem) -> bool:
        """Whether this method's schedules satisfy ``block``: its kind is one the method
        honours, or all the block asks of a schedule is timing rules the method follows
        (what :meth:`Block.timing_rules <schedkit.blocks.Block.timing_rules>` contributes).
        Its schedules are validated against the block either way.

        Examples
        --------
        >>> from schedkit.blocks import Congestion
        >>> from schedkit.methods import METHODS
        >>> heft = METHODS.get("heft")()
        >>> heft.honours_block(Congestion(), Problem.load("examples/tiny.yaml"))
        True
        """
        if block.kind in self.honours:
            return True
        asked = block.timing_rules(TimingRules(), problem).changed()
        return bool(asked) and asked <= self.follows

    def formulation_data(self, problem: Problem) -> dict:
        formulation = self.formulation()
        return super().formulation_data(problem) if formulation is None else formulation.to_data()

    def timing_rules(self, problem: Problem) -> TimingRules:
        """What the formulation (or the problem's own semantics) asks of timing on ``problem``."""
        return TimingRules.of(self.blocks(problem), problem)

    def transfers(self, problem: Problem) -> Transfers:
        """The shared timelines of a schedule of ``problem`` under the formulation: transfers'
        channels and ports, and the units of the resources tasks hold (its ``holds``)."""
        return self.timing_rules(problem).transfers(problem)

    def levels(self, problem: Problem, transfers: Transfers | None = None) -> MemoryLevels | None:
        """Fresh memory levels of a schedule of ``problem`` under the formulation (``None``
        without ``memory_timeline``)."""
        return self.timing_rules(problem).levels(problem, transfers)

    def run_batches(self, problem: Problem):
        """The best schedule over splits of the workload's inputs (:mod:`schedkit.heuristics.batched`)."""
        from schedkit.heuristics.batched import run_batches

        return run_batches(self, problem)
