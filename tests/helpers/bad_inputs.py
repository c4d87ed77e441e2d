"""Bad problem files shared by the spec, problem and CLI tests.

Each case is ``(id, file suffix, file text, words the one-line error must contain)``.
"""

import json


def _base(**changes):
    data = {
        "format": "schedkit/v1", "name": "bad",
        "devices": [{"name": "gpu", "memory": 10}, {"name": "cpu"}],
        "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 2}],
        "tasks": [{"name": "a", "durations": {"gpu": 1, "cpu": 2}},
                  {"name": "b", "durations": {"gpu": 1, "cpu": 2}}],
        "edges": [{"src": "a", "dst": "b", "size": 1}],
    }
    data.update(changes)
    return data


def _task(name="a", **fields):
    task = {"name": name, "durations": {"gpu": 1, "cpu": 2}}
    task.update(fields)
    return task


def _json(data):
    return json.dumps(data)


CASES = [
    ("cycle", ".json", _json(_base(edges=[{"src": "a", "dst": "b"}, {"src": "b", "dst": "a"}])),
     ["cycle", "a -> b"]),
    ("unknown_device_durations", ".json", _json(_base(tasks=[_task(durations={"tpu": 1}), _task("b")])),
     ["task 'a'", "unknown device 'tpu'"]),
    ("unknown_device_pin", ".json", _json(_base(tasks=[_task(pin=["tpu"]), _task("b")])),
     ["task 'a'", "unknown device 'tpu'"]),
    ("unknown_device_link", ".json", _json(_base(links=[{"src": "gpu", "dst": "tpu", "bandwidth": 1}])),
     ["link gpu->tpu", "unknown device 'tpu'"]),
    ("negative_duration", ".json", _json(_base(tasks=[_task(durations={"gpu": -1, "cpu": 2}), _task("b")])),
     ["task 'a'", "negative duration", "gpu"]),
    ("non_numeric_duration", ".json", _json(_base(tasks=[_task(durations={"gpu": "fast", "cpu": 2}), _task("b")])),
     ["task 'a'", "gpu"]),
    ("negative_size", ".json", _json(_base(edges=[{"src": "a", "dst": "b", "size": -3}])),
     ["edge a->b", "size"]),
    ("non_numeric_size", ".json", _json(_base(edges=[{"src": "a", "dst": "b", "size": "big"}])),
     ["edge a->b", "size"]),
    ("negative_task_memory", ".json", _json(_base(tasks=[_task(memory=-1), _task("b")])),
     ["task 'a'", "memory"]),
    ("non_numeric_task_memory", ".json", _json(_base(tasks=[_task(memory="lots"), _task("b")])),
     ["task 'a'", "memory"]),
    ("negative_device_memory", ".json", _json(_base(devices=[{"name": "gpu", "memory": -5}, {"name": "cpu"}])),
     ["device 'gpu'", "memory"]),
    ("dangling_edge", ".json", _json(_base(edges=[{"src": "a", "dst": "ghost"}])),
     ["edge a->ghost", "unknown task 'ghost'"]),
    ("duplicate_task", ".json", _json(_base(tasks=[_task(), _task()], edges=[])),
     ["duplicate task name 'a'"]),
    ("duplicate_device", ".json", _json(_base(devices=[{"name": "gpu"}, {"name": "gpu"}], links=[],
                                              tasks=[{"name": "a", "durations": {"gpu": 1}}], edges=[])),
     ["duplicate device name 'gpu'"]),
    ("malformed_json", ".json", '{"devices": [{"name": "gpu"}], "tasks": [', ["malformed JSON", "line"]),
    ("malformed_yaml", ".yaml", "devices:\n  - {name: gpu\ntasks: [\n", ["malformed YAML"]),
    ("zero_bandwidth", ".json", _json(_base(links=[{"src": "gpu", "dst": "cpu", "bandwidth": 0}])),
     ["link gpu->cpu", "bandwidth"]),
    ("negative_bandwidth", ".yaml",
     "devices: [{name: gpu}, {name: cpu}]\nlinks: [{src: gpu, dst: cpu, bandwidth: -1e9}]\n"
     "tasks: [{name: a, work: 1}]\n", ["link gpu->cpu", "bandwidth"]),
    ("task_fits_no_device_memory", ".json", _json(_base(tasks=[_task(durations={"gpu": 1}, memory=50), _task("b")])),
     ["task 'a'", "memory"]),
    ("task_fits_no_device_pins", ".json", _json(_base(tasks=[_task(durations={"gpu": 1}, pin=["cpu"]), _task("b")])),
     ["task 'a'", "no device can run it"]),
    ("fixed_tasks_overflow_memory", ".json",
     _json(_base(tasks=[_task(pin=["gpu"], memory=6), _task("b", pin=["gpu"], memory=6)])),
     ["device gpu", "12", "10"]),
    ("transfer_time_unknown_device", ".json",
     _json(_base(edges=[{"src": "a", "dst": "b", "size": 1, "transfer_times": {"gpu->tpu": 2}}])),
     ["edge a->b", "'gpu->tpu'", "unknown device 'tpu'"]),
    ("transfer_time_negative", ".json",
     _json(_base(edges=[{"src": "a", "dst": "b", "size": 1, "transfer_times": {"gpu->cpu": -2}}])),
     ["edge a->b", "transfer_times"]),
    ("transfer_time_bad_key", ".json",
     _json(_base(edges=[{"src": "a", "dst": "b", "size": 1, "transfer_times": {"gpu": 2}}])),
     ["edge a->b", "'gpu'", "SRC->DST"]),
    ("transfer_time_without_data", ".json",
     _json(_base(edges=[{"src": "a", "dst": "b", "size": 0, "transfer_times": {"gpu->cpu": 2}}])),
     ["edge a->b", "transfer_times", "positive size"]),
    ("transfer_time_without_link", ".json",
     _json(_base(links=[{"src": "gpu", "dst": "cpu", "bandwidth": 2, "bidirectional": False}],
                 edges=[{"src": "a", "dst": "b", "size": 1, "transfer_times": {"cpu->gpu": 2}}])),
     ["edge a->b", "'cpu->gpu'", "no link path"]),
    ("deep_json", ".json", "[" * 100_000 + "]" * 100_000, ["malformed JSON", "nested too deeply"]),
    ("deep_json_in_a_task", ".json",
     _json(_base()).replace('"durations": {"gpu": 1', '"durations": {"gpu": ' + "[" * 50_000 + "1" + "]" * 50_000),
     ["malformed JSON", "nested too deeply"]),
    ("deep_yaml_flow", ".yaml", "[" * 100_000 + "]" * 100_000, ["malformed YAML", "nested too deeply"]),
    ("deep_yaml_block", ".yaml", "".join("  " * k + "a:\n" for k in range(5_000)),
     ["malformed YAML", "nested too deeply"]),
    ("integer_beyond_float", ".json", _json(_base(tasks=[_task(durations={"gpu": 10**400, "cpu": 2}), _task("b")])),
     ["task 'a'", "durations.gpu", "not a finite number: an integer of 401 digits"]),
    ("integer_beyond_float_yaml", ".yaml",
     "devices: [{name: gpu, memory: %d}]\ntasks: [{name: a, work: 1}]\n" % -10**400,
     ["device 'gpu' memory", "an integer of 401 digits"]),
    # a value pasted by mistake is quoted by its start, not in full
    ("value_a_megabyte_long", ".json", _json(_base(tasks=[_task(durations={"gpu": "x" * 10**6, "cpu": 2}), _task("b")])),
     ["task 'a'", "durations.gpu", "not a number: 'xxxxx", "... (1000002 characters)"]),
    ("format_a_megabyte_long", ".json", _json(_base(format="y" * 10**6)), ["unsupported format 'yyy", "(1000002 characters)"]),
    # each number finite, their sum not: no schedule of them could be written
    ("durations_add_up_to_infinity", ".json",
     _json(_base(tasks=[_task(durations={"gpu": 1e308, "cpu": 1e308}), _task("b", durations={"gpu": 1e308})])),
     ["task 'a' lasts at least 1e+308", "add up to inf", "at most 1e+300"]),
    ("durations_beyond_the_largest_horizon", ".json", _json(_base(tasks=[_task(durations={"gpu": 3e302, "cpu": 2e302}), _task("b")])),
     ["task 'a' lasts at least 2e+302", "at most 1e+300"]),
    ("transfer_beyond_the_largest_horizon", ".json",
     _json(_base(links=[{"src": "gpu", "dst": "cpu", "bandwidth": 1e-301}], edges=[{"src": "a", "dst": "b", "size": 1}])),
     ["edge a->b takes up to 1e+301", "at most 1e+300"]),
]

#: Files no reader may fail on with a traceback: ``(id, suffix, bytes, words of the one-line error)``.
#: Readers take the suffix they expect; the bytes are not text, or nest too deeply to read.
UNREADABLE = [
    ("png", ".json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", ["not a text file", "0x89"]),
    ("latin1", ".json", '{"name": "caf\xe9"}'.encode("latin-1"), ["not a text file", "0xe9"]),
    ("utf16", ".yaml", "devices: []\n".encode("utf-16"), ["not a text file", "0xff"]),
    ("zeros_then_ff", ".txt", b"\x00" * 64 + b"\xff", ["not a text file", "offset 64"]),
    ("deep_json", ".json", b"[" * 100_000 + b"]" * 100_000, ["nested too deeply"]),
    ("deep_yaml", ".yaml", b"{a: " * 20_000 + b"1" + b"}" * 20_000, ["nested too deeply"]),
]
