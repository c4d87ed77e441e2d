"""Timing engines that turn a mapping, an order or a priority into start times.

Shared by every method: the heuristics, the MILP's horizon, read-back and
extensions, and the validator's reference timings.
"""

from schedkit.timing.resources import Timeline, arrival
from schedkit.timing.list_schedule import DeviceRule, FinishRule, earliest_finish, list_schedule
from schedkit.timing.fixed_order import batched_schedule, device_orders, fixed_order_times, retime
from schedkit.timing.events import SimState, simulate
from schedkit.timing.ordered import OrderedTiming, bfs_order, priority_order
from schedkit.timing.assemble import placement_indices, to_schedule, with_transfers
from schedkit.timing.transfers import Transfers
from schedkit.timing.memory_levels import MemoryLevels
from schedkit.timing.holds import Holds, Resource
from schedkit.timing.rules import TimingRules

__all__ = ["Timeline", "arrival", "DeviceRule", "FinishRule", "earliest_finish", "list_schedule",
           "batched_schedule", "device_orders", "fixed_order_times", "retime", "SimState", "simulate", "OrderedTiming",
           "bfs_order", "priority_order", "placement_indices", "to_schedule", "with_transfers", "Transfers", "MemoryLevels",
           "TimingRules", "Holds", "Resource"]
