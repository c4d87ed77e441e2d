"""Reading users' files: one reader for every JSON, YAML or text file schedkit is given.

Problem files, schedule files, formulation and platform files, and the importers' and
solution files all go through :func:`read_text` (and :func:`parse_json` /
:func:`parse_yaml`), so that a wrong argument, a missing or binary file, a key given twice or
nesting too deep to read is the same one-line error everywhere, of the caller's error class.

Examples
--------
>>> read_data("examples/tiny.yaml")["name"]
'tiny'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from schedkit.errors import ProblemError, SchedkitError, quoted

__all__ = ["file_path", "read_text", "parse_json", "parse_yaml", "read_data", "parse_format"]


class _UniqueKeys(yaml.SafeLoader):
    """The safe YAML loader, refusing a mapping that gives one key twice (YAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {quoted(key)}",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _unique_pairs(pairs: list) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {quoted(key)}")
        seen[key] = value
    return seen


def read_text(path: Any, error: type[SchedkitError] = ProblemError) -> str:
    """The text of a user's file, or a one-line ``error`` naming it (the one reader of input files).

    A path that is not a ``str`` or ``Path``, a missing or unreadable file and a file that is not
    UTF-8 text (a binary file given by mistake) each raise ``error``, never ``TypeError`` or
    ``UnicodeDecodeError``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.bin"
    >>> _ = path.write_bytes(b"\\x89PNG\\r\\n\\x00\\xff")
    >>> read_text(path)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: .../model.bin: not a text file (byte 0x89 at offset 0 is not UTF-8)
    >>> read_text(None)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: expected a file path (str or pathlib.Path), not NoneType
    """
    path = file_path(path, error)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a text file (byte 0x{exc.object[exc.start]:02x} at offset "
                    f"{exc.start} is not UTF-8)") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None


def file_path(path: Any, error: type[SchedkitError] = ProblemError) -> Path:
    """``path`` as a ``Path`` when it is a non-empty ``str`` or ``Path``, else a one-line ``error``.

    Examples
    --------
    >>> file_path("examples/tiny.yaml").name
    'tiny.yaml'
    >>> file_path(["examples/tiny.yaml"])
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: expected a file path (str or pathlib.Path), not list
    """
    if not isinstance(path, (str, Path)) or not str(path):
        given = "an empty path" if isinstance(path, (str, Path)) else type(path).__name__
        raise error(f"expected a file path (str or pathlib.Path), not {given}")
    return Path(path)


def parse_json(text: str, source: str, error: type[SchedkitError] = ProblemError) -> Any:
    """JSON text as Python data; malformed, too deeply nested or a key given twice: ``error``.

    Examples
    --------
    >>> parse_json('{"a": [1]}', "f.json")
    {'a': [1]}
    >>> parse_json("[" * 100000 + "]" * 100000, "f.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: f.json: malformed JSON: nested too deeply
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as exc:
        raise error(f"{source}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # a duplicate key
        raise error(f"{source}: malformed JSON: {exc}") from None
    except RecursionError:  # the decoder recurses once per level of nesting
        raise error(f"{source}: malformed JSON: {_TOO_DEEP}") from None


_TOO_DEEP = "nested too deeply"


def parse_yaml(text: str, source: str, error: type[SchedkitError] = ProblemError) -> Any:
    """YAML text as Python data (safe loader), with the same one-line errors as :func:`parse_json`.

    Examples
    --------
    >>> parse_yaml("a: [1, {b: 2}]", "f.yaml")
    {'a': [1, {'b': 2}]}
    >>> parse_yaml("a: 1\\na: 2\\n", "f.yaml")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: f.yaml: malformed YAML at line 2: duplicate key 'a'
    """
    try:
        return yaml.load(text, Loader=_UniqueKeys)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{source}: malformed YAML{line}: {reason}") from None
    except RecursionError:  # the composer and constructor recurse once per level of nesting
        raise error(f"{source}: malformed YAML: {_TOO_DEEP}") from None


def read_data(path: str | Path, error: type[SchedkitError] = ProblemError) -> Any:
    """Read a JSON or YAML file into Python data, with a one-line error when malformed.

    JSON for a ``.json`` suffix, YAML otherwise. A key given twice in one mapping is an error
    in both formats (both would silently keep the last value); so are a binary file and
    nesting too deep to read (see :func:`read_text`, :func:`parse_json`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.yaml"
    >>> _ = path.write_text("name: a\\nname: b\\n")
    >>> read_data(path)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: .../p.yaml: malformed YAML at line 2: duplicate key 'name'
    """
    text = read_text(path, error)
    if Path(path).suffix.lower() == ".json":
        return parse_json(text, str(path), error)
    return parse_yaml(text, str(path), error)


def parse_format(data: Any, model, fmt: str, source: str, needs: str, required: bool = False,
                 error: type[Exception] = ProblemError):
    """``data`` as the pydantic ``model`` of the file format ``fmt``, with one-line errors.

    ``data`` must be a mapping (``needs`` says what it holds); its ``format`` key, when given,
    must be ``fmt`` (``required``: it must be given); a field the model refuses is named, in an
    ``error`` (a :class:`~schedkit.errors.ProblemError` by default).

    Examples
    --------
    >>> from schedkit.problem.spec import ProblemSpec
    >>> parse_format([], ProblemSpec, "schedkit/v1", "p.json", "'devices' and 'tasks'")
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: p.json: expected a mapping with 'devices' and 'tasks'
    """
    from pydantic import ValidationError

    from schedkit.registry import one_line

    if not isinstance(data, dict):
        raise error(f"{source}: expected a mapping with {needs}")
    found = data.get("format", None if required else fmt)
    if found != fmt:
        raise error(f"{source}: unsupported format {quoted(found)} (expected {fmt!r})")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(one_line(exc, data, prefix=source)) from None
