"""Whether a model can be built and solved within the time and memory at hand.

The size of a model is estimated before it is built, from the blocks
(:meth:`~schedkit.blocks.Block.estimate`); measured rates turn nonzeros into seconds
of building and bytes of memory (the sparse rows in Python, then HiGHS's own copy).
A model that would take more than half of the time left to build (and more than a
second), or more than half of the memory the machine has free, is not built: the MILP
method returns the best schedule it has, saying why (under ``auto``, CP-SAT solves alone).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.milp import get_formulation
>>> size = model_size(get_formulation("latency"), Problem.load("examples/hetero20.yaml"))
>>> 3000 < size < 30000
True
>>> too_large(20_000_000, seconds_left=20.0, memory=64 * 2**30)
'the model would hold about 20,000,000 nonzeros: about 30 s to build (half of the 20 s left is the most), 5.6 GB of memory'
>>> too_large(20_000, seconds_left=20.0, memory=64 * 2**30) is None
True
"""

from __future__ import annotations

from schedkit.machine import available_memory

#: Seconds to build one nonzero (measured: 18 M nonzeros in 25 s, 0.7 M in 0.7 s).
BUILD_SECONDS_PER_NONZERO = 1.5e-6
#: Bytes of memory per nonzero while the model is built and solved (measured peaks under
#: ``-f moirai``: 0.65 GB at 2.4 M nonzeros, 0.98 GB at 3.4 M; at 57 M, more than 13.6 GB
#: before HiGHS's presolve ran out of a 21 GB address space).
BYTES_PER_NONZERO = 300
#: Share of the free memory a model may take: the rest is for the operating system, a
#: CP-SAT worker racing beside HiGHS and the peaks of HiGHS's presolve.
MEMORY_SHARE = 0.5
#: Share of the time left that building may take.
BUILD_SHARE = 0.5
#: Builds this short are always made: the overrun of the time limit is negligible.
QUICK_BUILD_SECONDS = 1.0
#: Seconds per constraint of a CP-SAT model, from the parent's estimate to the start of the
#: search: built in the worker in Python, then loaded and presolved by CP-SAT (measured on
#: 2 busy cores: 196,000 constraints built in 1.1 s; 3.97 M took 10 s to load past a 0.01 s limit).
CP_SECONDS_PER_CONSTRAINT = 8e-6
#: Bytes of memory per CP-SAT constraint (measured: a worker of 3.5 GB at 3.97 M constraints).
CP_BYTES_PER_CONSTRAINT = 900


def model_size(formulation, problem) -> int:
    """About how many nonzeros the model of ``formulation`` on ``problem`` holds."""
    families = sum(3 * (len(a) + 4) for a in problem.allowed)  # end, start and makespan rows
    return families + sum(block.estimate(problem) for block in formulation.blocks)


def cp_model_size(formulation, problem) -> int:
    """About how many constraints the CP-SAT model of ``formulation`` on ``problem`` holds.

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.milp import get_formulation
    >>> p = Problem.load("examples/hetero20.yaml")
    >>> cp_model_size(get_formulation("latency"), p) < model_size(get_formulation("latency"), p)
    True
    """
    variables = sum(2 * len(a) + 2 for a in problem.allowed)  # presence, interval; start, end
    return variables + sum(block.estimate_cp(problem) for block in formulation.blocks
                           if block.role != "cut" and block.applies_to(problem))


def too_large(nonzeros: int, seconds_left: float | None, memory: int | None = None, *,
              cp: bool = False) -> str | None:
    """Why a model of ``nonzeros`` cannot be built and solved here (``None`` when it can).

    ``seconds_left``: the time limit left (``None``: no limit); ``memory``: bytes free
    (by default :func:`available_memory`); ``cp``: ``nonzeros`` counts the constraints of a
    CP-SAT model (:func:`cp_model_size`), at CP-SAT's rates.

    Examples
    --------
    >>> too_large(4_000_000, seconds_left=5.0, memory=64 * 2**30, cp=True)
    'the CP-SAT model would hold about 4,000,000 constraints: about 32 s to build (half of the 5 s left is the most), 3.4 GB of memory'
    """
    memory = available_memory() if memory is None else memory
    build = nonzeros * (CP_SECONDS_PER_CONSTRAINT if cp else BUILD_SECONDS_PER_NONZERO)
    need = nonzeros * (CP_BYTES_PER_CONSTRAINT if cp else BYTES_PER_NONZERO)
    slow = seconds_left is not None and build > max(BUILD_SHARE * seconds_left, QUICK_BUILD_SECONDS)
    big = memory is not None and need > MEMORY_SHARE * memory
    if not (slow or big):
        return None
    what = "the CP-SAT model would hold about {:,} constraints" if cp else "the model would hold about {:,} nonzeros"
    text = what.format(nonzeros) + f": about {build:.0f} s to build"
    if slow:
        text += f" (half of the {seconds_left:.2g} s left is the most)"
    text += f", {need / 2**30:.1f} GB of memory"
    if big:
        text += f" (half of the {memory / 2**30:.1f} GB free is the most)"
    return text


def cp_too_large(formulation, problem, seconds_left: float | None, memory: int | None = None) -> str | None:
    """Why the CP-SAT model of ``formulation`` on ``problem`` cannot be built and loaded here
    (:func:`too_large` of :func:`cp_model_size`; ``None`` when it can).

    Examples
    --------
    >>> from schedkit import Problem
    >>> from schedkit.milp import get_formulation
    >>> cp_too_large(get_formulation("latency"), Problem.load("examples/hetero20.yaml"), 10.0) is None
    True
    """
    return too_large(cp_model_size(formulation, problem), seconds_left, memory, cp=True)
