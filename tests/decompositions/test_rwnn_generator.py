"""The RWNN generator: seeded, modules joined by channels, sdep and wdep as documented."""

import pytest

from schedkit import Problem, ProblemError
from schedkit.problem.series_cuts import chain_cuts
from schedkit.generators import rwnn


def test_the_same_arguments_give_the_same_data():
    assert rwnn(4, 6, channels=3, seed=9) == rwnn(4, 6, channels=3, seed=9)
    assert rwnn(4, 6, channels=3, seed=9) != rwnn(4, 6, channels=3, seed=10)


@pytest.mark.parametrize("graph", ["er", "ws", "ba", "mixed"])
@pytest.mark.parametrize("channels", [1, 2, 4])
def test_modules_are_joined_by_exactly_the_channels(graph, channels):
    data = rwnn(3, 6, channels=channels, graph=graph, seed=2)
    p = Problem.from_dict(data)
    assert len(p.tasks) == 3 * (6 + 2 * channels)
    module = {name: name.split("_")[0] for name in p.tasks}
    between = [(e["src"], e["dst"]) for e in data["edges"] if module[e["src"]] != module[e["dst"]]]
    assert len(between) == 2 * channels
    assert all(s.startswith(f"m{t}_out") and d.startswith(f"m{t + 1}_in") for t in (1, 2)
               for s, d in between if s.startswith(f"m{t}_"))
    assert p.devices == ["gpu0", "gpu1", "cpu"]
    for i in range(len(p.tasks)):  # the fast GPU is the fastest, the CPU the slowest
        assert p.durations[i][0] <= p.durations[i][1] <= p.durations[i][2]


def test_one_channel_makes_a_chain_of_bridges():
    p = Problem.from_dict(rwnn(4, 5, channels=1, seed=3))
    bridges = {(p.tasks[c.tail], p.tasks[c.head]) for c in chain_cuts(p)}
    assert {("m1_out1", "m2_in1"), ("m2_out1", "m3_in1"), ("m3_out1", "m4_in1")} <= bridges


def depends(p, src, dst):
    return bool((p.descendants[p.task_index[src]] >> p.task_index[dst]) & 1)


def test_sdep_outputs_depend_on_every_input_and_wdep_on_some():
    strong = Problem.from_dict(rwnn(2, 8, channels=3, dependency="sdep", seed=1))
    assert all(depends(strong, f"m1_in{a}", f"m1_out{b}") for a in (1, 2, 3) for b in (1, 2, 3))
    weak = Problem.from_dict(rwnn(2, 8, channels=3, dependency="wdep", seed=1))
    assert not any(depends(weak, f"m1_in{a}", f"m1_out{b}") for b in (1, 2, 3) for a in (1, 2, 3) if a > b)
    assert all(depends(weak, f"m1_in{b}", f"m1_out{b}") for b in (1, 2, 3))


@pytest.mark.parametrize("kwargs, message", [
    ({"channels": 0}, "channels: needs an integer in 1..4, got 0"),
    ({"modules": 0}, "modules: needs an integer >= 1, got 0"),
    ({"nodes": 1}, "nodes: needs an integer >= 2, got 1"),
    ({"nodes": 2, "channels": 3, "dependency": "wdep"}, "nodes: wdep needs a node per channel, 3, got 2"),
    ({"dependency": "tight"}, "dependency: 'tight' is not one of sdep, wdep"),
    ({"graph": "grid"}, "graph: 'grid' is not one of er, ws, ba, mixed"),
    ({"edge_prob": 1.5}, "edge_prob: a probability must lie in [0, 1], got 1.5"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ProblemError) as error:
        rwnn(**kwargs)
    assert str(error.value) == message
