"""``schedkit plot | trace | report``, ``solve --plot --report --quiet`` and ``generate platform``:
files written, bad input as one line without a traceback or an output file."""

import json

import pytest
import yaml

from schedkit import Problem, solve
from schedkit.cli.main import main
from schedkit.importers.platform import load_platform

TINY = "examples/tiny.yaml"


def run(argv, capfd):
    code = main([str(a) for a in argv])
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def tiny_schedule(tmp_path):
    path = tmp_path / "s.json"
    solve(Problem.load(TINY), "heft").write(path)
    return path


def test_plot_trace_report(tmp_path, tiny_schedule, capfd):
    pytest.importorskip("matplotlib")
    for name in ("g.png", "g.svg", "g.pdf"):
        code, out, err = run(["plot", TINY, tiny_schedule, "-o", tmp_path / name, "--colour-by", "device"], capfd)
        assert code == 0 and err == "" and out == f"wrote {tmp_path / name} (valid)\n"
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "g.pdf").read_bytes()[:4] == b"%PDF"
    assert "<svg" in (tmp_path / "g.svg").read_text()
    code, out, _ = run(["trace", TINY, tiny_schedule, "-o", tmp_path / "t.json", "--time-unit", "s"], capfd)
    assert code == 0
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    embed = next(e for e in events if e["name"] == "embed" and e["ph"] == "X")
    assert embed["dur"] == pytest.approx(0.4e6)  # seconds -> microseconds
    code, out, _ = run(["report", TINY, tiny_schedule, "-o", tmp_path / "r.html"], capfd)
    assert code == 0 and out == f"wrote {tmp_path / 'r.html'} (valid)\n"
    page = (tmp_path / "r.html").read_text()
    assert "Formulation <code>latency</code>" in page and page.count('class="task"') == 6


def test_report_shows_violations(tmp_path, tiny_schedule, capfd):
    data = json.loads(tiny_schedule.read_text())
    data["tasks"][0]["start"] += 0.05  # embed now overlaps its successor
    data["tasks"][0]["end"] += 0.05
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, out, _ = run(["report", TINY, bad, "-o", tmp_path / "r.html"], capfd)
    assert code == 0 and "invalid:" in out
    assert "invalid:" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("command, suffix", [("plot", ".png"), ("trace", ".json"), ("report", ".html")])
def test_schedule_of_another_problem(command, suffix, tmp_path, capfd):
    other = tmp_path / "other.json"
    solve(Problem.load("examples/hetero20.yaml"), "heft").write(other)
    out = tmp_path / f"picture{suffix}"
    code, _, err = run([command, TINY, other, "-o", out], capfd)
    assert code == 1 and not out.exists()
    assert err == f"schedkit: error: {other}: the schedule is for problem 'hetero20', not 'tiny'\n"


@pytest.mark.parametrize("command, name, message", [
    ("plot", "g.gif", "unknown file type '.gif'"), ("trace", "t.txt", "unknown file type '.txt'"),
    ("report", "r.pdf", "unknown file type '.pdf'")])
def test_wrong_suffix_is_refused_before_work(command, name, message, tmp_path, tiny_schedule, capfd):
    code, _, err = run([command, TINY, tiny_schedule, "-o", tmp_path / name], capfd)
    assert code == 1 and message in err and len(err.splitlines()) == 1
    assert not (tmp_path / name).exists()


def test_solve_plot_and_report_in_one_go(tmp_path, capfd):
    pytest.importorskip("matplotlib")
    code, out, err = run(["solve", TINY, "-m", "heft", "--plot", tmp_path / "g.png", "--report",
                          tmp_path / "r.html", "--quiet"], capfd)
    assert code == 0 and out.startswith("heft on tiny:") and err == ""
    assert (tmp_path / "g.png").stat().st_size > 1000
    assert ">valid<" in (tmp_path / "r.html").read_text()
    code, out, err = run(["solve", TINY, "--time-limit", "10", "--report", tmp_path / "m.html"], capfd)
    assert code == 0
    assert "Formulation <code>latency</code>" in (tmp_path / "m.html").read_text()
    code, _, err = run(["solve", TINY, "-m", "heft", "--plot", tmp_path / "g.bmp"], capfd)
    assert code == 1 and "unknown file type '.bmp'" in err and not (tmp_path / "g.bmp").exists()


def test_generate_platform(tmp_path, capfd):
    out = tmp_path / "devices.yaml"
    code, _, err = run(["generate", "platform", "--cpus", "2", "--gpus", "3", "--gpu-model", "h100,t4",
                        "--gpu-link", "pcie", "-o", out], capfd)
    assert code == 0 and err == ""
    text = out.read_text()
    assert text.startswith("# schedkit-platform/v1 devices file")
    platform = load_platform(out)
    assert [d.name for d in platform.devices] == ["cpu0", "cpu1", "gpu0", "gpu1", "gpu2"]
    # a lone T4 has no twin; cpu0 holds the GPUs, so the CPUs are not interchangeable
    assert [d.group for d in platform.devices] == [None, None, "gpu-h100", None, "gpu-h100"]
    assert len(platform.links) == 1 + 3 + 3
    code, _, err = run(["generate", "platform", "--gpu-model", "b200", "-o", tmp_path / "x.yaml"], capfd)
    assert code == 1 and err == "schedkit: error: unknown GPU model 'b200' (known: a100, h100, l4, t4, v100)\n"
    assert not (tmp_path / "x.yaml").exists()
    code, _, err = run(["generate", "platform", "--cpus", "0", "--gpus", "0"], capfd)
    assert code == 1 and "at least one device" in err
    code, out, _ = run(["generate", "platform", "-o", tmp_path / "p.json"], capfd)
    assert json.loads((tmp_path / "p.json").read_text())["format"] == "schedkit-platform/v1"


def test_example_devices_file_is_the_documented_one():
    platform = load_platform("examples/platform_cpu_2gpu.yaml")
    assert [d.name for d in platform.devices] == ["cpu", "gpu0", "gpu1"]
    data = yaml.safe_load(open("examples/platform_cpu_2gpu.yaml"))
    assert all({"peak_flops", "memory_bandwidth", "launch_overhead"} <= set(d) for d in data["devices"])


@pytest.mark.parametrize("option, value", [("--width", "0"), ("--width", "-2"), ("--width", "nan"),
                                           ("--width", "1e6"), ("--dpi", "0"), ("--dpi", "-5"),
                                           ("--dpi", "100000")])
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_out_of_range_plot_options(option, value, suffix, tmp_path, tiny_schedule, capfd):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"g{suffix}"
    code, _, err = run(["plot", TINY, tiny_schedule, "-o", out, option, value], capfd)
    assert code == 1 and err.startswith(f"schedkit: error: {option} ") and err.count("\n") == 1, err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("method", ["milp", "auto"])
@pytest.mark.parametrize("status", ["infeasible", "no_solution"])
def test_pictures_of_a_result_without_a_schedule(method, status, tmp_path, capfd):
    # A problem no placement fits: 'solve --plot --report' says what it did not write, and the
    # schedule file it wrote is drawn or reported by plot, trace and report without a traceback.
    pytest.importorskip("matplotlib")
    problem = tmp_path / "full.yaml"
    problem.write_text("devices: [{name: a, memory: 10}, {name: b, memory: 10}]\n"
                       "tasks: [{name: x, work: 1, memory: 6}, {name: y, work: 1, memory: 6},\n"
                       "        {name: z, work: 1, memory: 6}]\n")
    out = tmp_path / "s.json"
    code, _, err = run(["solve", problem, "-m", method, "-o", out, "--plot", tmp_path / "g.png",
                        "--report", tmp_path / "r.html"], capfd)
    assert code == 4 and "no schedule to draw (status infeasible)" in err and "not written" in err, err
    assert not (tmp_path / "g.png").exists() and not (tmp_path / "r.html").exists()
    data = json.loads(out.read_text())
    data["status"] = status
    out.write_text(json.dumps(data))
    for command, name in [("plot", "g.svg"), ("trace", "t.json"), ("report", "r.html")]:
        code, printed, err = run([command, problem, out, "-o", tmp_path / name], capfd)
        assert "Traceback" not in err and "KeyError" not in err, err
        assert code == 0 and "invalid" in printed and (tmp_path / name).exists(), (command, err)
