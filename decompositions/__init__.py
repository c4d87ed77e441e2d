"""Decompositions: split a problem, solve the parts with any method, combine."""
