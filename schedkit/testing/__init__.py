"""The public conformance kit: what every block, family and method must pass.

schedkit's own tests use it, and so can a plug-in's:

- :func:`check_block`, :func:`check_family`, :func:`check_method` and
  :func:`check_method_on` (in :mod:`schedkit.testing.checks`);
- :func:`check_reduction` for decompositions (in :mod:`schedkit.testing.reductions`);
- :data:`CATALOGUE` of small instances with known optima (:mod:`schedkit.testing.instances`);
- hypothesis strategies :func:`~schedkit.testing.strategies.problems` and
  :func:`~schedkit.testing.strategies.mappings` (:mod:`schedkit.testing.strategies`, which
  needs the ``test`` extra).
"""

from schedkit.testing.checks import (check_block, check_family, check_method, check_method_on,
                                     formulation_for)
from schedkit.testing.instances import CATALOGUE, Instance, instance
from schedkit.testing.reductions import check_reduction

__all__ = ["check_block", "check_family", "check_method", "check_method_on", "formulation_for", "check_reduction",
           "CATALOGUE", "Instance", "instance"]
