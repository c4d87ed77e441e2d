"""The ``schedkit`` command line.

Every error a user can cause prints one line, ``schedkit: error: ...``, and exits
with status 1 (2 for a malformed command line), without a traceback and without
writing any output file. Ctrl-C exits with 130 and SIGTERM with 143 (``128 + signal``),
after ``solve`` has written the best schedule so far.

The commands live in their own modules and are generated from the registries where
there is one: ``solve`` has a flag per option field of every registered method
(:mod:`schedkit.cli.solve`, its flags made by :mod:`schedkit.cli.flags`), ``convert`` a
kind per registered importer (:mod:`schedkit.cli.files`). ``--plugin FILE_OR_MODULE`` (or the
environment variable ``SCHEDKIT_PLUGINS``) imports a user's blocks, methods and families
first (:mod:`schedkit.plugins`), so that they are part of every command.

Examples
--------
>>> main(["formulations"])
fdjssp ...
jssp ...
latency ...
0
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from schedkit import interrupt, plugins
from schedkit.cli.common import EXIT_CODES, EXIT_ERROR, EXIT_NO_SCHEDULE, check_outputs, say
from schedkit.cli.costs import add_costs_commands
from schedkit.cli.files import add_convert_command, add_file_commands
from schedkit.cli.decompose import add_decompose_command
from schedkit.cli.execute import add_execute_command
from schedkit.cli.generate import add_generate_command
from schedkit.cli.listings import add_listing_commands
from schedkit.cli.pictures import add_picture_commands
from schedkit.cli.solve import add_solve_command
from schedkit.cli.torch_export import add_torch_export_command
from schedkit.errors import Interrupted, NoScheduleError, OptionError, SchedkitError

__all__ = ["build_parser", "main", "split_plugins"]


class OneLineParser(argparse.ArgumentParser):
    """A parser whose command-line errors are one line, like every other error of the
    command line (argparse prints the whole usage first), with status 2.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     try:
    ...         OneLineParser(prog="schedkit solve").parse_args(["--nope"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> print(err.getvalue(), end="")
    schedkit solve: error: unrecognized arguments: --nope (schedkit solve --help lists the options)
    """

    def error(self, message: str):
        say(f"{self.prog}: error: {message} ({self.prog} --help lists the options)", err=True)
        self.exit(2)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; each sub-parser's ``handler`` default runs it.

    With ``argv``, only what that command line needs is generated: the ``solve`` flags
    (every method's options) only for ``solve``, their help texts only with ``--help``.
    Without, everything.

    Raises
    ------
    SchedkitError
        When a plug-in fails to load, or a method option clashes with a ``solve`` flag.

    Examples
    --------
    >>> args = build_parser().parse_args(["solve", "p.yaml", "--time-limit", "5", "-f", "jssp"])
    >>> args.time_limit, args.formulation, args.handler.__name__
    (5.0, 'jssp', 'run_solve')
    """
    from schedkit import __version__

    parser = OneLineParser(
        prog="schedkit",
        description="Map and schedule task graphs on heterogeneous devices as mixed-integer programs.",
        epilog="exit status: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()))
    parser.add_argument("--version", action="version", version=f"schedkit {__version__}")
    parser.add_argument("--plugin", action="append", metavar="FILE_OR_MODULE",
                        help="import a Python file (my_block.py) or module (mypkg.blocks) whose "
                             "blocks, methods or families register themselves; before or after the "
                             "command, repeatable; SCHEDKIT_PLUGINS (os.pathsep-separated) does the same")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    words = [] if argv is None else [a for a in argv if not a.startswith("-")]
    solving = argv is None or not words or words[0] == "solve"
    helping = argv is None or "-h" in argv or "--help" in argv
    add_solve_command(sub, flags=solving, helps=helping)
    add_file_commands(sub)
    add_listing_commands(sub)
    add_convert_command(sub)
    add_generate_command(sub)
    add_picture_commands(sub)
    add_decompose_command(sub, flags=argv is None or words[:1] == ["decompose"], helps=helping)
    add_costs_commands(sub)
    add_execute_command(sub)
    add_torch_export_command(sub)
    return parser


def _error(message: str, status: int = EXIT_ERROR) -> int:
    say(f"schedkit: error: {message}", err=True)
    return status


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        0 on success, 1 on a user error, 3 when ``validate`` finds violations, 4 when ``solve``
        finds no schedule (proven infeasible, or a method that found none), 130 when
        interrupted (Ctrl-C), 143 when terminated (SIGTERM); a malformed command line exits
        with status 2 (argparse). Interrupted or terminated, ``solve`` first writes the best
        schedule found so far (status ``feasible`` or ``heuristic``), and no command leaves
        a partial file.

    Examples
    --------
    >>> main(["solve", "examples/tiny.yaml", "-m", "heft"])
    heft on tiny: status=heuristic makespan=4.51625 bound=3.482608696 gap=22.89% time=...
    0
    """
    status = _main(argv)
    race = sys.modules.get("schedkit.milp.race")
    if argv is None and race is not None and race.left_running():
        # A HiGHS run given up on at its time limit still runs in a thread, which would abort
        # the interpreter's shutdown: everything is written, so leave now (the kept process
        # pools first, which the exit handlers would have stopped).
        pools = sys.modules.get("schedkit.reductions.executor")
        if pools is not None:
            pools.discard_pools()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (ValueError, OSError):  # (closed: a reader that left)
                pass
        os._exit(status)
    return status


def split_plugins(argv: list[str]) -> tuple[list[str], list[str]]:
    """The ``--plugin`` values of a command line, wherever they stand, and the other arguments.

    ``--plugin`` is read before the parser is made: the plug-ins' methods get their ``solve``
    flags, and their blocks and formulations are listed. Arguments after ``--`` are left alone,
    and a ``--plugin`` without a value is left for argparse to refuse.

    Examples
    --------
    >>> split_plugins(["--plugin", "a.py", "solve", "p.yaml", "--plugin=mypkg.blocks", "-m", "heft"])
    (['a.py', 'mypkg.blocks'], ['solve', 'p.yaml', '-m', 'heft'])
    """
    found, rest = [], []
    words = iter(argv)
    for word in words:
        if word == "--":
            rest += [word, *words]
            break
        if word.startswith("--plugin="):
            found.append(word.partition("=")[2])
        elif word == "--plugin":
            value = next(words, None)
            if value is None:
                rest.append(word)
            else:
                found.append(value)
        else:
            rest.append(word)
    return found, rest


def _main(argv: list[str] | None) -> int:
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        specs, argv = split_plugins(argv)
        if "--plugin" in argv[:argv.index("--") if "--" in argv else None]:
            build_parser([]).error("argument --plugin: expected one argument")
        # Into the environment too (files as absolute paths): worker processes load them.
        plugins.load_environment()
        plugins.load_plugins(specs)
        parser = build_parser(argv)
    except SchedkitError as exc:
        return _error(str(exc))
    args = parser.parse_args(argv)
    try:
        with interrupt.handled():  # (SIGTERM too raises, so that no half-written file stays)
            check_outputs(args)
            return args.handler(args)
    except OptionError as exc:
        flag = "--" + exc.option.replace("_", "-")
        value = getattr(args, exc.option, None)
        return _error(f"{flag}{f' {value}' if value is not None else ''}: {exc}")
    except NoScheduleError as exc:  # a method found none: the status of 'infeasible' (documented)
        return _error(str(exc), EXIT_NO_SCHEDULE)
    except SchedkitError as exc:
        return _error(str(exc))
    except BrokenPipeError:  # e.g. 'schedkit describe | head': the reader left, nothing to report
        sys.stderr.close()
        return 0
    except OSError as exc:
        target = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return _error(f"{target}{exc.strerror or exc}")
    except KeyboardInterrupt as stop:
        print(f"schedkit: {stop if isinstance(stop, Interrupted) else 'interrupted'}", file=sys.stderr)
        return interrupt.exit_status(getattr(stop, "signum", None) or interrupt.take())
    except MemoryError:
        # Size estimates read the machine's free memory, not a process limit (ulimit -v, a
        # container's cap), and are averages: whatever runs out past them is one line, not a
        # traceback (writers have removed their partial files). Said after this block: until it
        # ends, the traceback's frames hold what filled the memory, and printing would fail too.
        pass
    gc.collect()
    return _error(f"{args.command}: ran out of memory (the input is too large for the memory this "
                  f"process may use)")


if __name__ == "__main__":
    sys.exit(main())
