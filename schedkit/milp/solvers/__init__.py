"""Solver adapters: HiGHS through highspy (the default), any Pyomo solver by name."""
