"""``schedkit solve``: its option flags are generated from the methods' ``Options`` models.

Every field of every registered method's ``Options`` becomes one flag: ``time_limit`` is
``--time-limit``. A field name several methods share is one flag; its type comes from
the first declaration (the default method's first, then the others by name), and the
chosen method's model validates the value. The help is the field's ``description``, or
else the first sentence of its attribute docstring, followed by the methods that take
it. A field may declare a short flag with ``Field(json_schema_extra={"flag": "-f"})``.

Examples
--------
>>> flags = {f.name: f for f in solve_flags()}
>>> flags["time_limit"].option_strings
('--time-limit',)
>>> flags["formulation"].option_strings, flags["formulation"].methods[:3]
(('--formulation', '-f'), ('auto', 'annealing', 'batch_split+fifo'))
"""

from __future__ import annotations

import argparse
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from schedkit.cli.common import finite_float, time_limit
from schedkit.errors import SchedkitError
from schedkit.registry import attribute_docs

__all__ = ["DEFAULT_METHOD", "SolveFlag", "solve_flags", "field_help"]

DEFAULT_METHOD = "auto"
"""The method ``schedkit solve`` runs without ``--method``; its fields come first."""
FIXED_SHORT = {"verbose": "-v"}
"""Short flags the command line gives to option fields itself."""
RESERVED = {"problem", "method", "show", "output", "help", "handler", "command", "solve_flags",
            "plot", "report", "quiet"}
"""Names of the solve command's own arguments; no option field may take them."""
_SCALARS = (int, float, str, bool)


@dataclass(frozen=True)
class SolveFlag:
    """One generated flag of ``schedkit solve``: an option field and the methods that take it.

    Attributes
    ----------
    name : str
        The field name, also the argparse destination.
    option_strings : tuple of str
        ``("--formulation", "-f")``: the long flag first.
    kind : type
        ``int``, ``float``, ``str`` or ``bool``: the argparse type (of the first declaration).
    default_false : bool
        A ``bool`` field whose every declaration defaults to ``False``: a plain switch.
    help : str
        The help line shown by ``schedkit solve --help``.
    methods : tuple of str
        The registered methods whose ``Options`` have the field.
    """

    name: str
    option_strings: tuple[str, ...]
    kind: type
    default_false: bool
    help: str
    methods: tuple[str, ...]

    @property
    def long(self) -> str:
        """The long flag, ``--time-limit`` (used in messages)."""
        return self.option_strings[0]

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        """Add the flag to an argparse parser or group; an absent flag leaves ``None``.

        Parameters
        ----------
        parser : argparse.ArgumentParser
            A parser or argument group.

        Examples
        --------
        >>> flag = SolveFlag("seed", ("--seed",), int, False, "Seed.", ("annealing",))
        >>> parser = argparse.ArgumentParser()
        >>> flag.add_to(parser)
        >>> parser.parse_args(["--seed", "3"]).seed, parser.parse_args([]).seed
        (3, None)
        """
        help_text = self.help.replace("%", "%%")
        if self.kind is bool and self.default_false:
            parser.add_argument(*self.option_strings, dest=self.name, action="store_true",
                                default=None, help=help_text)
        elif self.kind is bool:
            parser.add_argument(*self.option_strings, dest=self.name,
                                action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            kind = finite_float if self.kind is float else self.kind
            if self.name == "time_limit":
                kind = time_limit  # (a number, or 'none': no limit)
            parser.add_argument(*self.option_strings, dest=self.name, type=kind, default=None,
                                metavar=self.name.upper(), help=help_text)


def _scalar(annotation: Any) -> type:
    """The argparse type of an annotation: ``int | None`` -> ``int``; anything else -> ``str``."""
    if annotation in _SCALARS:
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and args[0] in _SCALARS:
            return args[0]
    return str  # the method's model parses the text (a Literal, a path ...)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r":[\w:]+:`~?([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)  # :mod:`x` -> x
    text = text.replace("``", "")
    found = re.search(r"[.!?](?=\s|$)", text)
    return text[:found.end()] if found else text


def field_help(options: type, name: str) -> str:
    """The help of an option field: the first sentence of its description or attribute docstring.

    Parameters
    ----------
    options : type
        A method's ``Options`` model.
    name : str
        One of its fields.

    Returns
    -------
    str
        One sentence, without reStructuredText markup (empty when undocumented).

    Examples
    --------
    >>> from schedkit.milp import MilpOptions
    >>> field_help(MilpOptions, "gap")
    'Relative MIP gap at which the solver may stop.'
    """
    text = options.model_fields[name].description or attribute_docs(options).get(name)
    return _first_sentence(text) if text else ""


def _short_flag(info: Any) -> str | None:
    extra = info.json_schema_extra
    return extra.get("flag") if isinstance(extra, dict) else None


def _compact(takers: list[str], everyone: list[str]) -> str:
    """``hash+fifo, hash+msr, hash+pct`` -> ``hash+*`` when no other ``hash+`` method exists."""
    left = set(takers)
    patterns = []
    for part, pattern in ((1, "*+{}"), (0, "{}+*")):
        groups: dict[str, set[str]] = {}
        for name in everyone:
            if "+" in name:
                groups.setdefault(name.split("+", 1)[part], set()).add(name)
        for key, members in sorted(groups.items()):
            if len(members) > 1 and members <= left:
                patterns.append(pattern.format(key))
                left -= members
    return ", ".join(sorted(left) + patterns)


def _shown_default(value: Any) -> str | None:
    if value is None or value is ... or callable(value):
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def solve_flags(methods: list[tuple[str, type]] | None = None, helps: bool = True) -> list[SolveFlag]:
    """The generated flags of ``schedkit solve``, one per distinct option field name.

    Parameters
    ----------
    methods : list of (str, type), optional
        ``(name, Method class)`` pairs; by default every registered method.
    helps : bool
        Write each flag's help text (else only the list of methods that take it).

    Returns
    -------
    list of SolveFlag
        The default method's fields first, in declaration order, then the other methods'
        new fields (methods by name).

    Raises
    ------
    SchedkitError
        When a field takes a name or a short flag of the solve command's own, or two
        fields declare the same short flag.

    Examples
    --------
    >>> from schedkit.methods import METHODS
    >>> [f.long for f in solve_flags([("milp", METHODS.get("milp"))])][:5]
    ['--time-limit', '--seed', '--threads', '--formulation', '--solver']
    >>> {"--verbose", "--insertion"} <= {f.long for f in solve_flags() if f.kind is bool}
    True
    """
    if methods is None:
        from schedkit.methods import METHODS

        methods = METHODS.items()
    methods = sorted(methods, key=lambda item: (item[0] != DEFAULT_METHOD, item[0]))
    everyone = [name for name, _ in methods]
    seen: dict[str, list] = {}  # field -> [first (options, info), short, [(method, default)]]
    for method, cls in methods:
        for name, info in cls.Options.model_fields.items():
            entry = seen.setdefault(name, [(cls.Options, info), None, []])
            entry[1] = entry[1] or _short_flag(info)
            entry[2].append((method, None if info.is_required() else info.get_default()))
    taken = {"-h", "-m", "-o", "-q", "--help", "--method", "--show", "--output", "--plot", "--report",
             "--quiet"}
    flags = []
    for name, ((options, info), short, uses) in seen.items():
        long = "--" + name.replace("_", "-")
        short = short or FIXED_SHORT.get(name)
        strings = (long, short) if short else (long,)
        clash = [s for s in strings if s in taken]
        if name in RESERVED or clash:
            owner = uses[0][0]
            raise SchedkitError(f"option '{name}' of method '{owner}' clashes with the solve "
                                f"command's own {clash[0] if clash else '--' + name}")
        taken.update(strings)
        kind = _scalar(info.annotation)
        defaults = {repr(d) for _, d in uses}
        default_false = kind is bool and defaults == {"False"}
        takers = [m for m, _ in uses]
        note = _compact(takers, everyone)
        shown = _shown_default(uses[0][1]) if len(defaults) == 1 and not default_false else None
        if shown is not None:
            note += f"; default: {shown}"
        text = field_help(options, name) if helps else ""
        flags.append(SolveFlag(name, strings, kind, default_false,
                               f"{text} [{note}]" if text else f"[{note}]", tuple(takers)))
    return flags
