"""Plug-ins from a plain Python file or module, without packaging.

A block, method, variable family (any registry entry) defined in ``my_block.py`` is
registered when the file is imported, by the same decorators the built-ins use
(``@register_block``, ``@register_method``, ``@register_family``). :func:`load_plugin`
imports such a file, or a module by its dotted name; ``schedkit --plugin FILE_OR_MODULE``
does it from the command line; and the environment variable ``SCHEDKIT_PLUGINS`` (files
and module names separated by ``os.pathsep``) does it in every process that asks a
registry for a name. Worker processes inherit the variable: the command line adds its
``--plugin`` files to it (as absolute paths), so process pools, a local Dask cluster and
the CP-SAT worker load the same plug-ins.

A file ``my_block.py`` is imported as the module ``schedkit_plugin_my_block`` (never as
``my_block``, which could hide an installed package of that name); a process that meets
that name, unpickling one of its classes, finds it through the variable.

Examples
--------
>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "hello_method.py"
>>> _ = path.write_text('''
... from schedkit.methods import METHODS
... METHODS.register("hello", object())
... ''')
>>> load_plugin(str(path), export=False)       # (export: for worker processes)
'schedkit_plugin_hello_method'
>>> from schedkit.methods import METHODS
>>> "hello" in METHODS
True
>>> METHODS.unregister("hello")
>>> load_plugin(str(path.with_name("missing.py")))
Traceback (most recent call last):
...
schedkit.errors.SchedkitError: plugin .../missing.py: no such file
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
from pathlib import Path

from schedkit.errors import SchedkitError

__all__ = ["ENV", "load_plugin", "load_plugins", "load_environment", "environment_plugins",
           "module_name", "hint"]

#: The environment variable of plug-ins to load: files and modules, ``os.pathsep``-separated.
ENV = "SCHEDKIT_PLUGINS"

#: Prefix of the module name a plug-in file is imported as.
PREFIX = "schedkit_plugin_"

#: Packages whose registrations are the built-ins': imported before a plug-in, so that a
#: plug-in that takes a built-in's name is the one blamed (and its own entries counted).
_BUILTINS = ("schedkit", "schedkit.formulations", "schedkit.heuristics", "schedkit.decompositions")

_done: set[str] = set()       # plug-ins loaded in this process (absolute paths, module names)
_loading: set[str] = set()    # being imported now (a plug-in that asks a registry for a name)
_recorded: list[tuple[object, str]] | None = None   # (registry, name) a loading plug-in registered
_settled: str | None = None   # the value of SCHEDKIT_PLUGINS whose plug-ins are all loaded


def hint(what: str) -> str:
    """How a user adds an entry of their own to a registry (the end of an 'unknown' message).

    Examples
    --------
    >>> hint("block")
    'a block of your own loads from its Python file with --plugin FILE.py (or SCHEDKIT_PLUGINS=FILE.py)'
    >>> hint("importer")[:30]
    'an importer of your own loads '
    >>> hint("formulation")
    'a formulation of your own is a YAML file (-f FILE.yaml), or loads from a Python file with --plugin FILE.py'
    """
    if what == "formulation":  # (the usual way is a file of blocks, not Python)
        return (f"a {what} of your own is a YAML file (-f FILE.yaml), or loads from a Python file "
                f"with --plugin FILE.py")
    article = "an" if what[:1] in "aeiou" else "a"
    return f"{article} {what} of your own loads from its Python file with --plugin FILE.py (or {ENV}=FILE.py)"


def note(registry, name: str) -> None:
    """Called by :meth:`schedkit.registry.Registry.register`: what a loading plug-in registers."""
    if _recorded is not None:
        _recorded.append((registry, name))


def is_file(spec: str) -> bool:
    """Whether ``spec`` names a file (a ``.py`` suffix, a path separator) rather than a module.

    Examples
    --------
    >>> is_file("my_block.py"), is_file("plugins/blocks"), is_file("mypkg.blocks")
    (True, True, False)
    """
    return spec.endswith(".py") or "/" in spec or os.sep in spec


def module_name(path: str | Path) -> str:
    """The module name a plug-in file is imported as: the prefix and the file's stem.

    Examples
    --------
    >>> module_name("blocks/max-tasks.py")
    'schedkit_plugin_max_tasks'
    """
    return PREFIX + re.sub(r"\W", "_", Path(path).stem)


def load_plugin(spec: str, *, export: bool = True) -> str:
    """Import the plug-in file or module ``spec``; return its module name.

    Loading a plug-in twice imports it once. The built-in entries are registered first.

    Parameters
    ----------
    spec : str
        A Python file (``my_block.py``, ``plugins/blocks.py``) or a dotted module name that
        Python can import (installed, or on ``PYTHONPATH``).
    export : bool
        Also add it to ``SCHEDKIT_PLUGINS`` in this process's environment (a file as its
        absolute path), so that the worker processes started after it load it too: the
        CP-SAT worker, process pools, a local Dask cluster.

    Raises
    ------
    SchedkitError
        One line naming the plug-in: a missing file or module, a syntax error (with its line),
        an exception raised while it was imported (with the plug-in's line), or a plug-in that
        registers nothing.
    """
    name = _load(str(spec).strip())
    if export:
        _export(str(spec).strip())
    return name


def _load(spec: str) -> str:
    if not spec:
        raise SchedkitError("plugin: an empty name (give a file, my_block.py, or a module)")
    file = is_file(spec)
    path = Path(spec).expanduser().resolve() if file else None
    key = str(path) if file else spec
    if key in _done or key in _loading:
        return module_name(path) if file else spec
    if file and not path.is_file():
        raise SchedkitError(f"plugin {spec}: {'is not a file' if path.exists() else 'no such file'}")
    name = module_name(path) if file else spec
    if name in sys.modules:  # imported before (a module the user's code imported, an unpickled class)
        if file and getattr(sys.modules[name], "__file__", None) != str(path):
            raise SchedkitError(f"plugin {spec}: another plug-in file is already loaded as "
                                f"'{name}' (rename one of them)")
        _done.add(key)
        return name
    _loading.add(key)  # (first: the built-ins' registries may ask for the environment's plug-ins)
    try:
        for package in _BUILTINS:
            importlib.import_module(package)
        registered = _recording(spec, name, path)
    finally:
        _loading.discard(key)
    if not registered:
        if file:
            sys.modules.pop(name, None)  # (a second try says the same)
        raise SchedkitError(f"plugin {spec}: registers nothing (register a block with "
                            f"@register_block('name'), a method with @register_method('name'))")
    _done.add(key)
    return name


def _recording(spec: str, name: str, path: Path | None) -> list:
    """Import the plug-in; return what it registered (a failed one's entries removed again)."""
    global _recorded
    outer, _recorded = _recorded, []
    try:
        _import(spec, name, path)
        return _recorded
    except BaseException:
        for registry, entry in _recorded:  # (half a plug-in: a second try must not clash)
            registry.unregister(entry)
        _recorded = []
        raise
    finally:
        _recorded = outer + _recorded if outer is not None else None


def _import(spec: str, name: str, path: Path | None) -> None:
    try:
        if path is None:
            importlib.import_module(name)
        else:
            _finder.install()
            found = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(found)
            sys.modules[name] = module  # (before it runs: its classes pickle by this name)
            try:
                found.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
    except SchedkitError as exc:
        raise SchedkitError(f"plugin {spec}: {exc}") from None
    except SyntaxError as exc:
        where = "" if exc.filename in (None, str(path)) else f"{exc.filename}, "
        raise SchedkitError(f"plugin {spec}: {where}line {exc.lineno}: {exc.msg}") from None
    except SystemExit as exc:  # (a script's command line, run at import)
        raise SchedkitError(f"plugin {spec}: exits when imported (status {exc.code}); keep a "
                            f"script's own work under 'if __name__ == \"__main__\":'") from None
    except ModuleNotFoundError as exc:
        if path is None and exc.name is not None and name.startswith(exc.name):
            raise SchedkitError(f"plugin {spec}: no module named '{exc.name}' (a module must be "
                                f"installed or on PYTHONPATH; a file is named by its path, such "
                                f"as ./{name.replace('.', '/')}.py)") from None
        raise SchedkitError(f"plugin {spec}{_line(exc, spec, path)}: {exc}") from None
    except Exception as exc:  # the user's code: one line naming it, never a traceback
        raise SchedkitError(f"plugin {spec}{_line(exc, spec, path)}: "
                            f"{type(exc).__name__}: {exc}") from None


def _line(exc: BaseException, spec: str, path: Path | None) -> str:
    """``: line N`` of the plug-in's own frame nearest to where ``exc`` was raised."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame.f_code.co_filename
        if (path is not None and frame == str(path)) or \
                (path is None and tb.tb_frame.f_globals.get("__name__", "").startswith(spec)):
            line = tb.tb_lineno
        tb = tb.tb_next
    return f": line {line}" if line is not None else ""


def load_plugins(specs, *, export: bool = True) -> list[str]:
    """Load each plug-in of ``specs`` in order (:func:`load_plugin`); return their module names."""
    return [load_plugin(spec, export=export) for spec in specs]


def _export(spec: str) -> None:
    listed = environment_plugins()
    entry = str(Path(spec).expanduser().resolve()) if is_file(spec) else spec
    if entry not in listed:
        os.environ[ENV] = os.pathsep.join(listed + [entry])


def environment_plugins() -> list[str]:
    """The plug-ins ``SCHEDKIT_PLUGINS`` names, in order (empty entries skipped).

    Examples
    --------
    >>> os.environ[ENV] = os.pathsep.join(["a.py", "", "pkg.blocks"])
    >>> environment_plugins()
    ['a.py', 'pkg.blocks']
    >>> del os.environ[ENV]
    """
    return [spec.strip() for spec in os.environ.get(ENV, "").split(os.pathsep) if spec.strip()]


def load_environment() -> None:
    """Load the plug-ins ``SCHEDKIT_PLUGINS`` names that this process has not loaded yet.

    Every registry calls it before it answers that a name is unknown; an error names the
    variable and the plug-in.
    """
    global _settled
    text = os.environ.get(ENV, "")
    if text == _settled:  # (every registry look-up that misses asks: answer at once)
        return
    package = sys.modules.get("schedkit")
    if getattr(getattr(package, "__spec__", None), "_initializing", False):
        return  # (asked while schedkit itself imports: a plug-in importing schedkit would fail)
    for spec in environment_plugins():
        try:
            load_plugin(spec, export=False)
        except SchedkitError as exc:
            raise SchedkitError(f"{ENV}: {exc}") from None
    _settled = text


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``schedkit_plugin_NAME`` among the files ``SCHEDKIT_PLUGINS`` names: a worker
    process that unpickles a plug-in's class imports its module by that name."""

    def install(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.append(self)

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX):
            return None
        for spec in environment_plugins():
            if is_file(spec) and module_name(spec) == fullname and Path(spec).is_file():
                _done.add(str(Path(spec).expanduser().resolve()))
                return importlib.util.spec_from_file_location(fullname, Path(spec).expanduser().resolve())
        return None


_finder = _Finder()
if os.environ.get(ENV):
    _finder.install()
