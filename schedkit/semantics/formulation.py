"""Formulations: an objective plus a list of constraint blocks, as data (the semantics half).

What a formulation means is plain data here, below every method: its blocks and objective,
the presets, :meth:`Formulation.describe`, and the facts it asks of timing
(:meth:`Formulation.timing_rules`). The heuristics, the validator and the decompositions
read it without the MILP layer; :mod:`schedkit.milp.formulation` builds it into a model.

A formulation that does not list a ``cuts`` block gets one with its defaults (the
valid inequalities every built-in preset uses); list ``cuts: {load: false, chain:
false}`` to build without them.

Examples
--------
>>> f = Formulation.from_data({"objective": "makespan",
...                            "blocks": ["assignment", {"precedence": {"communication": False}},
...                                       "no_overlap"]})
>>> [b.kind for b in f.blocks]
['assignment', 'precedence', 'no_overlap', 'cuts']
>>> Formulation.from_data({"blocks": ["no_overlap"]})
Traceback (most recent call last):
...
schedkit.errors.FormulationError: block 'no_overlap' needs family 'x', which no block provides (add 'assignment')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from schedkit.blocks import BLOCKS, Block, Cuts, block_from_data
from schedkit.errors import FormulationError, OptionError, ProblemError
from schedkit.semantics.families import FAMILIES
from schedkit.semantics.objectives import OBJECTIVES
from schedkit.plugins import hint
from schedkit.registry import Registry, doc_line, one_line
from schedkit.timing.rules import TimingRules
from schedkit.validate import register_preset

FORMULATIONS = Registry("formulation", group="schedkit.formulations", error=FormulationError)
#: What builds a formulation into a model, by name: the MILP registers ``milp``
#: (:func:`schedkit.milp.formulation.build_model`) when it is imported.
BUILDERS = Registry("model builder")

#: Keys of a formulation file.
KEYS = ("name", "description", "objective", "blocks")


class Formulation(BaseModel):
    """An objective and the constraint blocks that define a MILP."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    name: str = "custom"
    description: str | None = None
    """What the formulation is for, in a sentence (shown by ``schedkit formulations``)."""
    objective: str = "makespan"
    blocks: tuple[Block, ...]

    @field_validator("objective")
    @classmethod
    def _known_objective(cls, value: str) -> str:
        OBJECTIVES.get(value)  # one-line error naming the known objectives
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _one_line(cls, data: Any, handler: Any) -> Formulation:
        # A field of the wrong type (a name or objective that is not a string, blocks that are
        # not a list of blocks): one line naming it, in Python as from a file.
        try:
            return handler(data)
        except ValidationError as exc:
            if not isinstance(data, dict):  # (not a construction: pydantic trying a union member)
                raise
            raise FormulationError(one_line(exc, prefix=f"formulation '{data.get('name', 'custom')}'")) from None

    @model_validator(mode="after")
    def _complete(self) -> Formulation:
        kinds = [b.kind for b in self.blocks]
        for kind in kinds:
            if kinds.count(kind) > 1:
                raise FormulationError(f"formulation '{self.name}': block '{kind}' appears twice")
        if "cuts" not in kinds:
            object.__setattr__(self, "blocks", self.blocks + (Cuts(),))
            kinds.append("cuts")
        for block in self.blocks:  # (``batching`` with ``channels``: not defined yet)
            clash = sorted(getattr(block, "excludes", frozenset()) & set(kinds))
            if clash:
                raise FormulationError(f"formulation '{self.name}': block '{clash[0]}' does not combine "
                                       f"with '{block.kind}' yet")
        replaced = self.replaced()
        for block in self.blocks:
            if block.kind in replaced:
                continue  # another block builds its rows (``batching``)
            for family in sorted(block.requires):
                if family not in FAMILIES:
                    raise FormulationError(f"block '{block.kind}' requires unknown family '{family}' "
                                           f"(known: {', '.join(FAMILIES.names())}); {hint('family')}")
                definer = FAMILIES.get(family).defined_by
                if definer is not None and definer not in kinds:
                    raise FormulationError(f"block '{block.kind}' needs family '{family}', which no block "
                                           f"provides (add '{definer}')")
        return self

    # ------------------------------------------------------------------ data
    @classmethod
    def from_data(cls, data: dict, name: str | None = None) -> Formulation:
        """A formulation from ``{name, description, objective, blocks}`` data (YAML or Python)."""
        if not isinstance(data, dict) or "blocks" not in data:
            raise FormulationError("a formulation is a mapping with 'objective' and 'blocks'")
        extra = set(data) - set(KEYS)
        if extra:
            raise FormulationError(f"formulation has unknown key '{sorted(extra)[0]}' "
                                   f"(known: {', '.join(KEYS)})")
        blocks = data["blocks"]
        if not isinstance(blocks, list) or not blocks:
            raise FormulationError("a formulation needs a non-empty list of 'blocks'")
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            raise FormulationError("a formulation's 'description' is a string")
        return cls(name=name or data.get("name", "custom"), description=description,
                   objective=data.get("objective", "makespan"),
                   blocks=tuple(block_from_data(b) for b in blocks))

    @classmethod
    def load(cls, path: str | Path) -> Formulation:
        """Read a formulation from a YAML or JSON file."""
        from schedkit.problem.reading import read_data

        try:
            data = read_data(path)
        except ProblemError as exc:
            raise FormulationError(str(exc)) from None
        return cls.from_data(data, name=Path(path).stem)

    def to_data(self) -> dict:
        """The formulation as plain data (round-trips through :meth:`from_data`)."""
        data: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            data["description"] = self.description
        data.update(objective=self.objective, blocks=[b.to_data() for b in self.blocks])
        return data

    def families(self) -> list[str]:
        """The variable families the blocks use, each after those it requires."""
        out: list[str] = []

        def add(name):
            if name in out:
                return
            for required in FAMILIES.get(name).requires:
                add(required)
            out.append(name)

        replaced = self.replaced()
        if not any(b.replaces for b in self.blocks):  # (``batching``: the batch family's makespan)
            add(OBJECTIVES.get(self.objective).family)
        for block in self.blocks:
            if block.kind not in replaced:
                for name in sorted(block.requires):
                    add(name)
        return out

    def replaced(self) -> set[str]:
        """Kinds of the blocks whose rows another block of the formulation builds (``batching``)."""
        return set().union(*(b.replaces for b in self.blocks))

    def building(self) -> list[Block]:
        """The blocks that build constraints (MILP rows or a CP-SAT form), in building order: a
        block that builds others' rows first, so that the families it makes are known to all;
        the blocks it replaces left out."""
        replaced = self.replaced()
        return [b for b in sorted(self.blocks, key=lambda b: not b.replaces) if b.kind not in replaced]

    def describe(self) -> str:
        """The formulation's mathematics: objective, variables, then every block (Markdown with LaTeX)."""
        parts = [f"## Formulation `{self.name}`\n"]
        if self.description:
            parts.append(self.description.strip() + "\n")
        parts.append(OBJECTIVES.get(self.objective).describe().strip() + "\n")
        parts.append("Variables:\n")
        parts += [f"- `{name}`: {FAMILIES.get(name).template.strip()}" for name in self.families()]
        parts.append("")
        replaced = self.replaced()
        for block in self.blocks:
            text = block.describe()
            if block.kind in replaced:
                builder = next(b.kind for b in self.blocks if block.kind in b.replaces)
                text = text.rstrip() + (f"\n\nIn this formulation `{builder}` builds these rows for its "
                                        f"batches; the meaning above holds input by input.\n")
            parts.append(text)
        return "\n".join(parts)

    def has(self, kind: str) -> bool:
        """Whether a block of this kind is part of the formulation."""
        return any(b.kind == kind for b in self.blocks)

    def timing_rules(self, problem) -> TimingRules:
        """What the formulation asks of timing on ``problem``: each block's contribution
        (:meth:`Block.timing_rules <schedkit.blocks.Block.timing_rules>`), derived once.

        Examples
        --------
        >>> from schedkit import Problem
        >>> get_formulation("moirai").timing_rules(Problem.load("examples/tiny.yaml")).congestion
        'port'
        """
        return TimingRules.of(self.blocks, problem)

    def semantic_blocks(self) -> list[Block]:
        """The blocks that define a valid schedule of this formulation (role ``semantic``)."""
        return [b for b in self.blocks if b.role == "semantic"]

    # ------------------------------------------------------------------ build
    def build(self, problem, horizon: float | None = None, warm=None):
        """Build the model: the sparse rows of every block, and on demand a Pyomo model.

        A convenience that calls the builder the MILP registers in :data:`BUILDERS`
        (:func:`schedkit.milp.formulation.build_model`, which documents the parameters), so
        that this module, plain data, never imports the MILP layer.

        Returns
        -------
        BuiltModel
        """
        return BUILDERS.get("milp")(self, problem, horizon=horizon, warm=warm)


def register_formulation(name: str, formulation: Formulation | dict, *, replace: bool = False) -> None:
    """Register a preset formulation under ``name``."""
    if isinstance(formulation, dict):
        formulation = Formulation.from_data(formulation, name=name)
    FORMULATIONS.register(name, formulation, replace=replace)
    register_preset(name, formulation.blocks, replace=replace)  # (an honest recorded choice)


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


def formulation_given(spec) -> tuple[Formulation | None, Any]:
    """A method's ``formulation`` argument split into the formulation given from Python (a
    :class:`Formulation` or its data, else ``None``) and the value its option records: the
    formulation's name, or ``spec`` itself (a preset name, a file, ``None``), which the option
    checks. One rule for every method that takes a formulation.

    Examples
    --------
    >>> given, option = formulation_given({"name": "mine", "blocks": ["assignment", "no_overlap"]})
    >>> [b.kind for b in given.blocks], option
    (['assignment', 'no_overlap', 'cuts'], 'mine')
    >>> formulation_given("moirai")
    (None, 'moirai')
    >>> formulation_given({"blocks": []})
    Traceback (most recent call last):
    schedkit.errors.OptionError: a formulation needs a non-empty list of 'blocks'
    """
    if not isinstance(spec, (Formulation, dict)):
        return None, spec
    try:
        given = get_formulation(spec)
    except FormulationError as exc:
        raise OptionError("formulation", str(exc)) from None
    return given, given.name


def list_formulations() -> list[tuple[str, str]]:
    """``(name, summary)`` of the preset formulations: the description, else the blocks."""
    return [(name, f.description or ", ".join(b.kind for b in f.blocks)) for name, f in FORMULATIONS.items()]


def list_blocks() -> list[tuple[str, str]]:
    """``(kind, summary)`` of every registered block."""
    return [(kind, doc_line(cls)) for kind, cls in BLOCKS.items()]
