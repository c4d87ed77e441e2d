"""Named registries: blocks, methods and formulations register themselves here.

The kernel never imports the built-in packages (``schedkit.formulations``,
``schedkit.heuristics``, ``schedkit.decompositions``) at module level: a registry
imports them, and third-party entry points, the first time it is asked for a name.

Examples
--------
>>> colors = Registry("color")
>>> @colors.register("red")
... def red():
...     "The colour of fire."
>>> colors.get("red").__doc__
'The colour of fire.'
>>> colors.get("blue")
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: unknown color 'blue' (known: red)
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Callable

from .errors import SchedkitError

BUILTIN_PACKAGES = ("schedkit.formulations", "schedkit.heuristics", "schedkit.decompositions")


class Registry:
    """A name -> object map with a doc line per entry and plug-in discovery.

    Parameters
    ----------
    what : str
        What the entries are, for messages ("block", "method").
    group : str, optional
        Entry-point group third-party packages use to add entries.
    """

    def __init__(self, what: str, group: str | None = None, error: type[SchedkitError] = SchedkitError):
        self.what = what
        self.group = group
        self.error = error
        self._entries: dict[str, Any] = {}
        self._loaded = group is None

    def register(self, name: str, obj: Any = None) -> Callable:
        """Register ``obj`` under ``name``; usable as a decorator."""
        def add(target):
            self._entries[name] = target
            return target
        return add if obj is None else add(obj)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for package in BUILTIN_PACKAGES:
            importlib.import_module(package)
        for ep in entry_points(group=self.group):
            try:
                ep.load()
            except Exception as exc:  # a broken plug-in must not break the tool
                raise SchedkitError(f"{self.what} plug-in '{ep.name}' failed to load: {exc}") from None

    def get(self, name: str) -> Any:
        """The entry called ``name``; an error listing the known names otherwise."""
        if name not in self._entries:
            self._load()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            raise self.error(f"unknown {self.what} '{name}' (known: {known})")
        return self._entries[name]

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, Any]]:
        """``(name, entry)`` pairs, sorted by name."""
        self._load()
        return sorted(self._entries.items())

    def __contains__(self, name: str) -> bool:
        self._load()
        return name in self._entries


def doc_line(obj: Any) -> str:
    """First line of an object's docstring (for listings)."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""
