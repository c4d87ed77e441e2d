"""Decomposition machinery: reductions with checked inverse data, plain-data parts, executors.

The decompositions themselves (bridge DP, k-edge splitting, greedy merging, operator
fusion) live in the ``schedkit.decompositions`` plug-in package and use this kernel
machinery (:mod:`~schedkit.decompose.subproblem` to cut parts out and stitch schedules
back, :mod:`~schedkit.decompose.coarsen` to coarsen); they reach inner methods by name
through the method registry.
"""

from schedkit.decompose.reduction import (DECOMPOSITIONS, DEFAULT_BLOCKS, EXACTNESS, DecompositionRefused,
                                          Exactness, InverseData, NoOptions, Reduction, Split, fingerprint)
from schedkit.decompose.parts import Part, PartError, part_options, part_result, solve_part
from schedkit.decompose.executor import (EXECUTORS, executor_for, make_executor, parse_executor, run_parts,
                                         usable_cores)
from schedkit.decompose.chain import Chain, combine
from schedkit.decompose.method import (DecomposeOptions, DecompositionMethod, decomposition_method,
                                       parse_options_text, register_decomposition,
                                       unregister_decomposition)

__all__ = ["DECOMPOSITIONS", "DEFAULT_BLOCKS", "EXACTNESS", "DecompositionRefused", "Exactness",
           "InverseData", "NoOptions", "Reduction", "Split", "fingerprint", "register_decomposition",
           "unregister_decomposition", "Part", "PartError", "part_options", "part_result",
           "solve_part", "EXECUTORS", "executor_for", "make_executor", "parse_executor", "run_parts",
           "usable_cores", "Chain", "combine", "DecomposeOptions",
           "DecompositionMethod", "decomposition_method", "parse_options_text"]
