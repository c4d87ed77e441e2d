"""Seeded generators of ``schedkit/v1`` data: random task graphs and platforms.

Pure functions of their arguments (the same arguments give the same data on every
platform); the ``schedkit generate`` command wires them to the command line.
"""

from schedkit.generators.random_dags import dump, erdos_renyi, layered

__all__ = ["dump", "erdos_renyi", "layered"]
