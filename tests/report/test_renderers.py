"""Report: the text renderer (``schedkit solve --show``) and the ``RENDERERS`` registry."""

import pytest

from schedkit import Problem, SchedkitError, Schedule, TaskRun
from schedkit.report import RENDERERS, format_schedule, list_renderers, register_renderer, render
from schedkit.report.text import render_text

TINY = "examples/tiny.yaml"


@pytest.fixture(scope="module")
def tiny():
    problem = Problem.load(TINY)
    from schedkit import solve

    return problem, solve(problem, "heft")


def test_format_schedule_on_tiny(tiny):
    _, schedule = tiny
    assert format_schedule(schedule) == (
        "cpu:\n"
        "     4.21625 - 4.51625    sample\n"
        "gpu0:\n"
        "           0 - 0.4        embed\n"
        "         0.4 - 1.9        mlp\n"
        "         1.9 - 3.1        attn\n"
        "         3.1 - 3.3        norm\n"
        "         3.3 - 4.2        logits")


def test_format_schedule_sorts_devices_by_name_and_tasks_by_start():
    rows = [TaskRun(task="b", device="z", start=2, end=3), TaskRun(task="a", device="z", start=0, end=1),
            TaskRun(task="c", device="a", start=0, end=1.5)]
    schedule = Schedule(problem="p", method="hand", status="heuristic", makespan=3, tasks=rows)
    assert format_schedule(schedule).splitlines() == [
        "a:", "           0 - 1.5        c", "z:", "           0 - 1          a",
        "           2 - 3          b"]
    assert format_schedule(Schedule(problem="p", method="hand", status="no_solution", tasks=[])) == ""


def test_renderers_lookup(tiny):
    problem, schedule = tiny
    assert RENDERERS.get("text") is render_text
    assert "text" in RENDERERS.names()
    assert dict(list_renderers())["text"] == "The schedule as text, one line per task, grouped by device."
    assert render("text", problem, schedule) == format_schedule(schedule) + "\n"
    with pytest.raises(SchedkitError, match=r"unknown renderer 'gantt-someday' \(known: .*text"):
        RENDERERS.get("gantt-someday")


def test_register_renderer(tiny):
    problem, schedule = tiny

    @register_renderer("count")
    def count(problem, schedule, *, prefix=""):
        """The number of task runs."""
        return f"{prefix}{len(schedule.tasks)}"

    try:
        assert render("count", problem, schedule, prefix="n=") == "n=6"
        with pytest.raises(SchedkitError, match="renderer 'text' is already registered"):
            register_renderer("text")(count)
        with pytest.raises(TypeError, match="not callable"):
            register_renderer("not-callable")("text")
    finally:
        RENDERERS.unregister("count")
    assert "count" not in RENDERERS.names()
