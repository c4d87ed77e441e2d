"""Stages 1-2 of the pipeline, what is asked: the problem file and its indexed view.

Plain data: nothing here imports a solver or Pyomo (an import-linter contract checks it).
"""

from schedkit.problem.reading import read_data
from schedkit.problem.spec import ProblemSpec
from schedkit.problem.loading import load_spec, parse_spec
from schedkit.problem.problem import Problem, as_problem

__all__ = ["Problem", "ProblemSpec", "as_problem", "load_spec", "parse_spec", "read_data"]
