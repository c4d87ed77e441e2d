"""Decompositions: split or coarsen a problem, solve the parts with any method, combine.

Each module registers one decomposition (and the method of the same name) with the
kernel's :data:`~schedkit.reductions.DECOMPOSITIONS` registry:

- ``bridge_dp``: DiviML's MILP-SPLIT, modules between bridges and articulation points, one
  part per module and device pair, a dynamic program over the chain (exact on a chain);
- ``kedge``: DiviML's multi-channel splitting, modules from k-edge-connected components
  solved in topological order, with DiviML's recursive lower bound;
- ``merge``: She et al.'s greedy node merging to at most N nodes (a coarsening);
- ``fusion``: MOIRAI's operator-fusion coarsening by ordered rules on task ``op``.

``merge_graph`` holds the coarse graph ``merge`` works on, ``merge_levels`` the runs it
starts from on large graphs, ``kedge_modules`` the modules ``kedge`` finds from a
Gomory-Hu tree, ``kedge_bands`` those it finds on large graphs, ``kedge_bound`` its lower
bound and ``kedge_parts`` the parts it cuts from the problem's arrays; they register nothing.

Installed as ``schedkit.decompositions`` (the folder ``decompositions/`` beside the kernel, mapped by
``package-dir`` in ``pyproject.toml``). The kernel never imports it at module level: a
registry (``METHODS`` and ``DECOMPOSITIONS``) imports it the first time it is asked for a name it does not know
(``schedkit.registry.BUILTIN_PACKAGES``), and importing it registers what it holds.
"""

from schedkit.decompositions import bridge_dp as _bridge_dp  # noqa: F401
from schedkit.decompositions import kedge as _kedge  # noqa: F401
from schedkit.decompositions import merge as _merge  # noqa: F401
from schedkit.decompositions import fusion as _fusion  # noqa: F401
