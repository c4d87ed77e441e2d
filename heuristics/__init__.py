"""Heuristic methods: list schedulers, search, partitioners x per-device schedulers.

Installed as ``schedkit.heuristics`` (the folder ``heuristics/`` beside the kernel, mapped by
``package-dir`` in ``pyproject.toml``). The kernel never imports it at module level: a
registry (``METHODS``) imports it the first time it is asked for a name it does not know
(``schedkit.registry.BUILTIN_PACKAGES``), and importing it registers what it holds.
"""

# Partitioners x per-device schedulers (Mayer et al. 2017): registers the PART+SCHED methods.
from schedkit.heuristics import partition_schedule as _partition_schedule  # noqa: E402,F401

# List scheduling (met, greedy, heft) and search over device strings (annealing, evolution).
from schedkit.heuristics import met as _met  # noqa: E402,F401
from schedkit.heuristics import greedy as _greedy  # noqa: E402,F401
from schedkit.heuristics import heft as _heft  # noqa: E402,F401
from schedkit.heuristics import annealing as _annealing  # noqa: E402,F401
from schedkit.heuristics import evolution as _evolution  # noqa: E402,F401
from schedkit.heuristics import chain_split as _chain_split  # noqa: E402,F401
