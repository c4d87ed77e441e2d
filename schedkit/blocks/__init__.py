"""Constraint blocks: the kernel's built-in blocks and the block registry."""

from .base import BLOCKS, FAMILIES, Block, block_from_data, register_block
from .assignment import Assignment
from .placement import Placement
from .precedence import Precedence
from .no_overlap import NoOverlap
from .memory import Memory

__all__ = ["BLOCKS", "FAMILIES", "Block", "block_from_data", "register_block",
           "Assignment", "Placement", "Precedence", "NoOverlap", "Memory"]
