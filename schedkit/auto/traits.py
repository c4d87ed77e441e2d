"""What ``auto`` reads of a problem before it plans: size, cuts, groups, memory, symmetry.

:func:`traits_of` is a pure function of the problem, computed once, in linear time on the
graph (networkx's bridges and articulation points), so that it costs little beside the
heuristic incumbent even on 10,000 tasks. :mod:`schedkit.auto.phases` turns it into phases.

Examples
--------
>>> from schedkit import Problem
>>> p = traits_of(Problem.load("examples/tiny.yaml"))
>>> p.tasks, p.devices, p.cuts, p.memory_limited
(6, 2, 4, True)
>>> p.describe()
'6 tasks, 2 devices, 4 cuts (bridges and articulation points), memory capacities'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx

from schedkit.blocks.interchangeable import device_groups
from schedkit.problem.edge_table import edge_count
from schedkit.problem import Problem

__all__ = ["Traits", "traits_of"]


@dataclass(frozen=True)
class Traits:
    """The structure of a problem that decides which methods ``auto`` runs.

    Attributes
    ----------
    tasks, devices, edges : int
        Sizes.
    flexible : int
        Tasks with a choice of device.
    cuts : int
        Bridges and articulation points of the undirected task graph: where the graph
        splits exactly (``bridge_dp``'s modules lie between them).
    colocate_groups : int
        Groups of tasks that must share a device (two tasks or more).
    memory_limited : bool
        Some device has a finite memory capacity.
    memory_tight : bool
        No single device can hold every task's memory: the placement is forced onto
        several devices, and transfers with it.
    identical_groups : int
        Groups of interchangeable devices (symmetry).
    inputs : int
        Inputs of the workload (batching when more than one).
    """

    tasks: int
    devices: int
    edges: int
    flexible: int
    cuts: int
    colocate_groups: int
    memory_limited: bool
    memory_tight: bool
    identical_groups: int
    inputs: int

    def describe(self) -> str:
        """One line for ``--verbose`` and the schedule file's first phase."""
        parts = [f"{self.tasks} tasks", f"{self.devices} devices"]
        if self.cuts:
            parts.append(f"{self.cuts} cuts (bridges and articulation points)")
        if self.colocate_groups:
            parts.append(f"{self.colocate_groups} colocation groups")
        if self.memory_tight:
            parts.append("memory forces several devices")
        elif self.memory_limited:
            parts.append("memory capacities")
        if self.identical_groups:
            parts.append(f"{self.identical_groups} groups of identical devices")
        if self.inputs > 1:
            parts.append(f"{self.inputs} inputs in batches")
        return ", ".join(parts)


def traits_of(problem: Problem, cuts: bool = True) -> Traits:
    """The :class:`Traits` of ``problem``; ``cuts=False``: its cuts are not counted (0), for
    a time too short for the phases they enable (on 100,000 tasks the count takes seconds)."""
    count, cuts = cuts, 0
    if count and len(problem.tasks) > 1:
        undirected = problem.graph.to_undirected(as_view=True)
        # (a bridge is a biconnected component of one edge: one depth-first search, 4x faster
        # than networkx's bridges on 300,000 edges)
        cuts = sum(1 for edges in nx.biconnected_component_edges(undirected) if len(edges) == 1) + \
            sum(1 for _ in nx.articulation_points(undirected))
    capacities = problem.device_memory
    limited = any(math.isfinite(c) for c in capacities)
    total = sum(problem.task_memory) + sum(problem.weight_memory)
    tight = limited and total > max(capacities)
    return Traits(tasks=len(problem.tasks), devices=len(problem.devices), edges=edge_count(problem),
                   flexible=sum(1 for a in problem.allowed if len(a) > 1), cuts=cuts,
                   colocate_groups=sum(1 for m in problem.colocate_groups.values() if len(m) > 1),
                   memory_limited=limited, memory_tight=tight,
                   identical_groups=len(device_groups(problem)), inputs=problem.inputs)
