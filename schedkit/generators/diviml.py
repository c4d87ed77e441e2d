"""DiviML's batched platform: an A100, a T4 and a CPU on PCIe 4.0 x16, and how long a batch takes.

DiviML (Ghannane & Abdelfattah 2023) schedules L inputs of a network at once, in batches,
on a CPU and two different GPUs. This module puts any problem on that platform with a
workload of L inputs (``schedkit generate rwnn --inputs L`` uses it). Where the paper
leaves a choice open, the choice made here is stated.

Relative speeds
    DiviML's Table II (RWNN): the CPU takes 7.10x and the T4 1.26x the A100's time. A task's
    A100 time for one input is its least duration in the given problem (for
    :func:`~schedkit.generators.rwnn.rwnn` data, its ``gpu0`` time).
Batch times (modelled here; the paper measures them)
    A batch of ``b`` inputs takes ``t1 * (1 + s * (b - 1))``, ``t1`` the device's time for one
    input and ``s`` the share of a single input's time that each further input adds: 0.15 on
    the A100 (a batch of 16 takes 3.25x one input: a large GPU is far from busy with one
    input), 0.30 on the T4 (5.5x) and 0.90 on the CPU (14.5x: nearly linear). Every device
    runs the same ``batch_sizes`` (DiviML's B/4, B/2, 3B/4, B by default); the duration maps
    also give size 1, so that the same problem without a workload is one input.
Links
    Every pair joined by PCIe 4.0 x16, 25 GB/s and 10 us; an edge's size is per input (its
    transfer time is paid per batch, as the ``batching`` semantics say).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.generators.rwnn import rwnn
>>> data = diviml_workload(rwnn(modules=1, nodes=4, graph="er", seed=0), inputs=8)
>>> p = Problem.from_dict(data)
>>> p.devices, p.inputs, p.spec.devices[0].batch_sizes
(['a100', 't4', 'cpu'], 8, [2, 4, 6, 8])
>>> first = data["tasks"][0]["durations"]
>>> round(first["a100"][8] / first["a100"][1], 2), round(first["cpu"][1] / first["a100"][1], 2)
(2.05, 7.1)
"""

from __future__ import annotations

from typing import Sequence

from schedkit.errors import ProblemError

__all__ = ["DIVIML_DEVICES", "diviml_workload", "batch_time", "baselines"]

#: (device, time relative to the A100 (DiviML Table II, RWNN), share each further input adds).
DIVIML_DEVICES = (("a100", 1.0, 0.15), ("t4", 1.26, 0.30), ("cpu", 7.10, 0.90))
PCIE4_BANDWIDTH = 2.5e7  # bytes per ms (25 GB/s)
PCIE4_LATENCY = 0.01  # ms


def batch_time(single: float, share: float, size: int) -> float:
    """Time of a batch of ``size`` inputs on a device that takes ``single`` for one input."""
    return single * (1.0 + share * (size - 1))


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def diviml_workload(data: dict, inputs: int = 16, batch_sizes: Sequence[int] | None = None) -> dict:
    """``data`` on DiviML's A100 + T4 + CPU platform with a workload of ``inputs`` inputs.

    Parameters
    ----------
    data : dict
        A ``schedkit/v1`` problem; its tasks keep their names, edges and sizes, their A100
        time for one input is their least duration (or ``work``).
    inputs : int
        L, the inputs of the workload.
    batch_sizes : sequence of int, optional
        Sizes every device runs; by default L/4, L/2, 3L/4 and L (those >= 1, distinct).

    Returns
    -------
    dict
        The problem, named ``NAME-diviml-LxL``.
    """
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        raise ProblemError(f"inputs: needs an integer >= 1, got {inputs!r}")
    sizes = sorted(set(batch_sizes if batch_sizes is not None
                       else [b for b in (inputs // 4, inputs // 2, 3 * inputs // 4, inputs) if b >= 1]))
    if not sizes or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= inputs for b in sizes):
        raise ProblemError(f"batch_sizes: needs integers in 1..{inputs}, got {list(batch_sizes or [])}")
    names = [name for name, _, _ in DIVIML_DEVICES]
    devices = [{"name": name, "batch_sizes": sizes} for name in names]
    links = [{"src": a, "dst": b, "bandwidth": PCIE4_BANDWIDTH, "latency": PCIE4_LATENCY}
             for k, a in enumerate(names) for b in names[k + 1:]]
    tasks = []
    for task in data["tasks"]:
        base = min(task["durations"].values(), key=_single) if "durations" in task else task["work"]
        base = _single(base)
        durations = {name: {b: _round(batch_time(base * slowness, share, b)) for b in sorted({1, *sizes})}
                     for name, slowness, share in DIVIML_DEVICES}
        row = {"name": task["name"], "durations": durations}
        if task.get("output_size"):
            row["output_size"] = task["output_size"]
        tasks.append(row)
    return {"format": "schedkit/v1", "name": f"{data.get('name', 'problem')}-diviml-L{inputs}",
            "workload": {"inputs": inputs}, "devices": devices, "links": links, "tasks": tasks,
            "edges": [dict(e) for e in data.get("edges", [])]}


def _single(value) -> float:
    """One input's time from a duration value (a number, or a map with size 1)."""
    return float(value[1]) if isinstance(value, dict) else float(value)


def baselines(problem) -> dict[str, float]:
    """DiviML's two single-device baselines of a batched ``problem``, as makespans.

    ``one_by_one``: the best single device running the L inputs one at a time (DiviML's naive
    baseline); ``whole_batch``: the best single device running the L inputs in batches of one
    of its sizes, batch after batch (the best such size; the last batch may be smaller when
    the device runs that size).
    """
    b, L = problem.batches, problem.inputs
    tasks = range(len(problem.tasks))
    one, whole = float("inf"), float("inf")
    for d in range(len(problem.devices)):
        if not all(d in problem.allowed[i] for i in tasks):
            continue
        if all(_runs_one(problem, i, d) for i in tasks):
            one = min(one, L * sum(b.time(i, d, 1) for i in tasks))
        for size in set().union(*(b.sizes[i][d] for i in tasks)):
            full, rest = divmod(L, size)
            if all(size in b.sizes[i][d] and (not rest or rest in b.sizes[i][d]) for i in tasks):
                whole = min(whole, sum(full * b.time(i, d, size) + (b.time(i, d, rest) if rest else 0.0)
                                       for i in tasks))
    return {"one_by_one": one, "whole_batch": whole}


def _runs_one(problem, i: int, d: int) -> bool:
    """Whether task ``i``'s duration on ``d`` gives a time for one input (a number, or a map with size 1)."""
    task = problem.spec.tasks[i]
    value = task.entry(problem.spec.devices[d]) if task.durations else 1.0
    return not isinstance(value, dict) or 1 in value
