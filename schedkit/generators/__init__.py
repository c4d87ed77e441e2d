"""Seeded generators of ``schedkit/v1`` data: random task graphs and platforms.

Pure functions of their arguments (the same arguments give the same data on every
platform); the ``schedkit generate`` command wires them to the command line.

- :mod:`~schedkit.generators.random_dags`: ``layered`` (Mayer et al.) and ``erdos_renyi``;
- :mod:`~schedkit.generators.rwnn`: DiviML's randomly wired networks (modules of ER, WS
  or BA graphs joined by 1 to 4 channels, ``sdep``/``wdep``) on a CPU and two GPUs;
- :mod:`~schedkit.generators.pipeline`: She et al.'s DualPipe experiment (a bidirectional
  training pipeline of F, I and W tasks with a memory timeline) and DualPipe's own schedule;
- :mod:`~schedkit.generators.transformer`: a decoder-only transformer's operator graph
  (forward, and backward when asked, in micro-batches), timed on a platform's roofline.
"""

from schedkit.generators.random_dags import dump, erdos_renyi, layered
from schedkit.generators.dualpipe import dualpipe_schedule
from schedkit.generators.pipeline import pipeline
from schedkit.generators.rwnn import rwnn

__all__ = ["dump", "erdos_renyi", "layered", "rwnn", "pipeline", "dualpipe_schedule"]
