"""Parts: independent jobs as plain data, and the one function that solves one in any process.

A :class:`Part` is what a decomposition ships to an executor: a problem spec as a
``dict``, the name of a registered method and its options as a ``dict``. Nothing else
travels: no :class:`~schedkit.problem.Problem`, no built model, no solver object, so a
part pickles for a process pool, serialises for a Dask cluster and round-trips through
JSON. :func:`solve_part` is a module-level function of such data: a worker imports
schedkit, rebuilds the problem, runs the method (its schedule is validated there) and
sends back the :class:`~schedkit.schedule.Result` as plain data.

A part's method options may come as text from the command line (:func:`parse_options_text`).

A part runs on one core: methods that take a ``threads`` option get ``threads=1`` unless
the options say otherwise, so a pool of *k* processes asks for *k* cores (the ``milp``
method would otherwise start a second thread for its bound search). For the same reason
a decomposition used as a part's method (``fusion`` with ``inner="bridge_dp"``) runs its
own parts serially, in the worker, unless its options name an ``executor``.

A part of a run with a time limit carries a wall-clock ``deadline`` and the number of
``waves`` of parts still to run up to it, its own included (:mod:`~schedkit.reductions.budget`):
when it starts, :func:`solve_part` gives the method its share of the time left, within
the method's own ``time_limit`` (:func:`time_limit`). A part that waited in a queue
does not run past the deadline, what the parts before it did not use passes on to it, and
a part that starts too late to do anything is not started (its result says so, without
a schedule).

Examples
--------
>>> from schedkit import Problem
>>> from schedkit.schedule import Result
>>> part = Part.of(Problem.load("examples/tiny.yaml"), "milp", {"time_limit": 30})
>>> part.name, part.method, part.options
('tiny', 'milp', {'time_limit': 30, 'threads': 1})
>>> answer = solve_part(part.payload())       # plain data in, plain data out
>>> result = Result.model_validate(answer)
>>> result.status, round(result.objective, 3)
('optimal', 4.516)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import yaml

from schedkit.errors import SchedkitError
from schedkit.methods import METHODS
from schedkit.problem import Problem, ProblemSpec, parse_spec
from schedkit.progress import silenced
from schedkit.schedule import Result, Termination

#: A part that would get fewer seconds than this is not started.
LEAST_SECONDS = 0.05
#: A part gets at least this many seconds while the time left allows, even when its share
#: is less: with more parts than the time allows (``bridge_dp`` on DenseNet-121: 600), the
#: first ones are solved and the rest finished by a heuristic, rather than none solved.
FLOOR_SECONDS = 0.25
#: The message of a part that was not started.
NOT_STARTED = "not started: the time limit ran out"


class PartError(SchedkitError):
    """A part could not be solved: the message names the part and the method.

    Only the message travels (it pickles as one argument), whatever error the worker met.
    """


def part_options(method: str, options: dict | None = None) -> dict:
    """The options a part passes to ``method``: ``options`` plus ``threads=1`` when the
    method takes a ``threads`` option, and ``executor="serial"`` when it takes an
    ``executor`` option (a decomposition), that ``options`` do not set.

    Examples
    --------
    >>> part_options("milp", {"time_limit": 5})
    {'time_limit': 5, 'threads': 1}
    >>> part_options("milp", {"threads": 4})
    {'threads': 4}
    >>> part_options("heft", {"threads": 2})
    {'threads': 2}
    """
    options = dict(options or {})
    fields = METHODS.get(method).Options.model_fields
    for key, value in (("threads", 1), ("executor", "serial")):
        if key not in options and key in fields:
            options[key] = value
    return options


@dataclass(frozen=True)
class Part:
    """One independent job: a problem spec, a method name and its options, as plain data.

    Parameters
    ----------
    data : dict or None
        The sub-problem in the ``schedkit/v1`` layout (see :meth:`of` to make it from a
        :class:`~schedkit.problem.Problem`; ``None`` with ``local``: :attr:`problem` dumps
        it when read).
    method : str
        A name registered in :data:`~schedkit.methods.METHODS`.
    options : dict
        The method's options (JSON data: a formulation travels as its data, for instance
        ``{"formulation": {"blocks": [...]}}``); ``threads=1`` is added for methods that
        take it (see :func:`part_options`).
    deadline : float, optional
        A wall-clock time (``time.time()``) by which the part must end.
    waves : int
        The waves of parts that still run before the deadline, this part's included: it
        gets that share of the time left when it starts.
    local : Problem, optional
        The :class:`~schedkit.problem.Problem` that ``problem`` was made from
        (:meth:`of`), for runs in this process: :func:`run_parts` solves it as it is
        instead of parsing ``problem`` again. It never travels (:meth:`payload`) and
        parts are equal whether they have it or not.
    """

    data: dict | None
    method: str = "milp"
    options: dict = field(default_factory=dict)
    deadline: float | None = None
    waves: int = 1
    local: Problem | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if not (isinstance(self.data, dict) or (self.data is None and self.local is not None)):
            raise SchedkitError(f"a part's problem is a dict of schedkit/v1 data, not "
                                f"{type(self.data).__name__} (use Part.of(problem, ...))")
        object.__setattr__(self, "options", part_options(self.method, self.options))
        # (a problem dumped from a Problem is JSON data already: only the options are checked)
        try:
            json.dumps(self.options if self.local is not None else [self.data, self.options], allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise SchedkitError(f"part '{self.name}': its options for method '{self.method}' must be "
                                f"plain data (a formulation as its data): {exc}") from None

    @property
    def problem(self) -> dict:
        """The sub-problem in the ``schedkit/v1`` layout; a part made from a
        :class:`~schedkit.problem.Problem` dumps it when first read (a part solved in this
        process never is: dumping 3 million edges took a third of fusion's time limit)."""
        if self.data is None:
            object.__setattr__(self, "data", _dumped(self.local.spec))
        return self.data

    def __eq__(self, other) -> bool:
        # (equal whether the problem came as data or as a Problem, as before it was lazy)
        if not isinstance(other, Part):
            return NotImplemented
        return (self.method, self.options, self.deadline, self.waves, self.problem) == \
            (other.method, other.options, other.deadline, other.waves, other.problem)

    @classmethod
    def of(cls, problem: Problem | ProblemSpec | dict, method: str = "milp",
           options: dict | None = None) -> Part:
        """The part that solves ``problem`` with ``method`` and ``options`` (a
        :class:`~schedkit.problem.Problem` is kept as the part's ``local`` problem)."""
        if isinstance(problem, Problem):  # (dumped when read: see problem)
            return cls(None, method=method, options=dict(options or {}), local=problem)
        if isinstance(problem, ProblemSpec):
            problem = _dumped(problem)
        return cls(problem, method=method, options=dict(options or {}))

    @property
    def name(self) -> str:
        """The name of the part's problem."""
        if self.data is None:
            return str(self.local.name)
        return str(self.data.get("name", "?"))

    def payload(self, here: bool = False) -> dict:
        """The data :func:`solve_part` takes: ``{"problem", "method", "options"}``, and
        ``deadline`` and ``waves`` when the part has a deadline; ``here``: for
        :func:`solve_here` with the part's :attr:`local` problem, whose data is then only
        its name (nothing is dumped)."""
        problem = {"name": self.name} if here and self.local is not None else self.problem
        payload = {"problem": problem, "method": self.method, "options": dict(self.options)}
        if self.deadline is not None:
            payload.update(deadline=self.deadline, waves=self.waves)
        return payload

    def timed(self, deadline: float | None, waves: int = 1) -> Part:
        """The same part with a wall-clock ``deadline``, ``waves`` of parts up to it."""
        return Part(self.data, self.method, self.options, deadline, waves, self.local)

    def late(self, why: str = NOT_STARTED) -> Result:
        """The result of the part when it ran out of time before it had anything."""
        return Result.nothing(self.method, self.name, Termination.TIME_LIMIT, message=why)


def time_limit(payload: dict) -> float | None:
    """The time limit a part's method gets now (``None``: no limit; ``0``: none left).

    Its own ``time_limit``, within its share of the time to the part's ``deadline``: the
    time left divided by the ``waves`` of parts still to run, its own included, and at
    least :data:`FLOOR_SECONDS` while the time left allows.

    Examples
    --------
    >>> in_10_s = time.time() + 10
    >>> round(time_limit({"options": {"time_limit": 60}, "deadline": in_10_s, "waves": 4}))
    2
    >>> time_limit({"options": {"time_limit": 1}, "deadline": in_10_s, "waves": 4})
    1.0
    >>> round(time_limit({"options": {}, "deadline": in_10_s, "waves": 400}), 2)  # the floor
    0.25
    >>> time_limit({"options": {}, "deadline": time.time() - 1})
    0.0
    >>> time_limit({"options": {}}) is None
    True
    """
    own = payload.get("options", {}).get("time_limit")
    if payload.get("deadline") is None:
        return None if own is None else float(own)
    left = max(0.0, payload["deadline"] - time.time())
    share = max(left / max(1, payload.get("waves", 1)), min(FLOOR_SECONDS, left))
    return share if own is None else min(float(own), share)


def solve_part(payload: dict) -> dict:
    """Solve one part given as plain data; return its result as plain data.

    Module-level and free of state, so that any executor can ship it to a worker
    process. The method's schedule is validated in the worker (by
    :meth:`~schedkit.methods.Method.result`); the answer is
    ``result.model_dump(mode="json", by_alias=True)``, which
    ``Result.model_validate`` turns back into the same result (transfers keep their
    ``from`` key).

    Parameters
    ----------
    payload : dict
        ``{"problem": spec data, "method": name, "options": dict}``, and the part's
        ``deadline`` and ``waves`` when it has a deadline (:func:`time_limit`), as made by
        :meth:`Part.payload`.

    Raises
    ------
    PartError
        When the spec is invalid or the method fails with a schedkit error; the message
        names the part and the method (other exceptions propagate unchanged).
    """
    return solve_here(payload).model_dump(mode="json", by_alias=True)


def solve_here(payload: dict, problem: Problem | None = None, checked: bool = True) -> Result:
    """:func:`solve_part` in this process: the :class:`~schedkit.schedule.Result` itself,
    and ``problem`` (the part's own, :attr:`Part.local`) solved as it is when given,
    instead of a copy parsed from ``payload["problem"]`` (on 10,000 tasks, parsing takes
    longer than a heuristic's schedule).

    ``checked=False``: the method's :meth:`~schedkit.methods.Method.run`, its schedule not
    validated here, for a caller that validates it on this very problem itself (a
    decomposition whose one part is its own input: ``fusion`` when nothing fuses).

    Examples
    --------
    >>> from schedkit import Problem
    >>> p = Problem.load("examples/tiny.yaml")
    >>> solve_here(Part.of(p, "heft").payload(), p).status
    'heuristic'
    """
    data = payload["problem"]
    method = payload["method"]
    label = f"part '{data.get('name', '?') if isinstance(data, dict) else '?'}' ({method})"
    if method not in METHODS:
        raise PartError(f"{label}: method '{method}' is not registered in this process (a method "
                        f"registered at run time is known only to the process that registered it: "
                        f"use executor 'serial', or register it in an importable module)")
    options = dict(payload.get("options", {}))
    limit = time_limit(payload)
    if limit is not None and "time_limit" in METHODS.get(method).Options.model_fields:
        if limit < LEAST_SECONDS:
            return Result.nothing(method, str(data.get("name", "?")), Termination.TIME_LIMIT, message=NOT_STARTED)
        options["time_limit"] = limit
    try:
        with silenced():  # the decomposition shows its own progress
            if problem is None:
                problem = Problem(parse_spec(data))
            solver = METHODS.get(method)(**options)
            return solver.result(problem) if checked else solver.run(problem)
    except SchedkitError as exc:
        raise PartError(f"{label}: {exc}") from None


def _dumped(spec: ProblemSpec) -> dict:
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


def part_result(answer: dict) -> Result:
    """The :class:`~schedkit.schedule.Result` of an answer of :func:`solve_part`."""
    return Result.model_validate(answer)


def parse_options_text(text: str) -> dict:
    """Options from the command line: a JSON object, or ``key=value`` pairs separated by
    commas whose values are read as YAML scalars.

    Examples
    --------
    >>> parse_options_text('{"time_limit": 5}')
    {'time_limit': 5}
    >>> parse_options_text("time_limit=5, formulation=jssp, verbose=true")
    {'time_limit': 5, 'formulation': 'jssp', 'verbose': True}
    >>> parse_options_text("5")
    Traceback (most recent call last):
    ...
    ValueError: expected a JSON object or key=value pairs, got '5'
    """
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"malformed JSON at column {exc.colno}: {exc.msg}") from None
        if isinstance(value, dict):
            return value
    options = {}
    for item in text.split(","):
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"expected a JSON object or key=value pairs, got {text!r}")
        try:
            options[key.strip()] = yaml.safe_load(value.strip()) if value.strip() else ""
        except yaml.YAMLError:
            options[key.strip()] = value.strip()
    return options
