"""Cutting a device's tasks into segments: the three rules, and orders that cannot run."""

import pytest

from schedkit.errors import ScheduleError
from schedkit.execute.segments import cut


def test_consecutive_tasks_of_one_device_form_one_segment():
    preds = {"a": [], "b": ["a"], "c": ["b"]}
    times = {"a": 0, "b": 1, "c": 2}
    assert cut({"d": ["a", "b", "c"]}, preds, times, {t: v + 1 for t, v in times.items()}) == {"d": [["a", "b", "c"]]}


def test_an_input_from_another_device_that_ends_later_starts_a_segment():
    # c waits for x (on e) until 5: a and b must not wait with it
    preds = {"a": [], "b": ["a"], "x": [], "c": ["b", "x"]}
    start = {"a": 0, "b": 1, "x": 0, "c": 5}
    end = {"a": 1, "b": 2, "x": 5, "c": 6}
    assert cut({"d": ["a", "b", "c"], "e": ["x"]}, preds, start, end) == {"d": [["a", "b"], ["c"]], "e": [["x"]]}


def test_an_input_ready_before_the_segment_starts_does_not_cut():
    preds = {"a": [], "b": ["a"], "x": [], "c": ["b", "x"]}
    start = {"a": 1, "b": 2, "x": 0, "c": 3}
    end = {"a": 2, "b": 3, "x": 1, "c": 4}
    assert cut({"d": ["a", "b", "c"], "e": ["x"]}, preds, start, end)["d"] == [["a", "b", "c"]]


def test_a_consumer_on_another_device_that_starts_before_a_task_ends_cuts_before_that_task():
    # y (on e) reads a at 1; a segment a..b would hand a on only at 2
    preds = {"a": [], "b": ["a"], "y": ["a"]}
    start = {"a": 0, "b": 1, "y": 1}
    end = {"a": 1, "b": 2, "y": 2}
    assert cut({"d": ["a", "b"], "e": ["y"]}, preds, start, end)["d"] == [["a"], ["b"]]


def test_an_input_that_depends_on_the_segment_itself_cuts_even_at_equal_times():
    # zero durations: only the dependency rule sees that c's input b needs a first
    preds = {"a": [], "b": ["a"], "c": ["b"]}
    zero = {"a": 0, "b": 0, "c": 0}
    assert cut({"d": ["a", "c"], "e": ["b"]}, preds, zero, zero)["d"] == [["a"], ["c"]]


def test_an_order_against_the_dependencies_is_refused_naming_the_segments():
    preds = {"a": ["c"], "b": ["a"], "c": []}
    zero = {"a": 0, "b": 0, "c": 0}
    with pytest.raises(ScheduleError, match=r"contradicts the model's dependencies: .*d\[b\.\.c\]"):
        cut({"d": ["b", "c"], "e": ["a"]}, preds, zero, zero)
