"""Importers: other formats turned into ``schedkit/v1`` problem data (stage 0).

Every importer is registered in :data:`IMPORTERS` (built-ins here, plug-ins through the
entry-point group ``schedkit.importers``); ``schedkit convert KIND FILE`` offers them all.
Importers depend on :mod:`schedkit.problem` only and never on a solver.

Examples
--------
>>> from schedkit.importers import IMPORTERS
>>> IMPORTERS.names()
['jssp', 'moirai', 'msr', 'onnx']
"""

from schedkit.importers.base import (IMPORTERS, Importer, convert, list_importers, need,
                                     register_importer)
from schedkit.importers import jssp as _jssp  # registers 'jssp'
from schedkit.importers import moirai as _moirai  # registers 'moirai' (imports xlrd lazily)
from schedkit.importers import msr as _msr  # registers 'msr'
from schedkit.importers import onnx as _onnx  # registers 'onnx' (imports the onnx package lazily)

__all__ = ["IMPORTERS", "Importer", "convert", "list_importers", "need", "register_importer"]
