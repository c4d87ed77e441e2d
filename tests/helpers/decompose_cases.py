"""Two small reductions written for the tests only, and the problem they split.

``TWO_CHAINS``: two task chains that share nothing. Chain ``a1 -> a2 -> a3`` runs on
``gpu0``/``cpu0`` (``a1`` pinned to the gpu, ``a2`` to the cpu: a transfer ``gpu0 -> cpu0``
is in every schedule), chain ``b1 -> b2`` on ``gpu1``/``cpu1``.

``Identity`` (a 1 -> 1 reduction) leaves a problem as it is; ``Components`` (a split)
makes one part per weakly connected component of the task graph, each with the devices
its tasks may use and the links between them; it is exact when no two components may
use the same device, and its ``invert`` merges the part schedules.

Nothing is registered at import (``METHODS.names()`` parametrises other tests at collection
time): the fixtures of the tests register and unregister.
"""

from schedkit import Problem
from schedkit.reductions import Reduction, Split
from schedkit.schedule import Quality, Result, Schedule, Termination

TWO_CHAINS = {
    "format": "schedkit/v1", "name": "two_chains",
    "devices": [{"name": "gpu0"}, {"name": "cpu0"}, {"name": "gpu1"}, {"name": "cpu1"}],
    "links": [{"src": "gpu0", "dst": "cpu0", "bandwidth": 2, "latency": 0.5},
              {"src": "gpu1", "dst": "cpu1", "bandwidth": 4}],
    "tasks": [
        {"name": "a1", "durations": {"gpu0": 1, "cpu0": 3}, "pin": ["gpu0"]},
        {"name": "a2", "durations": {"gpu0": 2, "cpu0": 2}, "pin": ["cpu0"]},
        {"name": "a3", "durations": {"gpu0": 1, "cpu0": 4}},
        {"name": "b1", "durations": {"gpu1": 2, "cpu1": 3}},
        {"name": "b2", "durations": {"gpu1": 2, "cpu1": 1}},
    ],
    "edges": [{"src": "a1", "dst": "a2", "size": 4}, {"src": "a2", "dst": "a3", "size": 2},
              {"src": "b1", "dst": "b2", "size": 8}],
}

#: The optimal makespans of the two chains (gpu0 [0,1), transfer 2.5, cpu0 [3.5,5.5),
#: a3 on cpu0 [5.5, 9.5) or back on the gpu after a 1.5 transfer [7, 8); b1, b2 on gpu1).
OPTIMUM = 8.0


def two_chains() -> Problem:
    return Problem.from_dict(TWO_CHAINS)


class Identity(Reduction):
    """Leave the problem as it is."""

    name = "identity"
    exactness = "equivalent"

    def apply(self, problem, blocks=None):
        return problem, self.inverse(problem, {"problem": problem.name})

    def invert(self, results, inverse):
        return results[0]


class Coarse(Identity):
    """The identity, declared a restriction (as a coarsening would be)."""

    name = "coarse"
    exactness = "restriction"


def components(problem: Problem) -> list[list[int]]:
    """Weakly connected components of the task graph, each sorted, in order of first task."""
    parent = list(range(len(problem.tasks)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in problem.edges:
        parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(problem.tasks)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


class Components(Split):
    """One part per component of the task graph; exact when components share no device."""

    name = "components"
    exactness = "equivalent"

    def accepts(self, problem, blocks=None):
        used = [set().union(*(problem.allowed[i] for i in group)) for group in components(problem)]
        return all(not (used[a] & used[b]) for a in range(len(used)) for b in range(a))

    def apply(self, problem, blocks=None):
        data = problem.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
        parts, names = [], []
        for k, group in enumerate(components(problem)):
            tasks = {problem.tasks[i] for i in group}
            devices = {problem.devices[d] for i in group for d in problem.allowed[i]}
            sub = dict(data, name=f"{problem.name}/{k}",
                       devices=[d for d in data["devices"] if d["name"] in devices],
                       links=[x for x in data.get("links", []) if {x["src"], x["dst"]} <= devices],
                       tasks=[t for t in data["tasks"] if t["name"] in tasks],
                       edges=[e for e in data.get("edges", []) if e["src"] in tasks])
            for task in sub["tasks"]:
                if "durations" in task:
                    task["durations"] = {d: v for d, v in task["durations"].items() if d in devices}
            parts.append(Problem.from_dict(sub))
            names.append(sorted(tasks))
        return parts, self.inverse(problem, {"problem": problem.name, "tasks": names})

    def invert(self, results, inverse):
        schedules = [r.schedule for r in results]
        merged = Schedule(problem=inverse.payload["problem"], method=self.name, status="feasible",
                          tasks=[row for s in schedules for row in s.tasks],
                          transfers=[t for s in schedules for t in s.transfers])
        bounds = [r.bound for r in results]
        bound = max(bounds) if bounds and None not in bounds else None
        return Result(termination=Termination.FINISHED, quality=Quality.FEASIBLE, schedule=merged,
                      bound=bound)
