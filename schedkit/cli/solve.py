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
import time
import types
import typing
from dataclasses import dataclass
from typing import Any

from schedkit.cli.common import EXIT_NO_SCHEDULE, NO_LIMIT, SCHEDULE_FILES, files, finite_float, load_problem, \
    say, time_limit
from schedkit.cli.pictures import PLOT_FILES, REPORT_FILES
from schedkit.errors import OptionError, SchedkitError
from schedkit.registry import attribute_docs

__all__ = ["SolveFlag", "solve_flags", "field_help", "add_solve_command", "solve_options", "run_solve"]

DEFAULT_METHOD = "auto"
FIXED_SHORT = {"verbose": "-v"}
"""Short flags the command line gives to option fields itself."""
LENIENT = {"verbose"}
"""Fields whose flag a method without the field ignores (they ask for output, not for an answer)."""
RESERVED = {"problem", "method", "show", "output", "help", "handler", "command", "solve_flags",
            "plot", "report", "quiet"}
"""Names of the solve command's own arguments; no option field may take them."""
_SCALARS = (int, float, str, bool)
#: The time limit a method gets when loading took all of it: its quickest answer.
MIN_SECONDS_LEFT = 0.01


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


def add_solve_command(subparsers: Any, flags: bool = True, helps: bool = True) -> argparse.ArgumentParser:
    """Add ``solve`` with a flag per option field of every registered method.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers()`` returned.
    flags : bool
        Generate the method flags (another command's line does not need them).
    helps : bool
        Write their help texts (read from the option classes' source: only for ``--help``).

    Returns
    -------
    argparse.ArgumentParser
        The command's parser.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="schedkit")
    >>> _ = add_solve_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["solve", "p.yaml", "-m", "annealing", "--seed", "4"])
    >>> args.method, args.seed, args.time_limit
    ('annealing', 4, None)
    """
    generated = solve_flags(helps=helps) if flags else []
    p = subparsers.add_parser(
        "solve", help="solve a problem and print a summary",
        description="Solve a problem with a registered method and print a one-line summary. "
                    "The method options below are generated from the methods' option models; "
                    "each applies to the methods in brackets (a pattern such as *+msr names "
                    "every method ending in +msr).")
    p.add_argument("problem", help="problem file (schedkit/v1, JSON or YAML)")
    p.add_argument("--method", "-m", default=DEFAULT_METHOD,
                   help=f"a method from 'schedkit methods' [{DEFAULT_METHOD}]")
    p.add_argument("--show", action="store_true", help="print the schedule, device by device")
    p.add_argument("-o", "--output", help="write the schedule (JSON) here")
    p.add_argument("--plot", metavar="FILE", help="also draw the schedule's Gantt chart (.png, .svg, "
                                                  ".pdf; needs schedkit[viz])")
    p.add_argument("--report", metavar="FILE", help="also write the HTML report (.html)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress line on the terminal (it never shows when stderr is not one)")
    group = p.add_argument_group("method options")
    for flag in generated:
        flag.add_to(group)
    p.set_defaults(handler=run_solve, solve_flags=generated,
                   **files(("problem", "formulation"), {"output": SCHEDULE_FILES, "plot": PLOT_FILES,
                                                        "report": REPORT_FILES}))
    return p


def solve_options(args: argparse.Namespace) -> dict:
    """The options the command line gives to ``args.method``: the flags that were given.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line, with the generated flags in ``args.solve_flags``.

    Returns
    -------
    dict
        Field name -> value of every generated flag that was given.

    Raises
    ------
    SchedkitError
        ``method 'heft' does not take --gap`` for a flag the method has no field for
        (``--verbose`` is ignored by methods that do not stream a log).

    Examples
    --------
    >>> args = argparse.Namespace(method="heft", solve_flags=solve_flags(), gap=None,
    ...                           insertion=False, verbose=True)
    >>> solve_options(args)
    {'insertion': False}
    >>> args.gap = 0.1
    >>> solve_options(args)
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: method 'heft' does not take --gap
    """
    from schedkit.methods import METHODS

    try:
        fields = METHODS.get(args.method).Options.model_fields
    except SchedkitError as exc:
        raise OptionError("method", str(exc)) from None
    options = {}
    for flag in args.solve_flags:
        value = getattr(args, flag.name, None)
        if value is None:
            continue
        if flag.name not in fields:
            if flag.name in LENIENT:
                continue
            raise SchedkitError(f"method '{args.method}' does not take {flag.long}")
        options[flag.name] = None if value is NO_LIMIT else value
    return options


def run_solve(args: argparse.Namespace) -> int:
    """Handle ``schedkit solve``: solve, print the summary, maybe the schedule, maybe write it.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        0, or 4 when the method found no schedule (interrupted: written, then re-raised).

    Examples
    --------
    >>> from schedkit.cli.main import main
    >>> main(["solve", "examples/tiny.yaml", "-m", "heft"])
    heft on tiny: status=heuristic makespan=4.51625 bound=3.482608696 gap=22.89% time=...
    0
    """
    from schedkit.cli.progress import solve_keeping
    from schedkit.methods import METHODS
    from schedkit.report import format_schedule
    from schedkit.validate import ignored_data

    began = time.perf_counter()          # (a time limit counts the loading too)
    problem = load_problem(args.problem)
    options = solve_options(args)        # first: it names a bad --method as such
    method = METHODS.get(args.method)(**options)
    limit = method.options.time_limit
    if limit is not None:
        left = max(limit - (time.perf_counter() - began), MIN_SECONDS_LEFT)
        method = METHODS.get(args.method)(**{**options, "time_limit": left})
    say(*(f"schedkit: note: {note}" for note in ignored_data(problem, method.blocks(problem))), err=True)
    schedule, stopped = solve_keeping(method, problem, args.method, quiet=getattr(args, "quiet", False))
    say(schedule.summary())
    if schedule.message:
        say(f"schedkit: note: {schedule.message}", err=True)
    if args.show:
        say(*format_schedule(schedule).splitlines())
    if args.output:
        schedule.write(args.output)
    if getattr(args, "plot", None) or getattr(args, "report", None):
        from schedkit.cli.pictures import write_pictures

        # The method validated the schedule against its blocks before returning it.
        formulation = getattr(method.options, "formulation", None)
        write_pictures(problem, schedule, plot=args.plot, report=args.report,
                       formulation=formulation if isinstance(formulation, str) else None,
                       violations=[])
    if stopped is not None:
        raise stopped  # (the command line says it and exits 128 + signal)
    return 0 if schedule.tasks else EXIT_NO_SCHEDULE

