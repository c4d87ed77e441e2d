"""Parts on a real Dask LocalCluster give the same schedule as serial and a process pool."""

import logging
import os
import subprocess
import sys

import pytest

from schedkit import Problem, SchedkitError, solve
from schedkit.reductions import make_executor
from schedkit.generators import rwnn

distributed = pytest.importorskip("distributed")

#: Worker threads in this process (processes=False): the cluster starts in a fraction of a
#: second; `dask:N` below starts worker processes once, to show the default works too.
@pytest.fixture(scope="module")
def scheduler():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       protocol="tcp", dashboard_address=":0", silence_logs=logging.ERROR)
    yield cluster.scheduler_address.replace("tcp://", "dask://")
    cluster.close()


def rows(schedule):
    return schedule.model_dump(mode="json", by_alias=True, exclude={"solve_seconds"})


@pytest.mark.parametrize("method, options", [
    ("bridge_dp", {"inner": "milp"}),
    ("kedge", {"inner": "milp"}),
    ("merge", {"inner": "milp", "nodes": 12}),
])
def test_every_executor_gives_the_serial_schedule(scheduler, method, options):
    channels = 2 if method == "kedge" else 1
    p = Problem.from_dict(rwnn(3, 4, channels=channels, seed=1))
    serial = solve(p, method, executor="serial", **options)
    assert rows(solve(p, method, executor="process:2", **options)) == rows(serial)
    assert rows(solve(p, method, executor=scheduler, **options)) == rows(serial)


def test_a_local_cluster_of_worker_processes(scheduler):
    p = Problem.from_dict(rwnn(2, 3, seed=0))
    serial = solve(p, "bridge_dp", inner="heft", executor="serial")
    assert rows(solve(p, "bridge_dp", inner="heft", executor="dask:1")) == rows(serial)


def test_a_scheduler_that_does_not_answer_is_a_one_line_error():
    with pytest.raises(SchedkitError) as error:
        make_executor("dask://127.0.0.1:9", timeout=0.5)
    assert str(error.value) == ("executor 'dask://127.0.0.1:9': no Dask scheduler answered at "
                                "tcp://127.0.0.1:9 within 0.5 s")


def test_the_command_line_reports_an_unknown_address_without_a_traceback(tmp_path):
    out = tmp_path / "s.json"
    done = subprocess.run([sys.executable, "-m", "schedkit.cli", "solve", "examples/tiny.yaml", "-m",
                           "merge", "--nodes", "3", "--executor", "dask://127.0.0.1:9", "-o", str(out)],
                          capture_output=True, text=True, env=dict(os.environ, SCHEDKIT_DASK_TIMEOUT="0.5"),
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.strip().splitlines() == [
        "schedkit: error: executor 'dask://127.0.0.1:9': no Dask scheduler answered at tcp://127.0.0.1:9 "
        "within 0.5 s"]


def _server(reply: bytes):
    """A TCP server on a free port that sends ``reply`` to every client (or nothing) and holds on."""
    import socketserver
    import threading

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            if reply:
                self.request.sendall(reply)
            self.request.recv(1 << 16)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("reply, words", [
    (b"", "no Dask scheduler answered at tcp://127.0.0.1:{port} within 1 s"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "is not a Dask scheduler"),
])
def test_an_address_where_something_else_listens_is_a_one_line_error(reply, words):
    """Pointing at the wrong service (a web server, Dask's own dashboard) is no traceback and no
    endless wait, whether it stays silent or answers in its own protocol."""
    import time

    server = _server(reply)
    port = server.server_address[1]
    began = time.perf_counter()
    try:
        with pytest.raises(SchedkitError) as error:
            make_executor(f"dask://127.0.0.1:{port}", timeout=1)
    finally:
        server.shutdown()
    message = str(error.value)
    assert message.startswith(f"executor 'dask://127.0.0.1:{port}': ") and "\n" not in message
    assert words.format(port=port) in message
    assert time.perf_counter() - began < 10


def test_a_time_limit_holds_on_a_dask_cluster(scheduler):
    # a child process joins the cluster; killed if it overruns by far (bridge_dp takes
    # 90 s on this network without a limit)
    import json

    child = (
        "import json, sys, time\n"
        "from schedkit import Problem\n"
        "from schedkit.generators import rwnn\n"
        "from schedkit.methods import METHODS\n"
        "p = Problem.from_dict(rwnn(2, 30, channels=1, seed=0))\n"
        "began = time.perf_counter()\n"
        "r = METHODS.get('bridge_dp')(executor=sys.argv[1], time_limit=3.0, inner_options={'time_limit': 60},\n"
        "                             progress=None).result(p)\n"
        "print('RESULT ' + json.dumps([time.perf_counter() - began, r.status, r.termination, len(r.schedule.tasks)]))\n")
    done = subprocess.run([sys.executable, "-c", child, scheduler], capture_output=True, text=True, timeout=45)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-2000:]
    seconds, status, termination, tasks = json.loads(line[len("RESULT "):])
    assert seconds <= 1.05 * 3.0 + 3.0
    assert (status, termination, tasks) == ("feasible", "time_limit", 64)
