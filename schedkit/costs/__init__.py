"""Measured costs: cost tables (``schedkit-costs/v1``), profiling, importing and calibration.

A cost table holds the measured time of each node of one model on one device
(:mod:`~schedkit.costs.table`). ``schedkit profile`` measures one with onnxruntime
(:mod:`~schedkit.costs.profile`), ``schedkit costs import`` reads one from a profile measured
elsewhere (:mod:`~schedkit.costs.imports`), ``schedkit calibrate`` fits a platform device's
roofline to one (:mod:`~schedkit.costs.calibrate`) and ``schedkit convert onnx --costs`` puts
its times into a problem. Nothing here imports onnxruntime or scipy until it is used.

Examples
--------
>>> from schedkit.costs import CostTable
>>> CostTable.model_fields["format"].default
'schedkit-costs/v1'
"""

from schedkit.costs.table import (COSTS_FORMAT, CostDevice, CostTable, ModelInfo, NodeCost, Total,
                                  parse_cost_table, read_cost_table)

__all__ = ["COSTS_FORMAT", "CostDevice", "CostTable", "ModelInfo", "NodeCost", "Total",
           "parse_cost_table", "read_cost_table"]
