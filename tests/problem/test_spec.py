"""schedkit.problem.spec: loading problem files and one-line errors naming the offending item."""

import json

import pytest

from helpers.bad_inputs import CASES
from schedkit import ProblemError, ProblemSpec, load_spec
from schedkit.problem.loading import parse_spec
from schedkit.problem.reading import read_data

TINY = {
    "format": "schedkit/v1", "name": "tiny",
    "devices": [{"name": "gpu", "memory": 16e9}, {"name": "cpu"}],
    "links": [{"src": "gpu", "dst": "cpu", "bandwidth": 10, "latency": 0.5}],
    "tasks": [{"name": "a", "durations": {"gpu": 1, "cpu": 4}, "output_size": 3},
              {"name": "b", "work": 2}],
    "edges": [{"src": "a", "dst": "b"}],
}

TINY_YAML = """\
format: schedkit/v1
name: tiny
devices:
  - {name: gpu, memory: 16e9}
  - {name: cpu}
links:
  - {src: gpu, dst: cpu, bandwidth: 10, latency: 0.5}
tasks:
  - {name: a, durations: {gpu: 1, cpu: 4}, output_size: 3}
  - {name: b, work: 2}
edges:
  - {src: a, dst: b}
"""


def test_load_json(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    spec = load_spec(path)
    assert isinstance(spec, ProblemSpec)
    assert [t.name for t in spec.tasks] == ["a", "b"]
    assert spec.devices[0].memory == 16e9
    assert spec.devices[1].memory is None
    assert spec.links[0].bandwidth == 10.0 and spec.links[0].latency == 0.5


def test_load_yaml_reads_16e9_strings_as_numbers(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_YAML)
    # YAML 1.1 reads 16e9 as a string: the loader must still give the number.
    assert read_data(path)["devices"][0]["memory"] == "16e9"
    spec = load_spec(path)
    assert spec.devices[0].memory == 16e9
    assert spec == load_spec_from(TINY, tmp_path)


def load_spec_from(data, folder):
    path = folder / "same.json"
    path.write_text(json.dumps(data))
    return load_spec(path)


def test_yml_suffix_and_examples_load(tmp_path):
    path = tmp_path / "tiny.yml"
    path.write_text(TINY_YAML)
    assert load_spec(path).name == "tiny"
    assert load_spec("examples/tiny.yaml").devices[0].memory == 16e9


def test_edge_size_defaults_to_output_size():
    spec = parse_spec(TINY)
    assert spec.edge_size(spec.edges[0]) == 3.0
    data = dict(TINY, edges=[{"src": "a", "dst": "b", "size": 7}])
    spec = parse_spec(data)
    assert spec.edge_size(spec.edges[0]) == 7.0


def test_work_gives_duration_by_speed():
    data = dict(TINY, devices=[{"name": "gpu", "speed": 4}, {"name": "cpu"}])
    spec = parse_spec(data)
    assert spec.tasks[1].duration_on(spec.devices[0]) == 0.5
    assert spec.tasks[1].duration_on(spec.devices[1]) == 2.0
    assert spec.tasks[0].duration_on(spec.devices[1]) == 4.0


def test_spec_is_frozen():
    spec = parse_spec(TINY)
    with pytest.raises(Exception):
        spec.name = "other"


def _check_one_line(message, words):
    assert "\n" not in message
    assert "Traceback" not in message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


# Cases only the indexed Problem can tell (they need the network, the memory sums or the sum of times).
SPEC_CASES = [c for c in CASES if c[0] not in ("fixed_tasks_overflow_memory", "transfer_time_without_link",
                                               "durations_add_up_to_infinity", "durations_beyond_the_largest_horizon",
                                               "transfer_beyond_the_largest_horizon")]


@pytest.mark.parametrize("case", SPEC_CASES, ids=[c[0] for c in SPEC_CASES])
def test_bad_file_gives_one_line_problem_error(tmp_path, case):
    name, suffix, text, words = case
    path = tmp_path / f"{name}{suffix}"
    path.write_text(text)
    with pytest.raises(ProblemError) as info:
        load_spec(path)
    message = str(info.value)
    _check_one_line(message, words)
    assert str(path) in message  # the file is named


@pytest.mark.parametrize("data, words", [
    ([1, 2], ["expected a mapping"]),
    ({"format": "schedkit/v2", "devices": [], "tasks": []}, ["unsupported format"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t"}]}, ["task 't'", "exactly one of"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": 1, "durations": {"d": 1}}]},
     ["task 't'", "exactly one of"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": 1}],
      "edges": [{"src": "t", "dst": "t"}]}, ["edge t->t", "itself"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": 1}, {"name": "u", "work": 1}],
      "edges": [{"src": "t", "dst": "u"}, {"src": "t", "dst": "u"}]}, ["edge t->u", "duplicate edge"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": float("inf")}]}, ["task 't'", "work"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": True}]}, ["task 't'", "work"]),
    ({"devices": [{"name": "d"}], "tasks": [{"name": "t", "work": 1, "colour": "red"}]}, ["task 't'", "colour"]),
])
def test_bad_data_gives_one_line_problem_error(data, words):
    with pytest.raises(ProblemError) as info:
        parse_spec(data, source="mine")
    message = str(info.value)
    assert message.startswith("mine: ")
    _check_one_line(message, words)


def test_missing_file(tmp_path):
    with pytest.raises(ProblemError, match="no such file"):
        load_spec(tmp_path / "absent.json")
