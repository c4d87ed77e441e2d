"""``fusion``: MOIRAI's graph coarsening by operator fusion (GCOF), then any method.

Operators that a compiler would fuse into one kernel are scheduled as one task. A **rule**
is a sequence of operator types, e.g. ``[conv, bn, relu]``; rules are tried in order at
every task not yet fused, in topological order, and the first that matches fuses the
chain it matches. The defaults are MOIRAI's, longest first so that the longest pattern
wins: ``conv-bn-add-relu``, ``conv-bn-relu``, ``conv-bn``.

A chain follows **direct** connections (``a -> b``, ``a``'s only successor) and
**multi-input** connections (``b`` also has other inputs, as an ``add`` fed by a residual
branch), never a **multi-output** connection (``a`` feeds other tasks too: its output is
needed elsewhere, and fusing would hide it). Following only a task's only successor also
means fusion never closes a cycle.

Operator types are compared by name, ignoring case and characters other than letters and
digits, with the usual aliases: ``conv`` (``Conv``, ``Conv2d``, ``convolution``), ``bn``
(``BatchNormalization``, ``batchnorm``, ``batch_norm``), ``relu`` (``ReLU``, ``relu6``),
``add`` (``Add``, ``sum``); a task's ``op`` comes from its problem file (the ONNX importer
writes it). A fused task's durations, devices and memory follow
:mod:`schedkit.reductions.coarsen`; its ``op`` is its members' joined by ``+``.

User rules come from YAML: a file holding a list of rules (each a list of at least two
operator names), or ``{rules: [...]}``, or the same text inline
(``--rules "[[conv, relu], [matmul, add]]"``).

Examples
--------
>>> from schedkit import Problem
>>> p = Problem.from_dict({"name": "block", "devices": [{"name": "gpu"}, {"name": "cpu"}],
...     "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 10}],
...     "tasks": [{"name": n, "work": 1, "op": op} for n, op in
...               [("c1", "Conv"), ("b1", "BatchNormalization"), ("r1", "Relu"),
...                ("c2", "Conv"), ("b2", "BatchNormalization"), ("a2", "Add"), ("r2", "Relu")]],
...     "edges": [{"src": s, "dst": d, "size": 1} for s, d in
...               [("c1", "b1"), ("b1", "r1"), ("r1", "c2"), ("r1", "a2"), ("c2", "b2"),
...                ("b2", "a2"), ("a2", "r2")]]})
>>> coarse, _ = Fusion().apply(p)
>>> coarse.tasks
['c1+b1+r1', 'c2+b2+a2+r2']
>>> Fusion(rules=[["conv", "bn"]]).apply(p)[0].tasks
['c1+b1', 'r1', 'c2+b2', 'a2', 'r2']
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, field_validator

from schedkit.reductions import Reduction, register_decomposition
from schedkit.reductions.coarsen import coarse_problem, expand
from schedkit.reductions.reduction import DEFAULT_BLOCKS
from schedkit.problem import Problem
from schedkit.schedule import Quality, Result, Termination

__all__ = ["Fusion", "FusionOptions", "DEFAULT_RULES", "fusion_groups", "load_rules", "canonical_op"]

#: MOIRAI's default rules, longest first.
DEFAULT_RULES: tuple[tuple[str, ...], ...] = (("conv", "bn", "add", "relu"), ("conv", "bn", "relu"),
                                              ("conv", "bn"))

ALIASES = {"conv": ("conv", "conv1d", "conv2d", "conv3d", "convolution"),
           "bn": ("bn", "batchnorm", "batchnormalization", "batchnorm2d", "fusedbatchnorm"),
           "relu": ("relu", "relu6"), "add": ("add", "sum")}
_CANONICAL = {alias: name for name, aliases in ALIASES.items() for alias in aliases}


def canonical_op(name: str | None) -> str:
    """An operator type compared by name: lower case, letters and digits only, aliases resolved.

    Examples
    --------
    >>> canonical_op("BatchNormalization"), canonical_op("Conv2d"), canonical_op("MatMul")
    ('bn', 'conv', 'matmul')
    """
    word = re.sub(r"[^0-9a-z]", "", (name or "").lower())
    return _CANONICAL.get(word, word)


def load_rules(value: Any) -> tuple[tuple[str, ...], ...]:
    """Rules from data, from YAML text or from a YAML file; a one-line ``ValueError`` otherwise.

    Examples
    --------
    >>> load_rules("[[conv, relu], [MatMul, Add]]")
    (('conv', 'relu'), ('matmul', 'add'))
    >>> load_rules([["conv"]])
    Traceback (most recent call last):
    ...
    ValueError: rule 1 is not a list of two operator names or more: ['conv']
    """
    source = "rules"
    if isinstance(value, (str, Path)):
        text = str(value)
        path = Path(text)
        if path.suffix.lower() in (".yaml", ".yml", ".json") or path.is_file():
            try:
                text = path.read_text()
            except OSError as exc:
                raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
            source = str(path)
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ValueError(f"{source}: malformed YAML: {reason}") from None
    if isinstance(value, dict) and set(value) == {"rules"}:
        value = value["rules"]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{source}: expected a list of rules (lists of operator names), got {value!r}")
    rules = []
    for k, rule in enumerate(value, 1):
        if not isinstance(rule, (list, tuple)) or len(rule) < 2 or \
                not all(isinstance(op, str) and canonical_op(op) for op in rule):
            raise ValueError(f"rule {k} is not a list of two operator names or more: {rule!r}")
        rules.append(tuple(canonical_op(op) for op in rule))
    return tuple(rules)


class FusionOptions(BaseModel):
    """Options of ``fusion``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rules: tuple[tuple[str, ...], ...] | None = None
    """Fusion rules, tried in order: a YAML file, YAML text, or a list of lists of operator
    names (default: conv-bn-add-relu, conv-bn-relu, conv-bn)."""

    @field_validator("rules", mode="before")
    @classmethod
    def _read(cls, value: Any) -> Any:
        return None if value is None else load_rules(value)


def fusion_groups(problem: Problem, rules=DEFAULT_RULES) -> list[list[int]]:
    """The groups of tasks the rules fuse (lone tasks included), in topological order."""
    ops = [canonical_op(t.op) for t in problem.spec.tasks]
    fused: set[int] = set()
    groups = []
    for start in problem.topological_order:
        if start in fused:
            continue
        chain = [start]
        for rule in rules:
            found = _match(problem, ops, rule, start, fused)
            if found is not None:
                chain = found
                break
        fused.update(chain)
        groups.append(chain)
    return groups


def _match(problem: Problem, ops: list[str], rule, start: int, fused: set[int]) -> list[int] | None:
    if ops[start] != rule[0]:
        return None
    chain = [start]
    for op in rule[1:]:
        last = chain[-1]
        if len(problem.succs[last]) != 1:
            return None  # a multi-output connection: never fused across
        nxt = problem.succs[last][0][0]
        if nxt in fused or ops[nxt] != op or not set(problem.allowed[nxt]) & set(problem.allowed[start]):
            return None
        colocated = {problem.spec.tasks[i].colocate for i in chain + [nxt]} - {None}
        if len(colocated) > 1:
            return None
        chain.append(nxt)
    return chain


@register_decomposition("fusion")
class Fusion(Reduction):
    """Operator fusion by ordered rules on task ``op`` (MOIRAI's GCOF); any method on the
    fused problem."""

    exactness = "restriction"
    supports = DEFAULT_BLOCKS
    Options = FusionOptions

    def apply(self, problem, blocks=None):
        rules = self.options.rules or DEFAULT_RULES
        groups = fusion_groups(problem, rules)
        if all(len(g) == 1 for g in groups):  # (nothing fused: the problem itself, whose answer is the answer)
            return problem, self.inverse(problem, {"problem": problem, "groups": groups}, exactness="equivalent")
        ops = ["+".join(problem.spec.tasks[i].op or "?" for i in g) if len(g) > 1 else problem.spec.tasks[g[0]].op
               for g in groups]
        coarse = coarse_problem(problem, groups, f"{problem.name}/fused", ops=ops)
        return coarse, self.inverse(problem, {"problem": problem, "groups": groups})

    def invert(self, results, inverse):
        problem, groups = inverse.payload["problem"], inverse.payload["groups"]
        fused = sum(len(g) for g in groups if len(g) > 1)
        schedule = expand(problem, groups, results[0].schedule, self.name) if fused else \
            results[0].schedule.model_copy(update={"method": self.name})
        message = (f"fusion: {len(problem.tasks)} tasks scheduled as {len(groups)} ({fused} fused)" if fused else
                   "fusion fused nothing: no rule matched the tasks' op (the problem was solved as it is)")
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=schedule,
                      bound=None if fused else results[0].bound, message=message)
