"""Every run ends, and ends clean (issue 27, item 2): Ctrl-C and SIGTERM keep the best schedule
so far, leave no partial file, and never leave the CP-SAT worker behind.

Each test runs a real ``schedkit`` process and sends it a real signal.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCHEDKIT = [sys.executable, "-m", "schedkit.cli"]
#: A problem whose exact solve runs far past the test (a 3 % gap after seconds, unproven in 60 s).
SLOW = ["generate", "layered", "--levels", "12", "--width", "10"]


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("slow") / "slow.yaml"
    subprocess.run(SCHEDKIT + SLOW + ["-o", str(path)], check=True, cwd=ROOT)
    return path


#: CPU seconds after which a run has imported schedkit, loaded its problem and is solving.
CPU_STARTED = 1.5


def _tree_cpu(parent: psutil.Process) -> float:
    """CPU seconds used by ``parent`` and its processes (a decomposition's parts may run in a pool)."""
    total = 0.0
    for proc in [parent] + parent.children(recursive=True):
        try:
            total += sum(proc.cpu_times()[:2])
        except psutil.Error:  # (a child that ended meanwhile)
            pass
    return total


def _wait_for(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


def _started(log: Path, process: subprocess.Popen, marker: str | None, timeout: float = 20.0) -> None:
    """Wait until the exact solver has started: its log shows ``marker`` (``None``: the CP-SAT
    worker has started, which ``auto`` does once its incumbent is found)."""
    if marker == "":
        # (a fixed second after the start may fall, on a loaded machine, before Python has
        # imported schedkit and installed its handlers; CPU time used is the process's own progress)
        parent = psutil.Process(process.pid)
        assert _wait_for(lambda: process.poll() is not None or _tree_cpu(parent) >= CPU_STARTED, 3 * timeout)
    elif marker is None:
        parent = psutil.Process(process.pid)
        assert _wait_for(lambda: process.poll() is not None or any(
            "schedkit.cpsat" in _cmdline(c) for c in parent.children()), timeout)
    else:
        assert _wait_for(lambda: marker in log.read_text(errors="replace") or process.poll() is not None, timeout)
    time.sleep(1.0)
    assert process.poll() is None, log.read_text()


#: (method flags, the log line after which the exact solver runs (``None``: see _started; ``""``:
#: once the process has used CPU_STARTED seconds of CPU), signal)
RUNS = {
    "milp-race-int": (["-m", "milp", "-v"], "Starting CP-SAT", signal.SIGINT),
    "milp-highs-term": (["-m", "milp", "--solver", "highs", "-v"], "Running HiGHS", signal.SIGTERM),
    "milp-cpsat-int": (["-m", "milp", "--solver", "cpsat", "-v"], "Starting CP-SAT", signal.SIGINT),
    "auto-term": (["-m", "auto"], None, signal.SIGTERM),
    "auto-int": (["-m", "auto"], None, signal.SIGINT),
    # (a decomposition stopped before its parts are combined keeps the finisher's schedule)
    "kedge-int": (["-m", "kedge"], "", signal.SIGINT),
    "merge-term": (["-m", "merge"], "", signal.SIGTERM),
}


@pytest.mark.parametrize("run", list(RUNS), ids=list(RUNS))
def test_a_signal_during_a_solve_writes_the_best_schedule_so_far(slow, tmp_path, run):
    flags, marker, sig = RUNS[run]
    out, log = tmp_path / "s.json", tmp_path / "log.txt"
    with open(log, "w") as sink:
        process = subprocess.Popen(SCHEDKIT + ["solve", str(slow), "--time-limit", "60", "-o", str(out)] + flags,
                                   cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        _started(log, process, marker)
        os.kill(process.pid, sig)
        code = process.wait(timeout=15)
    text = log.read_text(errors="replace")
    assert code == 128 + sig, text[-2000:]
    assert "Traceback" not in text and "schedkit: error" not in text, text[-2000:]
    assert "schedkit: interrupted: the best schedule so far is kept" in text
    data = json.loads(out.read_text())
    assert data["status"] in ("feasible", "heuristic") and data["bound"] is not None
    assert data["message"].startswith("interrupted")
    # (the whole run's time, which went on for a second at least: not the finisher's milliseconds)
    assert data["solve_seconds"] >= 1.0, data["solve_seconds"]
    checked = subprocess.run(SCHEDKIT + ["validate", str(slow), str(out)], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not [p for p in tmp_path.iterdir() if p.name not in ("s.json", "log.txt")]


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_the_python_api_raises_keyboard_interrupt_with_the_best_result(slow, solver):
    # (Python as a terminal starts it: a test run launched in the background, '&' in a script,
    # inherits SIGINT ignored, and then no KeyboardInterrupt ever comes, as POSIX says)
    script = (f"import os, signal, sys, threading\n"
              f"signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              f"from schedkit import Problem, solve\n"
              f"p = Problem.load({str(slow)!r})\n"
              f"threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
              f"try:\n"
              f"    solve(p, 'milp', solver={solver!r}, time_limit=60)\n"
              f"except BaseException as exc:\n"
              f"    r = getattr(exc, 'result', None)\n"
              f"    print(type(exc).__name__, isinstance(exc, KeyboardInterrupt), r is not None and r.status)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["Interrupted", "True", "feasible"] or \
        done.stdout.split() == ["Interrupted", "True", "heuristic"], done.stdout + done.stderr[-2000:]


def test_export_stopped_by_sigterm_leaves_no_partial_file(tmp_path):
    problem = tmp_path / "big.yaml"
    subprocess.run(SCHEDKIT + ["generate", "layered", "--levels", "30", "--width", "20", "-o", str(problem)],
                   check=True, cwd=ROOT)
    process = subprocess.Popen(SCHEDKIT + ["export", str(problem), "-o", str(tmp_path / "model.lp")], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = lambda: [p for p in tmp_path.iterdir() if "-partial-" in p.name]  # noqa: E731
    assert _wait_for(lambda: partial() or process.poll() is not None, 20), "the export never began writing"
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=10)
    assert process.returncode == 143, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml"]


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # (it ended meanwhile)
        return ""


def _worker_of(parent: psutil.Process, timeout: float = 15.0) -> psutil.Process:
    """The CP-SAT worker process that ``parent`` started."""
    found: list[psutil.Process] = []

    def look() -> bool:
        found[:] = [c for c in parent.children(recursive=True) if "schedkit.cpsat" in _cmdline(c)]
        return bool(found)

    assert _wait_for(look, timeout), "no CP-SAT worker started"
    return found[0]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_the_cpsat_worker_never_outlives_its_parent(slow, tmp_path, sig):
    log = tmp_path / "log.txt"
    with open(log, "w") as sink:
        process = subprocess.Popen(SCHEDKIT + ["solve", str(slow), "-m", "milp", "--solver", "cpsat", "-v",
                                               "--time-limit", "60", "-o", str(tmp_path / "s.json")],
                                   cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    try:
        worker = _worker_of(psutil.Process(process.pid))
        _started(log, process, "Starting CP-SAT")  # (it searches: it would run for a minute)
        os.kill(process.pid, sig)
        process.wait(timeout=15)
        assert _wait_for(lambda: not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE, 3.0), \
            f"the CP-SAT worker {worker.pid} still runs after its parent got {signal.Signals(sig).name}"
    finally:
        if process.poll() is None:
            process.kill()
