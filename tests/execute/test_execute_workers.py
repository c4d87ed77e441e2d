"""Worker threads: tensors handed on, a failing worker stops the others, threads always joined."""

import threading

import pytest

from schedkit.execute.workers import ExecuteError, Part, run_workers


class Add:
    def __init__(self, value):
        self.value = value

    def run(self, outputs, feeds):
        return [sum(feeds.values()) + self.value]


class Broken:
    def run(self, outputs, feeds):
        raise RuntimeError("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : bad shape\nstack")


def _workers_alive():
    return [t for t in threading.enumerate() if t.name.startswith("schedkit-execute-")]


def _in_thread(call):
    """Run ``call`` in a thread; fail instead of hanging when it does not return in 30 s."""
    box = {}

    def body():
        try:
            box["value"] = call()
        except Exception as exc:
            box["error"] = exc
    thread = threading.Thread(target=body)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "run_workers hangs"
    return box


def test_tensors_go_from_worker_to_worker_in_order_and_every_run_is_timed():
    parts = {"cpu0": [Part("cpu0[a]", Add(1), ["x"], ["h"]), Part("cpu0[c]", Add(10), ["h", "g"], ["y"])],
             "cpu1": [Part("cpu1[b]", Add(100), ["h"], ["g"])]}
    timing = run_workers(parts, {"x": 0}, runs=4, warmup=2)
    assert timing.values["y"] == 1 + 1 + 100 + 10
    assert len(timing.latency) == 4 and all(len(v) == 4 for v in timing.busy.values())
    assert all(busy <= latency for busy, latency in zip(timing.busy["cpu0"], timing.latency))
    assert not _workers_alive()


def test_a_failing_worker_stops_the_one_waiting_for_it_with_one_line():
    parts = {"cpu0": [Part("cpu0[a]", Broken(), ["x"], ["h"])],
             "cpu1": [Part("cpu1[b]", Add(1), ["h"], ["y"])]}
    box = _in_thread(lambda: run_workers(parts, {"x": 0}, runs=3, warmup=1))
    assert isinstance(box.get("error"), ExecuteError)
    assert str(box["error"]) == "cpu0[a]: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : bad shape"
    assert not _workers_alive()


def test_a_failure_in_a_later_part_also_stops_every_worker():
    parts = {"cpu0": [Part("cpu0[a]", Add(1), ["x"], ["h"]), Part("cpu0[c]", Broken(), ["g"], ["y"])],
             "cpu1": [Part("cpu1[b]", Add(1), ["h"], ["g"]), Part("cpu1[d]", Add(1), ["y"], ["z"])]}
    box = _in_thread(lambda: run_workers(parts, {"x": 0}, runs=1))
    assert str(box["error"]).startswith("cpu0[c]: ")
    assert not _workers_alive()


def test_a_tensor_nobody_writes_is_refused_before_any_thread_starts():
    with pytest.raises(ExecuteError, match="no part writes tensor 'ghost'"):
        run_workers({"cpu0": [Part("cpu0[a]", Add(1), ["ghost"], ["y"])]}, {"x": 0}, runs=1)
    assert not _workers_alive()
