"""Workers end with the process they work for, even one killed outright (SIGKILL skips every
exit handler): a process pool's workers and the ``forkserver`` that started them, and a
CP-SAT worker. Every process here is real and really killed."""

import os
import subprocess
import sys
import textwrap
import time

import psutil

from schedkit.lifeline import alive

#: A program that keeps a process pool of two workers, prints their pids, then waits.
POOL = textwrap.dedent("""
    import time
    from schedkit.reductions.executor import executor_for

    if __name__ == "__main__":
        with executor_for("process:2") as pool:
            list(pool.map(abs, range(8)))       # (the workers start)
            print(" ".join(str(pid) for pid in pool._processes), flush=True)
            time.sleep(120)
""")

#: A program that starts a CP-SAT worker, prints its pid once it has loaded, then waits.
CPSAT = textwrap.dedent("""
    import time
    from schedkit.cpsat import Worker

    if __name__ == "__main__":
        worker = Worker()
        worker.ready(timeout=60)
        print(worker.process.pid, flush=True)
        time.sleep(120)
""")


def _killed_leaves(program: str, tmp_path) -> tuple[list[int], list[int]]:
    """Run ``program``, SIGKILL it once it has printed its workers' pids; those pids, and those
    still running 10 s later."""
    script = tmp_path / "program.py"
    script.write_text(program)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        everyone = set(workers) | {c.pid for c in psutil.Process(proc.pid).children()}  # (forkserver, tracker)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in everyone) and time.monotonic() < deadline:
        time.sleep(0.1)
    return workers, [p for p in everyone if alive(p)]


def test_a_process_pool_ends_with_a_program_killed_outright(tmp_path):
    workers, left = _killed_leaves(POOL, tmp_path)
    assert workers and left == []


def test_a_cpsat_worker_ends_with_a_program_killed_outright(tmp_path):
    workers, left = _killed_leaves(CPSAT, tmp_path)
    assert len(workers) == 1 and left == []


def test_alive_tells_a_running_process_from_an_ended_one():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert alive(proc.pid) and alive(os.getpid())
    finally:
        proc.kill()
    time.sleep(0.5)
    assert not alive(proc.pid)           # (a zombie until reaped: ended)
    proc.wait()
    assert not alive(proc.pid)
