"""Importers: the base class, the ``IMPORTERS`` registry and lazy optional dependencies.

An importer reads a file of another format and returns ``schedkit/v1`` problem data (a
``dict``); :func:`convert` validates that data with :func:`~schedkit.problem.parse_spec`.
Third-party packages add importers through the entry-point group ``schedkit.importers``.

Examples
--------
>>> IMPORTERS.get("jssp").extra is None
True
>>> IMPORTERS.get("onnx-not-yet")
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: unknown importer 'onnx-not-yet' (known: jssp, moirai, msr, onnx); an importer of your own loads from its Python file with --plugin FILE.py (or SCHEDKIT_PLUGINS=FILE.py)
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, ClassVar

from schedkit.errors import SchedkitError
from schedkit.problem import parse_spec
from schedkit.registry import Registry, doc_line

__all__ = ["Importer", "IMPORTERS", "register_importer", "need", "convert", "list_importers"]

IMPORTERS = Registry("importer", group="schedkit.importers")


class Importer:
    """Base class of importers: another format read into ``schedkit/v1`` data.

    Subclasses give a docstring (its first line is the importer's summary in
    ``schedkit convert --help``), set the class attributes below, implement :meth:`read`
    and are registered with :func:`register_importer`.

    Attributes
    ----------
    name : str
        Registered name, the ``KIND`` of ``schedkit convert KIND FILE`` (set by
        :func:`register_importer`).
    suffixes : tuple of str
        File suffixes the format usually has (``(".onnx",)``).
    extra : str or None
        The optional-dependency extra of schedkit the importer needs (``"onnx"`` for
        ``pip install 'schedkit[onnx]'``), or ``None`` when it needs nothing more.

    Examples
    --------
    >>> class Lines(Importer):
    ...     '''One task per line of a text file, all on one device.'''
    ...     suffixes = (".lines",)
    ...     def read(self, path, **options):
    ...         names = Path(path).read_text().split()
    ...         return {"format": "schedkit/v1", "devices": [{"name": "cpu"}],
    ...                 "tasks": [{"name": n, "durations": {"cpu": 1}} for n in names]}
    >>> Lines.suffixes, Lines.extra
    (('.lines',), None)
    """

    name: ClassVar[str] = ""
    suffixes: ClassVar[tuple[str, ...]] = ()
    extra: ClassVar[str | None] = None

    def read(self, path: str | Path, **options: Any) -> dict:
        """Read ``path`` and return ``schedkit/v1`` problem data (not yet validated).

        Parameters
        ----------
        path : str or Path
            The file to read.
        **options
            Importer-specific options.

        Returns
        -------
        dict
            Problem data that :func:`~schedkit.problem.parse_spec` accepts.
        """
        raise NotImplementedError(f"importer '{self.name}' does not implement read()")

    def need(self, package: str) -> ModuleType:
        """Import the optional ``package`` this importer needs (see :func:`need`).

        Examples
        --------
        >>> class Fake(Importer):
        ...     name, extra = "fake", "fake"
        >>> Fake().need("json").__name__
        'json'
        """
        return need(package, importer=self.name, extra=self.extra)


def need(package: str, *, importer: str, extra: str | None = None) -> ModuleType:
    """Import ``package`` lazily; a one-line :class:`SchedkitError` naming the extra when missing.

    Importers call it inside :meth:`Importer.read`, so that schedkit itself never needs
    the package and the error tells the user what to install.

    Parameters
    ----------
    package : str
        Module to import (``"onnx"``).
    importer : str
        Name of the importer that needs it, for the message.
    extra : str, optional
        schedkit's optional-dependency extra that installs the package.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    SchedkitError
        When the package is not installed, or fails to import.

    Examples
    --------
    >>> need("json", importer="demo").__name__
    'json'
    >>> need("schedkit_no_such_package", importer="onnx", extra="onnx")
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: onnx import needs the 'onnx' extra: pip install 'schedkit[onnx]'
    """
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != package and not package.startswith(missing + "."):
            raise SchedkitError(f"{importer} import: package '{package}' failed to import: "
                                f"{exc}") from None
        if extra:
            raise SchedkitError(f"{importer} import needs the '{extra}' extra: "
                                f"pip install 'schedkit[{extra}]'") from None
        raise SchedkitError(f"{importer} import needs the package '{package}': "
                            f"pip install {package}") from None
    except ImportError as exc:
        raise SchedkitError(f"{importer} import: package '{package}' failed to import: {exc}") from None


def register_importer(name: str, *, replace: bool = False) -> Callable[[type], type]:
    """Class decorator: register an :class:`Importer` subclass under ``name``.

    Parameters
    ----------
    name : str
        The ``KIND`` users give to ``schedkit convert``.
    replace : bool
        Take the place of an importer already registered under ``name``.

    Examples
    --------
    >>> @register_importer("demo-lines")
    ... class Lines(Importer):
    ...     '''One task per line.'''
    >>> IMPORTERS.get("demo-lines").name
    'demo-lines'
    >>> IMPORTERS.unregister("demo-lines")
    """
    def add(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, Importer)):
            raise TypeError(f"importer '{name}': {cls!r} is not a subclass of Importer")
        cls.name = name
        IMPORTERS.register(name, cls, replace=replace)
        return cls
    return add


def convert(kind: str, path: str | Path, **options: Any) -> dict:
    """Read ``path`` with the importer ``kind`` and validate the data as a problem.

    Parameters
    ----------
    kind : str
        A registered importer name (:func:`list_importers`).
    path : str or Path
        The file to read.
    **options
        Passed to the importer's :meth:`~Importer.read`.

    Returns
    -------
    dict
        ``schedkit/v1`` problem data that :func:`~schedkit.problem.parse_spec` accepts.

    Raises
    ------
    SchedkitError
        Unknown ``kind``, a missing extra, an unreadable or malformed file, or converted
        data that is not a valid problem (one line each).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "toy.txt"
    >>> _ = src.write_text("2 2\\n0 3 1 2\\n1 4 0 1\\n")
    >>> data = convert("jssp", src)
    >>> data["name"], len(data["tasks"]), len(data["devices"])
    ('toy', 4, 2)
    """
    importer = IMPORTERS.get(kind)()
    data = importer.read(path, **options)
    parse_spec(data, source=f"{path} (converted by '{kind}')")
    return data


def list_importers() -> list[tuple[str, str]]:
    """``(name, summary)`` of every registered importer, sorted by name.

    Examples
    --------
    >>> [name for name, _ in list_importers()]
    ['jssp', 'moirai', 'msr', 'onnx']
    """
    return [(name, doc_line(cls)) for name, cls in IMPORTERS.items()]
