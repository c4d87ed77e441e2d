"""A catalogue of small instances with known optimal makespans, shipped with the package.

Every method must return a valid schedule no shorter than the optimum; the exact
method must prove it. The instances are data in this module (no file to find), so a
plug-in's tests use the same catalogue as schedkit's own.

Examples
--------
>>> [case.name for case in CATALOGUE]
['chain', 'fork_join', 'comm_cpu', 'topcuoglu2002', 'ft06', 'la01']
>>> case = instance("fork_join")
>>> case.optimum, len(case.problem().tasks)
(8.0, 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from schedkit.errors import SchedkitError
from schedkit.importers.jssp import parse_jssp
from schedkit.problem import Problem


@dataclass(frozen=True)
class Instance:
    """A problem with a known optimal makespan under a formulation.

    Attributes
    ----------
    name : str
    make : callable
        Returns the problem as ``schedkit/v1`` data (a fresh dict each call).
    formulation : str
        The preset formulation the optimum holds for.
    optimum : float
    time_limit : float or None
        Seconds an exact solve needs at most on a slow machine (``None``: a fraction of one).
    why : str
        Why the optimum is what it is (a proof or a source).
    """

    name: str
    make: Callable[[], dict]
    formulation: str
    optimum: float
    time_limit: float | None = None
    why: str = ""

    def problem(self) -> Problem:
        """The instance as a :class:`~schedkit.problem.Problem`."""
        return Problem.from_dict(self.make())

    @property
    def small(self) -> bool:
        """Whether every method solves it in well under a second."""
        return self.time_limit is None


def _chain() -> dict:
    return {"name": "chain", "devices": [{"name": "d"}],
            "tasks": [{"name": "a", "durations": {"d": 2}}, {"name": "b", "durations": {"d": 3}},
                      {"name": "c", "durations": {"d": 4}}],
            "edges": [{"src": "a", "dst": "b", "size": 5}, {"src": "b", "dst": "c", "size": 5}]}


def _fork_join() -> dict:
    return {"name": "fork_join",
            "devices": [{"name": "fast"}, {"name": "slow"}],
            "links": [{"src": "fast", "dst": "slow", "bandwidth": 1}],
            "tasks": [{"name": "s", "durations": {"fast": 1, "slow": 1}},
                      {"name": "l", "durations": {"fast": 4, "slow": 6}},
                      {"name": "r", "durations": {"fast": 4, "slow": 6}},
                      {"name": "t", "durations": {"fast": 1, "slow": 1}}],
            "edges": [{"src": "s", "dst": "l", "size": 1}, {"src": "s", "dst": "r", "size": 1},
                      {"src": "l", "dst": "t", "size": 1}, {"src": "r", "dst": "t", "size": 1}]}


def comm_decides(size: float = 10) -> dict:
    """Two tasks where the transfer of ``size`` decides the device of the second.

    ``load`` runs on the cpu; ``work`` takes 1 on the gpu, 5 on the cpu; moving its input
    costs ``size / 1 + 0.5``: with ``size = 10`` the gpu gives 1 + 10.5 + 1 = 12.5 > 1 + 5 = 6.
    """
    return {"name": f"comm{size:g}",
            "devices": [{"name": "gpu"}, {"name": "cpu"}],
            "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1, "latency": 0.5}],
            "tasks": [{"name": "load", "durations": {"cpu": 1}},
                      {"name": "work", "durations": {"gpu": 1, "cpu": 5}}],
            "edges": [{"src": "load", "dst": "work", "size": size}]}


#: Topcuoglu, Hariri and Wu (2002), Fig. 2: 10 tasks on 3 processors, unit bandwidth.
_TOPCUOGLU_DURATIONS = {
    "n1": (14, 16, 9), "n2": (13, 19, 18), "n3": (11, 13, 19), "n4": (13, 8, 17), "n5": (12, 13, 10),
    "n6": (13, 16, 9), "n7": (7, 15, 11), "n8": (5, 11, 14), "n9": (18, 12, 20), "n10": (21, 7, 16)}
_TOPCUOGLU_EDGES = [("n1", "n2", 18), ("n1", "n3", 12), ("n1", "n4", 9), ("n1", "n5", 11), ("n1", "n6", 14),
                    ("n2", "n8", 19), ("n2", "n9", 16), ("n3", "n7", 23), ("n4", "n8", 27), ("n4", "n9", 23),
                    ("n5", "n9", 13), ("n6", "n8", 15), ("n7", "n10", 17), ("n8", "n10", 11),
                    ("n9", "n10", 13)]


def topcuoglu2002() -> dict:
    """The sample graph of the HEFT paper (HEFT: 80; optimum 73)."""
    devices = ["p1", "p2", "p3"]
    return {"format": "schedkit/v1", "name": "topcuoglu2002",
            "devices": [{"name": d} for d in devices],
            "links": [{"src": a, "dst": b, "bandwidth": 1}
                      for a, b in (("p1", "p2"), ("p1", "p3"), ("p2", "p3"))],
            "tasks": [{"name": t, "durations": dict(zip(devices, times))}
                      for t, times in _TOPCUOGLU_DURATIONS.items()],
            "edges": [{"src": a, "dst": b, "size": s} for a, b, s in _TOPCUOGLU_EDGES]}


#: Fisher and Thompson's 6x6 job shop (mt06), OR-Library format.
FT06 = """6 6
2  1  0  3  1  6  3  7  5  3  4  6
1  8  2  5  4 10  5 10  0 10  3  4
2  5  3  4  5  8  0  9  1  1  4  7
1  5  0  5  2  5  3  3  4  8  5  9
2  9  1  3  4  5  5  4  0  3  3  1
1  3  3  3  5  9  0 10  4  4  2  1
"""

#: Lawrence's 10x5 job shop la01, OR-Library format.
LA01 = """10 5
1 21 0 53 4 95 3 55 2 34
0 21 3 52 4 16 2 26 1 71
3 39 4 98 1 42 2 31 0 12
1 77 0 55 4 79 2 66 3 77
0 83 3 34 2 64 1 19 4 37
1 54 2 43 4 79 0 92 3 62
3 69 4 77 1 87 2 87 0 93
2 38 0 60 1 41 3 24 4 83
3 17 1 49 4 25 0 44 2 98
4 77 3 79 2 43 1 75 0 96
"""

CATALOGUE: list[Instance] = [
    Instance("chain", _chain, "latency", 9.0, why="three tasks in a chain on one device: 2 + 3 + 4"),
    Instance("fork_join", _fork_join, "latency", 8.0,
             why="s, r, t on slow (1 + 6 + 1, no transfer on that chain) while l runs on fast [2, 6) "
                 "and its data reaches t at 7; with s on fast the slow branch ends at 8 and t at >= 9"),
    Instance("comm_cpu", comm_decides, "latency", 6.0, why="see comm_decides: the cpu gives 1 + 5"),
    Instance("topcuoglu2002", topcuoglu2002, "latency", 73.0, why="proven by the MILP (HEFT finds 80)"),
    Instance("ft06", lambda: parse_jssp(FT06, name="ft06"), "jssp", 55.0,
             why="Fisher and Thompson (1963); optimum proven in the literature"),
    Instance("la01", lambda: parse_jssp(LA01, name="la01"), "jssp", 666.0, time_limit=60,
             why="Lawrence (1984); optimum proven in the literature"),
]


def instance(name: str) -> Instance:
    """The catalogue instance called ``name``."""
    for case in CATALOGUE:
        if case.name == name:
            return case
    known = ", ".join(c.name for c in CATALOGUE)
    raise SchedkitError(f"unknown catalogue instance '{name}' (known: {known})")
