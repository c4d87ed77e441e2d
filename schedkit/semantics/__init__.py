"""What a formulation means, as plain data below every method.

A formulation is an objective and a list of constraint blocks
(:class:`~schedkit.semantics.formulation.Formulation`); the presets, ``describe``, the
objectives and the registry of variable-family names live here, with the timing facts the
blocks ask for, derived once (:class:`~schedkit.timing.rules.TimingRules`). The MILP
(:mod:`schedkit.milp`) builds a formulation into a model; the heuristics, the validator and
the decompositions read it without the MILP layer.

Examples
--------
>>> from schedkit import Problem
>>> get_formulation("moirai").timing_rules(Problem.load("examples/tiny.yaml")).congestion
'port'
"""

from schedkit.semantics.families import FAMILIES
from schedkit.semantics.objectives import OBJECTIVES, Objective, register_objective
from schedkit.semantics.formulation import (BUILDERS, FORMULATIONS, Formulation, get_formulation, list_blocks,
                                            list_formulations, register_formulation)
from schedkit.timing.rules import TimingRules

__all__ = ["FAMILIES", "OBJECTIVES", "Objective", "register_objective", "BUILDERS", "FORMULATIONS", "Formulation",
           "get_formulation", "list_blocks", "list_formulations", "register_formulation", "TimingRules"]
