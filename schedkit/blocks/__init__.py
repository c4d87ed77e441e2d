"""Constraint blocks: the kernel's built-in blocks and the block registry."""

from schedkit.blocks.base import BLOCKS, Block, block_from_data, register_block
from schedkit.blocks.context import BuildContext, RowSink
from schedkit.blocks.expr import Expr, Row
from schedkit.blocks.assignment import Assignment
from schedkit.blocks.placement import Placement
from schedkit.blocks.precedence import Precedence
from schedkit.blocks.no_overlap import NoOverlap
from schedkit.blocks.memory import Memory
from schedkit.blocks.cuts import Cuts
from schedkit.blocks.channels import Channels
from schedkit.blocks.congestion import Congestion
from schedkit.blocks.memory_timeline import MemoryTimeline
from schedkit.blocks.symmetry import Symmetry
from schedkit.blocks.batching import Batching

__all__ = ["BLOCKS", "Block", "BuildContext", "RowSink", "Expr", "Row", "block_from_data", "register_block",
           "Assignment", "Placement", "Precedence", "NoOverlap", "Memory", "Cuts",
           "Channels", "Congestion", "MemoryTimeline", "Symmetry", "Batching"]
