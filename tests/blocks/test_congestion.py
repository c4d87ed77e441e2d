"""Block ``congestion``: golden LP, violations per resource, and the optimum it changes."""

import pytest
from helpers.block_cases import OWN, check_golden, problem, schedule

from schedkit import Formulation, Problem, solve
from schedkit.blocks import Congestion
from schedkit.errors import FormulationError


def test_golden_lp(tmp_path):
    text = check_golden("congestion", tmp_path)
    # One order binary for the pair of transfers out of a, and two rows: the gpu's send
    # port and the cpu's receive port give the same rows, written once.
    assert text.count("transfer_order(a_b_a_c)") == 4  # two rows, the bounds, binary
    assert "congestion.disjunct(a_b_a_c_cpu_receive_before)" in text
    assert "congestion.disjunct(a_b_a_c_cpu_receive_after)" in text
    assert "gpu_send" not in text


def test_feasible_schedule_has_no_violation():
    _, feasible, _ = OWN["congestion"]
    assert Congestion(resource="port").violations(problem("congestion"), schedule(feasible, "congestion")) == []


def test_two_transfers_out_of_one_port_at_once_are_named():
    _, _, overlap = OWN["congestion"]
    found = Congestion(resource="port").violations(problem("congestion"), schedule(overlap, "congestion"))
    assert found == ["port gpu:send: transfer a->b [1, 3.5) overlaps transfer a->c [1, 3.5)",
                     "port cpu:receive: transfer a->b [1, 3.5) overlaps transfer a->c [1, 3.5)"]


def test_the_optimum_queues_the_transfers():
    p = problem("congestion")
    free = solve(p, "milp", formulation=Formulation.from_data(
        {"blocks": ["assignment", "precedence", "no_overlap", "channels"]}))
    queued = solve(p, "milp", formulation=Formulation.from_data(
        {"blocks": ["assignment", "precedence", "no_overlap", "channels", {"congestion": {"resource": "port"}}]}))
    assert (free.status, free.makespan) == ("optimal", pytest.approx(5.5))
    assert (queued.status, queued.makespan) == ("optimal", pytest.approx(6.0))


THREE = {
    "format": "schedkit/v1", "name": "three",
    "devices": [{"name": "g0"}, {"name": "g1"}, {"name": "cpu"}],
    "links": [{"src": "g0", "dst": "g1", "bandwidth": 1, "channel": "nvlink"},
              {"src": "g0", "dst": "cpu", "bandwidth": 1, "channel": "pcie"},
              {"src": "g1", "dst": "cpu", "bandwidth": 1, "channel": "pcie"}],
    "tasks": [{"name": "a", "durations": {"g0": 1}}, {"name": "b", "durations": {"g1": 1}},
              {"name": "c", "durations": {"cpu": 1}}, {"name": "d", "durations": {"g1": 1}},
              {"name": "e", "durations": {"cpu": 1}}],
    "edges": [{"src": "a", "dst": "b", "size": 2}, {"src": "a", "dst": "c", "size": 2},
              {"src": "d", "dst": "e", "size": 2}],
}


def three(transfers):
    """The THREE instance's schedule with transfers at the given ``{(src, dst): start}``."""
    from schedkit import Schedule, TaskRun, Transfer
    p = Problem.from_dict(THREE)
    where = {"a": "g0", "b": "g1", "c": "cpu", "d": "g1", "e": "cpu"}
    tasks = [TaskRun(task="a", device="g0", start=0, end=1), TaskRun(task="d", device="g1", start=0, end=1),
             TaskRun(task="b", device="g1", start=5, end=6), TaskRun(task="c", device="cpu", start=5, end=6),
             TaskRun(task="e", device="cpu", start=6, end=7)]
    rows = [Transfer(src=s, dst=d, **{"from": where[s]}, to=where[d], start=t, end=t + 2)
            for (s, d), t in transfers.items()]
    return p, Schedule(problem="three", method="manual", status="heuristic", tasks=tasks, transfers=rows)


def test_channel_and_port_are_different_resources():
    # a->b (nvlink) and a->c (pcie) share g0's send port, no channel;
    # a->c and d->e share the pcie channel and the cpu's receive port.
    p, s = three({("a", "b"): 1, ("a", "c"): 1, ("d", "e"): 3})
    assert Congestion(resource="channel").violations(p, s) == []
    assert Congestion(resource="port").violations(p, s) == [
        "port g0:send: transfer a->b [1, 3) overlaps transfer a->c [1, 3)"]
    p, s = three({("a", "b"): 1, ("a", "c"): 3, ("d", "e"): 1})
    assert Congestion(resource="port").violations(p, s) == []
    assert Congestion(resource="channel").violations(p, s) == []
    p, s = three({("a", "b"): 1, ("a", "c"): 2, ("d", "e"): 1})
    assert Congestion(resource="channel").violations(p, s) == [
        "channel pcie: transfer d->e [1, 3) overlaps transfer a->c [2, 4)"]
    assert len(Congestion(resource="both").violations(p, s)) == 3


def test_congestion_without_channels_is_refused_in_one_line():
    with pytest.raises(FormulationError) as err:
        Formulation.from_data({"blocks": ["assignment", "precedence", {"congestion": {"resource": "port"}}]}).build(
            Problem.from_dict(THREE))
    assert "congestion" in str(err.value) and "channels" in str(err.value) and "\n" not in str(err.value)


def test_yaml_and_python_spell_the_same_block():
    assert Congestion(resource="port").to_data() == {"congestion": {"resource": "port"}}
    f = Formulation.from_data({"blocks": ["assignment", "channels", {"congestion": {"resource": "both"}}]})
    assert Congestion(resource="both") in f.blocks
