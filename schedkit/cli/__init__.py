"""The ``schedkit`` command line."""

from schedkit.cli.main import main

__all__ = ["main"]
