"""Sphinx configuration of the schedkit documentation."""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import schedkit  # noqa: E402

project = "schedkit"
author = "schedkit authors"
copyright = "schedkit authors"
version = release = schedkit.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "run_tutorials",  # docs/_ext: generates reference pages, runs the tutorials
]

exclude_patterns = ["_build"]
templates_path = []
html_static_path = []
html_theme = "alabaster"

autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
nitpicky = False
