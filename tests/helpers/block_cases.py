"""The tiny instance every block test uses, its golden-LP check and hand-written schedules.

Devices ``gpu`` (memory 10) and ``cpu``, linked at bandwidth 2 with latency 0.5.
Tasks ``a`` (memory 6, collocated with ``c``), ``b`` (memory 6), ``c`` (memory 3, pinned to
the gpu); edges ``a -> b`` (size 4: transfer 2.5) and ``a -> c`` (size 2).

The optimum: a on gpu [0, 1), c on gpu [1, 2), b must go to the cpu (memory) and
waits for the transfer: [3.5, 7.5).

``congestion`` needs two transfers that may overlap, so it has an instance of its own,
``PORTS``: ``a`` pinned to the gpu feeds ``b`` and ``c`` (each 5 on the gpu, 1 on the cpu)
with 4 units each (transfer 2.5). Both transfers leave the gpu's send port: on the cpu they
queue ([1, 3.5) then [3.5, 6)), so the optimum keeps ``b`` on the gpu and ends at 6 (5.5
without congestion).

Set ``SCHEDKIT_UPDATE_GOLDEN=1`` to rewrite ``tests/golden/<block>.lp``.
"""

import difflib
import os
from pathlib import Path

from schedkit import Formulation, Problem, Schedule, TaskRun
from schedkit.timing import with_transfers
from schedkit.milp.export import write_model

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

DATA = {
    "format": "schedkit/v1", "name": "blocks",
    "devices": [{"name": "gpu", "memory": 10}, {"name": "cpu"}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 0.5}],
    "tasks": [
        {"name": "a", "durations": {"gpu": 1, "cpu": 3}, "memory": 6, "colocate": "g"},
        {"name": "b", "durations": {"gpu": 2, "cpu": 4}, "memory": 6},
        {"name": "c", "durations": {"gpu": 1, "cpu": 2}, "memory": 3, "pin": ["gpu"], "colocate": "g"},
    ],
    "edges": [{"src": "a", "dst": "b", "size": 4}, {"src": "a", "dst": "c", "size": 2}],
}

#: Blocks each block needs in a formulation (for the families it requires).
WITH = {
    "assignment": ["assignment"],
    "placement": ["assignment", "placement"],
    "precedence": ["assignment", {"precedence": {"communication": True}}],
    "no_overlap": ["assignment", "no_overlap"],
    "no_overlap_bigm": ["assignment", {"no_overlap": {"encoding": "bigm"}}],
    "memory": ["assignment", "memory"],
    "cuts": ["assignment", "precedence", "cuts"],
    "channels": ["assignment", {"precedence": {"communication": True}}, "channels"],
    "congestion": ["assignment", "precedence", "no_overlap", "channels", {"congestion": {"resource": "port"}}],
    "memory_timeline": ["assignment", "placement", "precedence", "no_overlap", {"memory_timeline": {"mode": "deltas"}}],
    "memory_timeline_lifetime": ["assignment", "precedence", "no_overlap", {"memory_timeline": {"mode": "lifetime"}}],
    "symmetry": ["assignment", "symmetry"],
    "symmetry_busy_time": ["assignment", {"symmetry": {"by": "busy_time"}}],
    "batching": ["assignment", "batching", "precedence", "no_overlap", "memory"],
}

PORTS = {
    "format": "schedkit/v1", "name": "ports",
    "devices": [{"name": "gpu"}, {"name": "cpu"}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 0.5}],
    "tasks": [
        {"name": "a", "durations": {"gpu": 1, "cpu": 3}, "pin": ["gpu"]},
        {"name": "b", "durations": {"gpu": 5, "cpu": 1}},
        {"name": "c", "durations": {"gpu": 5, "cpu": 1}},
    ],
    "edges": [{"src": "a", "dst": "b", "size": 4}, {"src": "a", "dst": "c", "size": 4}],
}

#: ``memory_timeline`` (deltas): forward passes ``f1``, ``f2`` (weights 1, activations +4)
#: and their backward passes ``b1``, ``b2`` (activations -4), each pair on one device; each
#: backward pass reads both forward passes. On one device with memory 6 both forward passes
#: would come before any release (level 2 + 8), so the pairs take a device each: f1 on the cpu
#: [0, 3), f2 on the gpu [0, 1), b2 on the gpu [3, 4), b1 on the cpu [3, 6); optimum 6
#: (4 without the timeline).
PAIRS = {
    "format": "schedkit/v1", "name": "pairs",
    "devices": [{"name": "gpu", "memory": 6}, {"name": "cpu", "memory": 6}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 0.5}],
    "tasks": [
        {"name": "f1", "durations": {"gpu": 1, "cpu": 3}, "weight_memory": 1, "activation_memory": 4,
         "colocate": "p1"},
        {"name": "f2", "durations": {"gpu": 1, "cpu": 3}, "weight_memory": 1, "activation_memory": 4,
         "colocate": "p2"},
        {"name": "b1", "durations": {"gpu": 1, "cpu": 3}, "activation_memory": -4, "colocate": "p1"},
        {"name": "b2", "durations": {"gpu": 1, "cpu": 3}, "activation_memory": -4, "colocate": "p2"},
    ],
    "edges": [{"src": "f1", "dst": "b1"}, {"src": "f2", "dst": "b2"},
              {"src": "f1", "dst": "b2"}, {"src": "f2", "dst": "b1"}],
}

#: ``memory_timeline`` (lifetime): ``c`` reads the outputs of ``a`` and ``b`` (3 each), so
#: both live wherever ``c`` runs until it ends: 6 on the gpu (memory 5) is too much, and ``c``
#: runs on the slower cpu: a [0, 1) and b [1, 2) on the gpu, c [2, 4) on the cpu; optimum 4
#: (3 on the gpu alone without the timeline).
JOIN = {
    "format": "schedkit/v1", "name": "join",
    "devices": [{"name": "gpu", "memory": 5}, {"name": "cpu", "memory": 10}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2, "latency": 0.5, "bidirectional": True}],
    "tasks": [
        {"name": "a", "durations": {"gpu": 1, "cpu": 2}, "activation_memory": 3},
        {"name": "b", "durations": {"gpu": 1, "cpu": 2}, "activation_memory": 3},
        {"name": "c", "durations": {"gpu": 1, "cpu": 2}, "weight_memory": 1, "activation_memory": 1},
    ],
    "edges": [{"src": "a", "dst": "c", "size": 0}, {"src": "b", "dst": "c", "size": 0}],
}

#: ``symmetry``: two identical GPUs ``g0`` and ``g1`` (group ``gpu``, linked at bandwidth 2 with
#: latency 0.5, each to the ``cpu`` at bandwidth 1) and the tasks of ``DATA`` without memory, pins
#: or collocation. Optimum 3.5: a and b on one GPU [0, 1) and [1, 3), c on the other after its
#: transfer [2.5, 3.5); the block puts a and b on g0 (2 tasks and 3 of busy time against 1 and 1).
TWINS = {
    "format": "schedkit/v1", "name": "twins",
    "devices": [{"name": "g0", "group": "gpu"}, {"name": "g1", "group": "gpu"}, {"name": "cpu"}],
    "links": [{"src": "g0", "dst": "g1", "bandwidth": 2, "latency": 0.5},
              {"src": "g0", "dst": "cpu", "bandwidth": 1}, {"src": "g1", "dst": "cpu", "bandwidth": 1}],
    "tasks": [
        {"name": "a", "durations": {"g0": 1, "g1": 1, "cpu": 3}},
        {"name": "b", "durations": {"g0": 2, "g1": 2, "cpu": 4}},
        {"name": "c", "durations": {"g0": 1, "g1": 1, "cpu": 2}},
    ],
    "edges": [{"src": "a", "dst": "b", "size": 4}, {"src": "a", "dst": "c", "size": 2}],
}
TWINS_CANONICAL = [("a", "g0", 0, 1), ("b", "g0", 1, 3), ("c", "g1", 2.5, 3.5)]
#: Its mirror image: valid, but not in the canonical order (a symmetry block relabels it).
TWINS_MIRROR = [("a", "g1", 0, 1), ("b", "g1", 1, 3), ("c", "g0", 2.5, 3.5)]

#: Two inputs of a -> b; the gpu runs batches of 1 or 2 (2 take 1.5), the cpu one input in 2.
BATCHED = {
    "format": "schedkit/v1", "name": "batched", "workload": {"inputs": 2},
    "devices": [{"name": "gpu", "batch_sizes": [1, 2], "memory": 10}, {"name": "cpu"}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 1}],
    "tasks": [{"name": "a", "durations": {"gpu": {1: 1, 2: 1.5}, "cpu": 2}, "memory": 4},
              {"name": "b", "durations": {"gpu": {1: 1, 2: 1.5}, "cpu": 2}, "memory": 4}],
    "edges": [{"src": "a", "dst": "b", "size": 1}],
}

#: Blocks whose cases use an instance of their own: kind -> (data, feasible rows, infeasible rows).
#: (For a symmetry block, the third is a mirror image that it relabels rather than rejects.)
OWN = {
    "congestion": (PORTS, [("a", "gpu", 0, 1), ("b", "gpu", 1, 6), ("c", "cpu", 3.5, 4.5)],
                   [("a", "gpu", 0, 1), ("b", "cpu", 3.5, 4.5), ("c", "cpu", 4.5, 5.5)]),
    # Both pairs on the gpu, both forward passes first: 2 + 4 + 4 at time 1.
    "memory_timeline": (PAIRS, [("f1", "cpu", 0, 3), ("f2", "gpu", 0, 1), ("b2", "gpu", 3, 4),
                                ("b1", "cpu", 3, 6)],
                        [("f1", "gpu", 0, 1), ("f2", "gpu", 1, 2), ("b1", "gpu", 2, 3), ("b2", "gpu", 3, 4)]),
    # c on the gpu: its weights (1, resident) and the outputs of a and b (3 + 3) at time 1.
    "memory_timeline_lifetime": (JOIN, [("a", "gpu", 0, 1), ("b", "gpu", 1, 2), ("c", "cpu", 2, 4)],
                                 [("a", "gpu", 0, 1), ("b", "gpu", 1, 2), ("c", "gpu", 2, 3)]),
    "symmetry": (TWINS, TWINS_CANONICAL, TWINS_MIRROR),
    # Two batches of a on the gpu: valid batches, but beyond the formulation's one per device.
    "batching": (BATCHED, [("a", "gpu", 0, 1.5, [0, 1]), ("b", "gpu", 1.5, 3, [0, 1])],
                 [("a", "gpu", 0, 1, [0]), ("a", "gpu", 1, 2, [1]), ("b", "gpu", 2, 3.5, [0, 1])]),
    "symmetry_busy_time": (TWINS, TWINS_CANONICAL, TWINS_MIRROR),
}


def problem(kind: str | None = None) -> Problem:
    """The tiny instance (or the one block ``kind`` uses, see ``OWN``)."""
    return Problem.from_dict(OWN[kind][0] if kind in OWN else DATA)


def schedule(rows, kind: str | None = None) -> Schedule:
    """A schedule from ``(task, device, start, end)`` rows, with the transfer rows they imply."""
    p = problem(kind)
    made = Schedule(problem=p.name, method="manual", status="heuristic",
                    tasks=[TaskRun(task=t, device=d, start=s, end=e, inputs=rest[0] if rest else None)
                           for t, d, s, e, *rest in rows])
    # (rows may carry the inputs of a batch: under batching a transfer is a delay, no row)
    return made if any(r.inputs for r in made.tasks) else with_transfers(p, made)


def cases(kind: str):
    """``(problem, feasible schedule, infeasible schedule or None)`` of block ``kind``."""
    if kind in OWN:
        _, feasible, infeasible = OWN[kind]
        return problem(kind), schedule(feasible, kind), schedule(infeasible, kind)
    infeasible = INFEASIBLE.get(kind)
    return problem(), schedule(OPTIMAL), None if infeasible is None else schedule(infeasible)


OPTIMAL = [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 3.5, 7.5)]

#: A schedule that breaks each semantic block (and only what the block's own test says).
INFEASIBLE = {
    "assignment": [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 3.5, 6)],
    "placement": [("a", "cpu", 0, 3), ("c", "gpu", 4.5, 5.5), ("b", "cpu", 3, 7)],
    "precedence": [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 1, 5)],
    "no_overlap": [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "gpu", 1.5, 3.5)],
    "memory": [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "gpu", 2, 4)],
    # b starts when a ends: its transfer [1, 3.5) ends after b starts.
    "channels": [("a", "gpu", 0, 1), ("c", "gpu", 1, 2), ("b", "cpu", 1, 5)],
}


def block(kind):
    """The block instance of ``kind`` as used in the golden formulation."""
    f = Formulation.from_data({"blocks": WITH[kind]}, name=f"golden_{kind}")
    return next(b for b in f.blocks if b.kind == kind)


def check_golden(kind: str, tmp_path: Path) -> str:
    """Write the LP of the tiny instance under a formulation with ``kind`` and compare it."""
    formulation = Formulation.from_data({"blocks": WITH[kind]}, name=f"golden_{kind}")
    built = formulation.build(problem(kind))
    out = tmp_path / f"{kind}.lp"
    write_model(built, out)
    text = out.read_text()
    golden = GOLDEN / f"{kind}.lp"
    if os.environ.get("SCHEDKIT_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden} missing: run with SCHEDKIT_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            fromfile=str(golden), tofile="written"))
        raise AssertionError(f"LP of block '{kind}' differs from {golden.name}:\n{diff}")
    return text
