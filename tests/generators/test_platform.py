"""``generate platform nodes`` joins its servers through a switch (a device that runs no task):
a file linear in servers whose transfer times are those of a link per pair of servers (issue 29)."""

import pytest

from schedkit import Problem, solve
from schedkit.cli.main import main
from schedkit.generators import rwnn
from schedkit.generators.platform import SWITCH, nodes
from schedkit.importers.platform import parse_platform


def _problem(network, servers=3, gpus=2, seed=5, **options):
    platform = parse_platform(nodes(nodes=servers, gpus=gpus, network=network, **options))
    return Problem.from_dict(platform.retarget(rwnn(modules=2, nodes=6, seed=seed)))


@pytest.mark.parametrize("options", [{}, {"time_unit": "us", "network_latency": 3e-6},
                                     {"time_unit": "s", "network_latency": 0.0, "gpu_link": "pcie"},
                                     {"network_bandwidth": 1e11, "network_latency": 7.3e-5}])
def test_every_pair_of_gpus_communicates_as_over_a_link_per_pair_of_servers(options):
    switched, paired = _problem("switch", **options), _problem("pairs", **options)
    assert switched.devices == paired.devices + [SWITCH]
    for u, a in enumerate(paired.devices):
        for v, b in enumerate(paired.devices):
            x, y = switched.device_index[a], switched.device_index[b]
            assert switched.linked[x][y] == paired.linked[u][v]
            # bit for bit: half the latency on each hop adds up to the latency of the direct link
            assert (switched.inv_bandwidth[x][y], switched.latency[x][y]) == \
                (paired.inv_bandwidth[u][v], paired.latency[u][v]), (a, b)
            for size in (0.0, 1.0, 3.7e6):
                assert switched.comm_time(size, x, y) == paired.comm_time(size, u, v)


def test_a_transfer_between_servers_takes_both_servers_nics():
    p = _problem("switch")
    i = p.device_index
    assert p.route[i["n0_gpu1"]][i["n2_gpu0"]] == ("n0-nic", "n2-nic")
    assert p.route[i["n0_gpu1"]][i["n0_gpu0"]] == ("n0_gpu1->n0_gpu0",)   # inside a server: NVLink
    assert p.allowed and all(i[SWITCH] not in allowed for allowed in p.allowed)


@pytest.mark.parametrize("seed", [1, 5, 9])
def test_both_forms_give_the_same_heft_and_exact_makespans_and_no_task_runs_on_the_switch(seed):
    switched, paired = _problem("switch", seed=seed), _problem("pairs", seed=seed)
    for method, options in (("heft", {}), ("greedy", {}), ("milp", {"time_limit": 60, "threads": 1})):
        a, b = solve(switched, method, **options), solve(paired, method, **options)
        assert a.makespan == b.makespan, method
        assert all(row.device != SWITCH for row in a.tasks)
        a.validate(switched)


def test_one_server_needs_no_switch():
    data = nodes(nodes=1, gpus=4)
    assert "switches" not in data and [(l["src"], l["dst"]) for l in data["links"]] == [("n0", "n0")]


def test_the_file_of_128_servers_of_8_gpus_is_linear_and_pairs_keeps_the_quadratic_form(tmp_path):
    switched, paired = tmp_path / "switch.yaml", tmp_path / "pairs.yaml"
    assert main(["generate", "platform", "nodes", "--nodes", "128", "--gpus", "8", "-o", str(switched)]) == 0
    assert main(["generate", "platform", "nodes", "--nodes", "128", "--gpus", "8", "--network", "pairs",
                 "-o", str(paired)]) == 0
    lines = len(switched.read_text().splitlines())
    assert 1024 + 2 * 128 < lines < 1024 + 2 * 128 + 20      # a line per GPU, two per server
    assert len(paired.read_text().splitlines()) > 1024 + 8000   # a link per pair of servers


@pytest.mark.parametrize("args, words", [
    (["generate", "platform", "--network", "pairs"], "--network does not apply to 'platform' without a kind"),
    (["generate", "platform", "nodes", "--network", "ring"], "invalid choice: 'ring'"),
])
def test_bad_network_choices_are_one_line(capfd, args, words):
    code = None
    try:
        code = main(args)
    except SystemExit as stop:
        code = stop.code
    err = capfd.readouterr().err
    assert code != 0 and words in err and "Traceback" not in err


@pytest.mark.parametrize("data, words", [
    ({"devices": [{"name": "g", "peak_flops": 1, "memory_bandwidth": 1}], "switches": [{"name": "g"}]},
     "duplicate device name 'g'"),
    ({"devices": [{"name": "g", "peak_flops": 1, "memory_bandwidth": 1, "group": "s"}], "switches": [{"name": "s"}]},
     "group 's' is spelled like a device name"),
    ({"devices": [{"name": "g", "peak_flops": 1, "memory_bandwidth": 1}], "switches": [{"name": "s"}],
      "links": [{"src": "g", "dst": "t", "bandwidth": 1}]}, "unknown device 't'"),
])
def test_bad_switches_in_a_platform_are_one_line(data, words):
    from schedkit.errors import ProblemError

    with pytest.raises(ProblemError, match=words):
        parse_platform(data, "p.yaml")


def test_the_switch_of_the_user_docs_is_what_the_generator_writes():
    from pathlib import Path

    import yaml

    text = (Path(__file__).resolve().parents[2] / "docs" / "howto.rst").read_text()
    section = text.split("Describe a large cluster (device types and group links)", 1)[1]
    block = section.split(".. code-block:: yaml\n\n", 2)[2].split("\n\n", 1)[0]
    shown = yaml.safe_load("\n".join(line[3:] for line in block.splitlines()))
    data = nodes(nodes=2, gpus=8)
    assert shown == {"switches": data["switches"], "links": data["links"]}
