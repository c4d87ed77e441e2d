"""schedkit: map and schedule task graphs on heterogeneous devices as mixed-integer programs.

Examples
--------
>>> import schedkit
>>> problem = schedkit.Problem.load("examples/tiny.yaml")
>>> schedule = schedkit.solve(problem)        # auto: heuristics, bridge DP, the exact race
>>> schedule.status, round(schedule.makespan, 3)
('optimal', 4.516)
"""

from schedkit.errors import (FormulationError, InvalidScheduleError, NoScheduleError, OptionError, ProblemError,
                     ScheduleError, SchedkitError, SolverError)
from schedkit.problem.spec import ProblemSpec
from schedkit.problem.loading import load_spec
from schedkit.problem import Problem
from schedkit.schedule import Schedule, TaskRun, Transfer
from schedkit.blocks import Block, register_block
from schedkit.semantics import Formulation, get_formulation
from schedkit.methods import Method, MethodOptions, list_methods, register_method, solve
from schedkit import milp as _milp  # registers the 'milp' method
from schedkit import auto as _auto  # registers the 'auto' method

__version__ = "0.1.0"

__all__ = ["Problem", "ProblemSpec", "load_spec", "Schedule", "TaskRun", "Transfer", "Block",
           "register_block", "Formulation", "get_formulation", "Method", "MethodOptions",
           "register_method", "solve", "list_methods", "SchedkitError", "ProblemError",
           "FormulationError", "SolverError", "ScheduleError", "InvalidScheduleError", "OptionError",
           "NoScheduleError"]
