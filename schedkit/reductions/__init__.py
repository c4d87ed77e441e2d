"""Decomposition machinery: reductions with checked inverse data, plain-data parts, executors.

(``schedkit.reductions`` is the kernel's machinery; the decompositions that use it are the
plug-ins of ``schedkit.decompositions``.)

The decompositions themselves (bridge DP, k-edge splitting, greedy merging, operator
fusion) live in the ``schedkit.decompositions`` plug-in package and use this kernel
machinery (:mod:`~schedkit.reductions.subproblem` to cut parts out and stitch schedules
back, :mod:`~schedkit.reductions.coarsen` to coarsen); they reach inner methods by name
through the method registry.
"""

from schedkit.reductions.reduction import (DECOMPOSITIONS, DEFAULT_BLOCKS, EXACTNESS, DecompositionOutOfTime,
                                          DecompositionRefused, Exactness, InverseData, NoOptions, Reduction,
                                          Split, fingerprint)
from schedkit.reductions.parts import Part, PartError, parse_options_text, part_options, part_result, solve_part
from schedkit.reductions.executor import (EXECUTORS, executor_for, make_executor, parse_executor, run_parts,
                                         usable_cores)
from schedkit.reductions.chain import Chain, combine
from schedkit.reductions.method import (DecomposeOptions, DecompositionMethod, decomposition_method,
                                       register_decomposition, unregister_decomposition)

__all__ = ["DECOMPOSITIONS", "DEFAULT_BLOCKS", "EXACTNESS", "DecompositionOutOfTime", "DecompositionRefused",
           "Exactness", "InverseData", "NoOptions", "Reduction", "Split", "fingerprint", "register_decomposition",
           "unregister_decomposition", "Part", "PartError", "part_options", "part_result",
           "solve_part", "EXECUTORS", "executor_for", "make_executor", "parse_executor", "run_parts",
           "usable_cores", "Chain", "combine", "DecomposeOptions",
           "DecompositionMethod", "decomposition_method", "parse_options_text"]
