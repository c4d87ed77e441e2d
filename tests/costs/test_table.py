"""The cost table file (schedkit-costs/v1): round trip, and every bad input as one line."""

import json

import pytest

from schedkit.costs import CostTable, NodeCost, read_cost_table
from schedkit.errors import ProblemError, SchedkitError


def table(**changes):
    data = {"format": "schedkit-costs/v1", "unit": "ms", "source": "onnxruntime",
            "device": {"type": "cpu", "host": "box", "provider": "CPUExecutionProvider", "threads": 2},
            "model": {"name": "light_resnet50", "sha256": "ab" * 32}, "runs": 5,
            "total": {"median": 3.0, "mean": 3.1},
            "nodes": [{"name": "conv", "op_type": "Conv", "median": 2.0, "mean": 2.1, "p95": 2.5,
                       "calls": 1, "output_bytes": 4096, "flops": 1e6, "bytes": 5e4},
                      {"name": "bn", "op_type": "BatchNormalization", "median": 0.0, "mean": 0.0,
                       "p95": 0.0, "calls": 0, "output_bytes": 4096}]}
    data.update(changes)
    return data


def write(tmp_path, data, name="t.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_round_trip_keeps_every_field(tmp_path):
    original = CostTable.model_validate(table())
    out = tmp_path / "out.json"
    original.write(out)
    again = read_cost_table(out)
    assert again == original
    assert isinstance(again.nodes[0], NodeCost)
    assert again.nodes[1].flops is None and "flops" not in json.loads(out.read_text())["nodes"][1]
    assert again.medians() == {"conv": 0.002, "bn": 0.0}


def test_frozen():
    with pytest.raises(Exception):
        CostTable.model_validate(table()).runs = 3


def test_measured_times_carry_the_device_and_op_types():
    measured = CostTable.model_validate(table()).measured("cpu1", "t.json")
    assert measured.times == pytest.approx({"conv": 0.003, "bn": 0.0})   # 1 ms outside the nodes
    assert (measured.device_type, measured.target, measured.source, measured.model) == \
        ("cpu", "cpu1", "t.json", "light_resnet50")
    assert measured.ops == {"conv": "Conv", "bn": "BatchNormalization"}


@pytest.mark.parametrize("change, message", [
    ({"format": "schedkit/v1"}, "unsupported format 'schedkit/v1'"),
    ({"runs": 0}, "runs: Input should be greater than or equal to 1"),
    ({"unit": "min"}, "unit: Input should be 's', 'ms' or 'us'"),
    ({"source": "stopwatch"}, "source: Input should be"),
    ({"nodes": []}, "nodes: List should have at least 1 item"),
    ({"colour": 1}, "unknown key 'colour'"),
    ({"device": {"host": "x"}}, "device.type: Field required"),
])
def test_bad_tables_are_one_line_naming_the_item(tmp_path, change, message):
    path = write(tmp_path, table(**change))
    with pytest.raises(ProblemError) as caught:
        read_cost_table(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_bad_node_is_named(tmp_path):
    data = table()
    data["nodes"][0]["median"] = -1
    with pytest.raises(ProblemError, match=r"node 'conv' median: Input should be greater than or equal to 0"):
        read_cost_table(write(tmp_path, data))
    data = table()
    data["nodes"][1]["name"] = "conv"
    with pytest.raises(ProblemError, match="duplicate node name 'conv'"):
        read_cost_table(write(tmp_path, data))


def test_duplicate_json_keys_missing_and_binary_files(tmp_path):
    with pytest.raises(ProblemError, match="malformed JSON: duplicate key 'runs'"):
        read_cost_table(write(tmp_path, '{"runs": 1, "runs": 2}'))
    with pytest.raises(SchedkitError, match="no such file"):
        read_cost_table(tmp_path / "missing.json")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\x00")
    with pytest.raises(ProblemError, match="not a text file"):
        read_cost_table(binary)


def test_write_is_atomic_on_failure(tmp_path):
    folder = tmp_path / "is_a_folder.json"
    folder.mkdir()
    with pytest.raises(SchedkitError, match="is_a_folder.json: is a folder, not a file|cannot write"):
        CostTable.model_validate(table()).write(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["is_a_folder.json"]


def gap_table(total=None, overhead=None, unit="ms"):
    """Four nodes of 1, 2, 3, 4 (units) that ran and a fused one; the run takes ``total``."""
    nodes = [{"name": f"n{k}", "op_type": "Conv", "median": k, "mean": k, "p95": k} for k in (1, 2, 3, 4)]
    nodes.append({"name": "bn", "op_type": "BatchNormalization", "median": 0, "mean": 0, "p95": 0,
                  "calls": 0})
    data = table(nodes=nodes, unit=unit)
    data["total"] = None if total is None else {"median": total, "mean": total, "overhead": overhead}
    return CostTable.model_validate(data)


def test_the_time_outside_the_nodes_is_shared_by_the_nodes_that_ran():
    measured = gap_table(total=14.0).measured()          # 4 ms outside 10 ms of nodes
    assert measured.overhead == pytest.approx(0.001)
    assert measured.times == pytest.approx({"n1": 0.002, "n2": 0.003, "n3": 0.004, "n4": 0.005, "bn": 0.0})
    assert sum(measured.times.values()) == pytest.approx(0.014) == gap_table(total=14.0).latency()


def test_a_measured_overhead_wins_over_the_difference_of_medians():
    # The unprofiled median doubled by load; the paired measurement says 0.4 units outside.
    loaded = gap_table(total=20.0, overhead=0.4, unit="us")
    assert loaded.overhead() == pytest.approx(0.4e-6)
    assert loaded.latency() == pytest.approx(10.4e-6)
    assert loaded.measured().times["n1"] == pytest.approx(1.1e-6)


@pytest.mark.parametrize("total, overhead", [(None, None), (8.0, None), (30.0, -0.3)])
def test_no_negative_or_unknown_time_outside_the_nodes(total, overhead):
    measured = gap_table(total=total, overhead=overhead).measured()
    assert measured.overhead == 0 and measured.times["n4"] == pytest.approx(0.004)
