"""Shared variable families: each one module that creates its columns, warm-starts and reads back.

Blocks name the families they use as strings (``requires = {"x", "timing"}``); the
build context creates a family the first time a block asks for it, after the
families it requires. The built-in families register themselves here; a plug-in
registers its own with :func:`register_family`.
"""

from schedkit.milp.families.base import FAMILIES, Draft, Family, register_family
from schedkit.milp.families.assignment import AssignmentFamily
from schedkit.milp.families.timing import TimingFamily
from schedkit.milp.families.makespan import MakespanFamily
from schedkit.milp.families.order import OrderFamily
from schedkit.milp.families.transfer import TransferFamily
from schedkit.milp.families.batch import BatchFamily
from schedkit.milp.families.holding import HoldingFamily

__all__ = ["FAMILIES", "Draft", "Family", "register_family", "AssignmentFamily", "TimingFamily",
           "MakespanFamily", "OrderFamily", "TransferFamily", "BatchFamily",
           "HoldingFamily"]
