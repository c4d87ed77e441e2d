"""Heuristic methods: list schedulers, search, partitioners x per-device schedulers."""

# Partitioners x per-device schedulers (Mayer et al. 2017): registers the PART+SCHED methods.
from . import partition_schedule as _partition_schedule  # noqa: E402,F401

# List scheduling (met, greedy, heft) and search over device strings (annealing, evolution).
from . import met as _met  # noqa: E402,F401
from . import greedy as _greedy  # noqa: E402,F401
from . import heft as _heft  # noqa: E402,F401
from . import annealing as _annealing  # noqa: E402,F401
from . import evolution as _evolution  # noqa: E402,F401
