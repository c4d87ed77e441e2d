"""Run a schedule of an ONNX model on onnxruntime workers, to check the plan against a real run.

``schedkit execute MODEL.onnx SCHEDULE.json`` (:func:`execute`) gives each device of the
schedule a worker thread with its own onnxruntime sessions and thread budget, cuts the device's
tasks out of the model into sub-models of consecutive tasks (:mod:`.segments`), runs them in the
schedule's order with tensors handed between workers (:mod:`.workers`), and prints the
measured latency and per-device busy time beside the schedule's predictions. The split run's
values must equal a single-session run of the whole model, or it is an error. onnxruntime is
imported only when a run starts (the ``profile`` extra installs it).

Examples
--------
>>> from schedkit.execute import parse_device_map
>>> parse_device_map(["gpu0=cpu"])
{'gpu0': 'cpu'}
"""

from schedkit.execute.plan import Plan, is_cpu, make_plan, parse_device_map
from schedkit.execute.runner import Execution, execute, need_runtime
from schedkit.execute.segments import Segment, cut
from schedkit.execute.workers import ExecuteError

__all__ = ["execute", "Execution", "ExecuteError", "Plan", "make_plan", "parse_device_map", "is_cpu",
           "Segment", "cut", "need_runtime"]
