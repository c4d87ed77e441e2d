"""Decomposition machinery: reductions with checked inverse data, plain-data parts, executors.

The decompositions themselves (bridge DP, k-edge splitting, greedy merging, operator
fusion) live in the ``schedkit.decompositions`` plug-in package and use this kernel
machinery; they reach inner methods by name through the method registry.
"""
