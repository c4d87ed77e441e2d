"""Exceptions schedkit raises for bad input and failed solves.

Every error a user can trigger is a :class:`SchedkitError`; the CLI prints its
one-line message and exits with a non-zero code, without a traceback.
"""

import re
import reprlib


class SchedkitError(Exception):
    """Base class of every error schedkit reports to a user."""


class ProblemError(SchedkitError, ValueError):
    """A problem file or problem object is malformed or inconsistent."""


class NoScheduleError(ProblemError):
    """A method found no schedule of a valid problem (the command line exits with status 4).

    Raised when a method stops without a schedule: a heuristic that finds no placement
    (its message says whether that is a proof), or a part of a decomposition that cannot be
    placed. An exact solver's proof of infeasibility is a result with status ``infeasible``
    instead; both exit with the same status.
    """


class FormulationError(SchedkitError):
    """A formulation names an unknown block or misses a block it depends on.

    Not a ``ValueError``: pydantic would wrap it into a ``ValidationError`` when it is
    raised while a :class:`~schedkit.milp.formulation.Formulation` is constructed.
    """


class OptionError(SchedkitError):
    """A method option has a bad value; ``option`` names it (the command line shows ``--option``).

    Parameters
    ----------
    option : str
        The option's field name (``time_limit``).
    message : str
        The one-line message.
    """

    def __init__(self, option: str, message: str):
        self.option = option
        super().__init__(message)


class SolverError(SchedkitError, RuntimeError):
    """A solver is unknown, not installed, or failed."""


class ScheduleError(SchedkitError, ValueError):
    """A schedule file is malformed or does not fit its problem."""


class InvalidScheduleError(ScheduleError):
    """A schedule violates its problem's constraints.

    Parameters
    ----------
    violations : list of str
        One message per violated constraint.
    """

    def __init__(self, violations, context="schedule"):
        self.violations = list(violations)
        shown = "; ".join(self.violations[:3])
        more = f" (+{len(self.violations) - 3} more)" if len(self.violations) > 3 else ""
        super().__init__(f"{context} is invalid: {shown}{more}")


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM under the command line), with its best answer so far.

    A ``KeyboardInterrupt``, never a :class:`SchedkitError`: a caller's interrupt propagates
    as Python's does. :meth:`schedkit.methods.Method.result` raises it once the schedule
    is validated; the command line writes that schedule and exits ``128 + signum``.

    Parameters
    ----------
    result : schedkit.schedule.Result or None
        The best validated result so far (termination ``interrupted``; ``None``: none yet).
    signum : int
        The signal that stopped the run.
    problem : schedkit.problem.Problem, optional
        The problem ``result`` is a schedule of.

    Examples
    --------
    >>> import signal
    >>> stop = Interrupted(None, signal.SIGINT)
    >>> isinstance(stop, KeyboardInterrupt), isinstance(stop, SchedkitError), str(stop)
    (True, False, 'interrupted before any schedule was found')
    """

    def __init__(self, result=None, signum: int = 2, problem=None):
        self.result = result
        self.signum = signum
        #: The problem ``result`` answers (a decomposition's part is not the whole problem).
        self.problem = problem
        has = result is not None and result.schedule is not None
        super().__init__("interrupted: the best schedule so far is kept" if has else
                         "interrupted before any schedule was found")


def expect(value, kind, what: str, error: type[SchedkitError] = SchedkitError):
    """``value`` when it is an instance of ``kind``, else a one-line ``error`` naming the type given.

    The public entry points take a :class:`~schedkit.problem.Problem`, a
    :class:`~schedkit.schedule.Schedule` or a path; anything else is a :class:`SchedkitError`
    saying what was expected, never an ``AttributeError`` from deep inside.

    Parameters
    ----------
    value : object
        What the caller gave.
    kind : type or tuple of types
        What it must be.
    what : str
        The expected thing in words (``"a Problem"``).
    error : type
        The :class:`SchedkitError` subclass to raise.

    Examples
    --------
    >>> expect(3, int, "a number")
    3
    >>> expect(None, (int, float), "a problem file's data", ProblemError)
    Traceback (most recent call last):
    ...
    schedkit.errors.ProblemError: expected a problem file's data, not NoneType
    """
    if isinstance(value, kind):
        return value
    raise error(f"expected {what}, not {type(value).__name__}")


#: What a terminal would act on: C0 and C1 controls, DEL, line and paragraph separators and the
#: bidirectional overrides (which reorder what follows them on screen).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: object) -> str:
    """``text`` as one line that a terminal shows as written: control characters escaped.

    Names come from users' files: a newline in a task name must not split a message, and an
    escape sequence must not recolour, retitle or clear the terminal. Every message and
    listing the command line prints goes through it (:func:`schedkit.cli.common.say`).

    Examples
    --------
    >>> print(printable("task 'a\\nb' on gpu\\x1b[2J"))
    task 'a\\nb' on gpu\\x1b[2J
    >>> printable("caf\\u00e9 \\u202egpu")
    'café \\\\u202egpu'
    """
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _bounded_repr(most: int) -> reprlib.Repr:
    bounded = reprlib.Repr()
    bounded.maxlevel = 3
    bounded.maxlist = bounded.maxtuple = bounded.maxset = bounded.maxfrozenset = bounded.maxdict = 8
    bounded.maxstring = bounded.maxother = bounded.maxlong = most
    return bounded


def quoted(value: object, most: int = 60) -> str:
    """``repr(value)`` for a message, its start only when long (a value from a file may be megabytes).

    A container is written a few levels deep and a few items wide (:mod:`reprlib`): a YAML
    file of a few hundred bytes can alias a list into a tree of millions of leaves, which a
    whole ``repr`` would expand.

    Examples
    --------
    >>> quoted("fast")
    "'fast'"
    >>> quoted("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1002 characters)"
    >>> leaf = [1, 2]
    >>> tree = [[[[leaf] * 1000] * 1000] * 1000] * 1000   # 10**12 leaves, never written out
    >>> quoted(tree)
    '[[[[...], [...], [...], [...], [...], [...], [...], [...], .... (4093 characters)'
    """
    if isinstance(value, (str, bytes, bool, float, type(None))):
        return shorten(repr(value), most)
    return shorten(_bounded_repr(most).repr(value), most)


def shorten(text: str, most: int = 60) -> str:
    """``text``, or its first ``most`` characters and its length when longer (names in messages).

    Examples
    --------
    >>> shorten("conv1"), shorten("a" * 100, 5)
    ('conv1', 'aaaaa... (100 characters)')
    """
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"
