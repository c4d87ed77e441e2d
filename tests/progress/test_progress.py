"""Progress lines: drawn on a terminal only, erased when done, silent when piped or --quiet."""

import io
import time

from schedkit.cli.main import main
from schedkit.progress import Progress, Ticker, silenced, terminal


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_terminal_detection():
    assert terminal(Tty()) is True
    assert terminal(Tty(), quiet=True) is False
    assert terminal(io.StringIO()) is False


def test_progress_draws_and_erases_on_a_terminal():
    stream = Tty()
    with Progress(4, "cases", stream=stream) as bar:
        bar.update(note="la01")
        bar.update(2)
    text = stream.getvalue()
    assert "\rcases [=====................ ] 1/4 la01" in text
    assert "\rcases [==========........... ] 2/4" in text
    assert text.endswith("\r" + " " * len("cases [==========........... ] 2/4") + "\r")


def test_progress_is_silent_when_piped():
    stream = io.StringIO()
    with Progress(4, "cases", stream=stream) as bar:
        bar.update()
    assert stream.getvalue() == ""


def test_ticker_shows_time_against_the_limit_then_erases():
    stream = Tty()
    with Ticker("milp", limit=10, stream=stream, delay=0.0, every=0.01):
        time.sleep(0.1)
    text = stream.getvalue()
    assert "\rmilp [" in text and " s of 10 s" in text
    assert text.endswith("\r")
    quick = Tty()
    with Ticker("heft", stream=quick, delay=5.0):
        pass
    assert quick.getvalue() == ""  # a quick call leaves no trace


def test_solve_prints_no_progress_when_piped(capfd):
    assert main(["solve", "examples/tiny.yaml", "--time-limit", "5"]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("auto on tiny:") and "\r" not in out + err


class SlowMethod:
    """Stands in for a method: options with a time limit, a solve that takes a while."""

    class options:
        time_limit = 2.0
        verbose = False

    def solve(self, problem):
        time.sleep(1.3)
        return "schedule"


def test_solve_with_progress_ticks_on_a_terminal_only(monkeypatch):
    from schedkit import progress
    from schedkit.cli import live_progress as cli_progress

    stream = Tty()
    monkeypatch.setattr(progress.sys, "stderr", stream)
    assert cli_progress.solve_with_progress(SlowMethod(), None, "milp") == "schedule"
    assert "\rmilp [" in stream.getvalue() and "s of 2 s" in stream.getvalue()
    quiet = Tty()
    monkeypatch.setattr(progress.sys, "stderr", quiet)
    assert cli_progress.solve_with_progress(SlowMethod(), None, "milp", quiet=True) == "schedule"
    assert quiet.getvalue() == ""


def test_quiet_removes_a_decomposition_bar():
    from schedkit.cli.live_progress import solve_with_progress

    class Parts:
        progress = staticmethod(lambda done, total: None)

        def solve(self, problem):
            return self.progress

    assert solve_with_progress(Parts(), None, "bridge_dp", quiet=True) is None
    assert solve_with_progress(Parts(), None, "bridge_dp") is not None


def test_a_search_shows_its_iterations_and_erases_the_line():
    from schedkit import Problem
    from schedkit.methods import METHODS

    problem = Problem.load("examples/tiny.yaml")
    for name in ("annealing", "evolution"):
        seen = []
        schedule = METHODS.get(name)(iterations=400, progress=lambda d, t: seen.append((d, t))).solve(problem)
        assert schedule.tasks
        assert seen[-1] == (400, 400)                       # the last call closes the line
        assert all(t == 400 for _, t in seen) and len(seen) <= 102
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_no_progress_inside_a_silenced_block():
    from schedkit.progress import silenced, steps

    stream = Tty()
    assert steps("annealing", stream=stream) is not None
    with silenced():
        assert steps("annealing", stream=stream) is None
        assert terminal(stream) is False


def test_the_phase_line_shows_phase_incumbent_bound_and_gap_and_erases_itself():
    from types import SimpleNamespace as Event

    from schedkit.progress import PhaseLine

    stream = Tty()
    line = PhaseLine("auto", limit=10, stream=stream)
    assert line.enabled
    line(Event(phase="incumbent", makespan=None, bound=None, gap=None))
    time.sleep(0.4)
    line(Event(phase="exact", makespan=12.5, bound=10.0, gap=0.2))
    time.sleep(0.6)                                  # rich redraws it four times a second
    line(Event(phase="done", makespan=12.5, bound=10.0, gap=0.2))
    drawn = stream.getvalue()
    assert "auto  incumbent" in drawn and "exact" in drawn and "incumbent 12.5  bound 10  gap 20.00%" in drawn
    assert drawn.endswith("\x1b[2K")                 # erased: the summary starts on a clean line
    off = PhaseLine("auto", stream=io.StringIO())    # not a terminal: nothing at all
    off(Event(phase="exact", makespan=1.0, bound=1.0, gap=0.0))
    assert not off.enabled and off.stream.getvalue() == ""


def test_auto_draws_its_line_only_on_a_terminal_and_not_when_quiet():
    from schedkit.methods import METHODS

    assert METHODS.get("auto")().progress is None    # pytest's stderr is no terminal
    with silenced():
        assert METHODS.get("auto")().progress is None
