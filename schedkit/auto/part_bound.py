"""A part's lower bound without a solver, as ``auto``'s series and spine phases sum them."""

from __future__ import annotations

from schedkit.problem import Problem
from schedkit.problem.bounds import formulation_bound, lower_bound, split_bound

__all__ = ["part_floor"]


def part_floor(part: Problem, blocks: list | None) -> float:
    """A part's bound without a solver: the problem's bounds for the formulation
    (:func:`~schedkit.problem.bounds.formulation_bound`: critical path, load, ...) and, where
    the formulation delays edges by their data, :func:`~schedkit.problem.bounds.split_bound`.
    Summed over the modules they exceed the whole problem's (Inception-v4: 6.85 against 6.27):
    the critical path of one module and the load of the next both count."""
    if blocks is None:
        return max(lower_bound(part), split_bound(part))
    found = formulation_bound(part, blocks)
    if any(block.edge_delays() for block in blocks):
        found = max(found, split_bound(part))
    return found
