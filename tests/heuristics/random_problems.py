"""The random-problem strategy of the heuristics tests: the conformance kit's one strategy.

Imported by the tests next to it (pytest puts this folder on ``sys.path``).
"""

from schedkit.testing.strategies import problems as problem_data

__all__ = ["problem_data"]
