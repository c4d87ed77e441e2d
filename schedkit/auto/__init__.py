"""``auto``: one call gets schedkit's best schedule under one wall-clock budget.

- :mod:`~schedkit.auto.traits`: what ``auto`` reads of the problem's structure;
- :mod:`~schedkit.auto.phases`: the phases that structure calls for, with their time shares;
- :mod:`~schedkit.auto.state`: the incumbent, the bound and the log carried between phases,
  and the events a progress callback receives;
- :mod:`~schedkit.auto.method`: the registered method (the default of ``schedkit solve``).

It reaches the other methods through the method registry only: the kernel's ``milp`` and
the plug-ins' heuristics and decompositions, which register themselves.
"""

from schedkit.auto.method import DEFAULT_BUDGET, Auto, AutoOptions
from schedkit.auto.state import AutoEvent

__all__ = ["Auto", "AutoOptions", "AutoEvent", "DEFAULT_BUDGET"]
