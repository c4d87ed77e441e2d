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

import ast
import functools
import importlib
import inspect
import textwrap
import threading
from importlib.metadata import entry_points
from typing import Any, Callable

from pydantic import ValidationError

from schedkit import plugins
from schedkit.errors import SchedkitError

BUILTIN_PACKAGES = ("schedkit.formulations", "schedkit.heuristics", "schedkit.decompositions")

#: Held while a registry loads the built-in packages, entry points and ``SCHEDKIT_PLUGINS``:
#: a thread that asks a registry meanwhile (two solves started at once) waits for its
#: entries rather than finding none. Reentrant: the imports register, and may ask, in turn.
_LOADING = threading.RLock()


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
        self._started = group is None

    def register(self, name: str, obj: Any = None, *, replace: bool = False) -> Callable:
        """Register ``obj`` under ``name``; usable as a decorator.

        A name registered twice is an error unless ``replace=True``: a plug-in must not
        silently take the place of a built-in entry.
        """
        def add(target):
            current = self._entries.get(name)
            if current is not None and current is not target and not replace:
                raise self.error(f"{self.what} '{name}' is already registered "
                                 f"(by {_origin(current)}); pass replace=True to replace it")
            self._entries[name] = target
            plugins.note(self, name)  # (a plug-in that registers nothing is an error)
            return target
        return add if obj is None else add(obj)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a test's temporary entry); nothing happens when it is absent."""
        self._entries.pop(name, None)

    def _load(self) -> None:
        with _LOADING:
            if not self._started:
                self._started = True   # (an import that asks this registry again goes on)
                self._load_packages()
            # Files and modules named by SCHEDKIT_PLUGINS: how a worker process gets the
            # plug-ins its parent was given (loaded once; cheap when there are none).
            plugins.load_environment()

    def _load_packages(self) -> None:
        for package in BUILTIN_PACKAGES:
            importlib.import_module(package)
        for ep in entry_points(group=self.group):
            try:
                ep.load()
            except Exception as exc:  # a broken plug-in must not break the tool
                raise SchedkitError(f"{self.what} plug-in '{ep.name}' failed to load: {exc}") from None

    def get(self, name: str) -> Any:
        """The entry called ``name``; an error listing the known names otherwise.

        A registry with plug-in discovery (``group``) ends the error with how to add an
        entry of one's own (:func:`schedkit.plugins.hint`).
        """
        if name not in self._entries:
            self._load()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            how = f"; {plugins.hint(self.what)}" if self.group else ""
            raise self.error(f"unknown {self.what} '{name}' (known: {known}){how}")
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


def attribute_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of a class and its bases: the string after each ``name: type``.

    Read from the source only when asked for (help texts and docs), not when a model is
    defined: pydantic's ``use_attribute_docstrings`` would read every option and block
    class's source at import time. A class without source (made by ``type()``) inherits
    its bases' docs.

    Examples
    --------
    >>> class Options:
    ...     seed: int = 0
    ...     '''Seed of the random generator.'''
    >>> attribute_docs(Options)     # no source for a class typed at a prompt
    {}
    >>> from schedkit.blocks import NoOverlap
    >>> attribute_docs(NoOverlap)["encoding"].split()[:4]
    ['How', 'the', 'disjunction', 'is']
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        docs.update(_own_attribute_docs(klass))
    return docs


@functools.cache
def _own_attribute_docs(cls: type) -> dict[str, str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # built-ins, type(...) classes, prompts
        return {}
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
    docs = {}
    for first, second in zip(node.body, node.body[1:]) if node is not None else ():
        if isinstance(first, ast.AnnAssign) and isinstance(first.target, ast.Name) \
                and isinstance(second, ast.Expr) and isinstance(second.value, ast.Constant) \
                and isinstance(second.value.value, str):
            docs[first.target.id] = inspect.cleandoc(second.value.value)
    return docs


def _origin(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return f"{module}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def doc_line(obj: Any) -> str:
    """First line of an object's docstring (for listings)."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def one_line(error: ValidationError, data: Any = None, *, prefix: str = "",
             extra: str = "unknown key '{key}'") -> str:
    """One line naming the first offending item of a pydantic error (the only formatter).

    Locations such as ``('tasks', 3, 'durations', 'gpu0')`` become
    ``task 'conv1' durations.gpu0`` by looking the item's name (or ``src->dst``) up in
    ``data``; a key that the model does not know becomes ``extra`` with ``{key}`` filled
    in. ``prefix`` names the thing validated (``block 'memory'``): it precedes the message
    with a colon, or ``extra`` with a space when the unknown key is at the top level.
    More errors are counted, not listed.

    Examples
    --------
    >>> from pydantic import BaseModel, ConfigDict
    >>> class Item(BaseModel):
    ...     model_config = ConfigDict(extra="forbid")
    ...     name: str
    ...     size: float = 0
    >>> class Box(BaseModel):
    ...     items: list[Item]
    >>> data = {"items": [{"name": "a"}, {"name": "b", "size": "big"}]}
    >>> try:
    ...     Box.model_validate(data)
    ... except ValidationError as exc:
    ...     print(one_line(exc, data))
    item 'b' size: Input should be a valid number, unable to parse string as a number
    >>> try:
    ...     Item.model_validate({"name": "a", "colour": 1})
    ... except ValidationError as exc:
    ...     print(one_line(exc, prefix="block 'item'", extra="has no parameter '{key}'"))
    block 'item' has no parameter 'colour'
    >>> data = {"items": [{"name": "a", "colour": 1}]}
    >>> try:
    ...     Box.model_validate(data)
    ... except ValidationError as exc:
    ...     print(one_line(exc, data, prefix="box.yaml"))
    box.yaml: item 'a': unknown key 'colour'
    """
    errors = error.errors()
    first = errors[0]
    loc = list(first["loc"])
    message = first["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if first["type"] == "extra_forbidden" and loc:
        where = _location(loc[:-1], data)
        message = extra.format(key=loc[-1])
        if prefix and not where:
            text = f"{prefix} {message}"
        else:
            text = ": ".join(part for part in (prefix, where, message) if part)
    else:
        where = _location(loc, data)
        text = ": ".join(part for part in (prefix, where, message) if part)
    more = len(errors) - 1
    return text + (f" (+{more} more)" if more > 0 else "")


def _location(loc: list, data: Any) -> str:
    where = []
    node = data
    i = 0
    while i < len(loc):
        part = loc[i]
        if isinstance(node, dict) and part in node and isinstance(node[part], list) \
                and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            items = node[part]
            index = loc[i + 1]
            item = items[index] if index < len(items) else None
            kind = str(part).rstrip("s")
            label = item.get("name", item.get("task")) if isinstance(item, dict) else None
            if isinstance(label, str):
                where.append(f"{kind} '{label}'")
            elif isinstance(item, dict) and "src" in item and "dst" in item:
                where.append(f"{kind} {item['src']}->{item['dst']}")
            else:
                where.append(f"{kind} #{index}")
            node = item
            i += 2
            continue
        # Pydantic adds the union member tried ('float', 'dict[...]'): not the user's words.
        if isinstance(part, str) and ("[" in part or part in {"float", "function-before[_to_number(), float]"}):
            i += 1
            continue
        where.append(str(part))
        node = node.get(part) if isinstance(node, dict) else None
        i += 1
    # Consecutive plain keys read as a dotted path: durations.gpu0
    text: list[str] = []
    for piece in where:
        if text and not _named(text[-1]) and not _named(piece):
            text[-1] += "." + piece
        else:
            text.append(piece)
    return " ".join(text)


def _named(piece: str) -> bool:
    return "'" in piece or "->" in piece or "#" in piece
