"""Plug-ins without packaging: a block or method in a plain file, loaded with ``--plugin`` or
``SCHEDKIT_PLUGINS``, in this process and in worker processes (issue 30, item 5)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from schedkit import plugins
from schedkit.blocks import BLOCKS
from schedkit.cli.main import main, split_plugins
from schedkit.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "examples" / "tiny.yaml")
HETERO = str(ROOT / "examples" / "hetero20.yaml")

def _howto_block() -> str:
    """The block file of docs/howto.rst's "Your own block from a plain file" (tested as shown)."""
    section = (ROOT / "docs" / "howto.rst").read_text().split("Your own block from a plain file", 1)[1]
    code = section.split(".. code-block:: python\n\n", 1)[1]
    lines = []
    for line in code.splitlines():
        if line and not line.startswith("   "):
            break
        lines.append(line[3:])
    return "\n".join(lines).rstrip() + "\n"


#: A user's block: no task on one device; its rows are column bounds.
KEEP_FREE = _howto_block()

#: With a CP-SAT form: the CP-SAT worker then unpickles the block's class.
KEEP_FREE_CP = KEEP_FREE + '''
    def build_cp(self, cp):
        d = cp.problem.device_index[self.device]
        for i in range(len(cp.problem.tasks)):
            on = cp.on[i].get(d)
            if on is not None:
                cp.model.add(on == 0)
'''

#: Every task of tiny on the cpu, one after another: the sum of the cpu durations.
CPU_ONLY = ("name: cpu_only\n"
            "blocks: [assignment, placement, precedence, no_overlap, memory, {keep_free: {device: gpu0}}]\n")
CPU_MAKESPAN = 1.8 + 9.5 + 11.0 + 0.6 + 6.0 + 0.3

#: A user's method: HEFT that notes the process it runs in.
PID_HEFT = '''
import os

from schedkit.heuristics.heft import Heft
from schedkit.methods import register_method


@register_method("pid_heft")
class PidHeft(Heft):
    """HEFT, noting its process id in the file PID_LOG names."""

    def run(self, problem):
        with open(os.environ["PID_LOG"], "a") as log:
            log.write(f"{os.getpid()}\\n")
        return super().run(problem)
'''


@pytest.fixture
def clean(monkeypatch):
    """No plug-in before the test, none after it: entries, modules and the environment."""
    # (set, then removed: monkeypatch restores the variable the command line exports)
    monkeypatch.setenv(plugins.ENV, "")
    monkeypatch.delenv(plugins.ENV)
    done, modules = set(plugins._done), set(sys.modules)
    yield
    for name in ("keep_free", "half_block"):
        BLOCKS.unregister(name)
    METHODS.unregister("pid_heft")
    plugins._done.clear()
    plugins._done.update(done)
    plugins._settled = None
    for name in set(sys.modules) - modules:
        if name.startswith(plugins.PREFIX):
            del sys.modules[name]


@pytest.fixture
def block_files(tmp_path):
    (tmp_path / "keep_free.py").write_text(KEEP_FREE)
    (tmp_path / "cpu_only.yaml").write_text(CPU_ONLY)
    return tmp_path / "keep_free.py", tmp_path / "cpu_only.yaml"


def one_line_error(capfd, code: int) -> str:
    captured = capfd.readouterr()
    assert code == 1, captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedkit: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


def test_a_block_in_a_plain_file_solves_through_the_cli(clean, block_files, tmp_path, capsys):
    plugin, formulation = block_files
    out = tmp_path / "s.json"
    assert main(["solve", TINY, "-m", "milp", "--solver", "highs", "-f", str(formulation),
                 "--plugin", str(plugin), "-o", str(out)]) == 0
    assert f"makespan={CPU_MAKESPAN:g}" in capsys.readouterr().out
    # The file went into the environment, as an absolute path, for worker processes.
    assert plugins.environment_plugins() == [str(plugin.resolve())]
    # Judged by the same block: the schedule holds, a HEFT schedule on the GPU does not.
    assert main(["--plugin", str(plugin), "validate", TINY, str(out), "-f", str(formulation)]) == 0
    heft = tmp_path / "h.json"
    assert main(["solve", TINY, "-m", "heft", "-o", str(heft)]) == 0
    capsys.readouterr()
    assert main(["validate", TINY, str(heft), "-f", str(formulation), f"--plugin={plugin}"]) == 3
    assert "violation: keep_free: task 'embed' runs on gpu0" in capsys.readouterr().out


def test_the_environment_variable_loads_a_plugin_too(clean, block_files, monkeypatch, capsys):
    plugin, _ = block_files
    monkeypatch.setenv(plugins.ENV, os.pathsep.join(["", str(plugin)]))
    assert main(["blocks"]) == 0
    assert "keep_free        No task runs on one given device." in capsys.readouterr().out


def test_an_unknown_block_says_how_to_load_one(clean, block_files, tmp_path, capfd):
    _, formulation = block_files
    line = one_line_error(capfd, main(["export", TINY, "-f", str(formulation), "-o", str(tmp_path / "m.lp")]))
    assert "unknown block 'keep_free' (known: assignment," in line
    assert "--plugin FILE.py" in line and plugins.ENV in line
    line = one_line_error(capfd, main(["solve", TINY, "-m", "pid_heft"]))
    assert "unknown method 'pid_heft'" in line and "--plugin FILE.py" in line


def test_a_block_that_needs_an_unknown_family_says_how_to_load_one(clean, tmp_path, capfd):
    (tmp_path / "needs.py").write_text(
        "from schedkit.blocks import Block, register_block\n\n@register_block('needs_flow')\n"
        "class NeedsFlow(Block):\n    \"\"\"Needs a family nobody loaded.\"\"\"\n"
        "    requires = frozenset({'flow'})\n")
    (tmp_path / "f.yaml").write_text("name: f\nobjective: makespan\nblocks: [assignment, needs_flow]\n")
    line = one_line_error(capfd, main(["export", TINY, "-f", str(tmp_path / "f.yaml"), "--plugin",
                                       str(tmp_path / "needs.py"), "-o", str(tmp_path / "m.lp")]))
    assert "requires unknown family 'flow'" in line and "a family of your own loads" in line


BAD = {
    "syntax": ("x = (\n", "line 1: '(' was never closed"),
    "import": ("import schedkit_no_such_lib\n", "line 1: No module named 'schedkit_no_such_lib'"),
    "raises": ("a = 1\nb = a / 0\n", "line 2: ZeroDivisionError: division by zero"),
    "nothing": ("import os\n", "registers nothing"),
    "clash": ("from schedkit.blocks import Block, register_block\n\n@register_block('cuts')\n"
              "class Cuts(Block):\n    pass\n", "block 'cuts' is already registered"),
    "exits": ("import sys\nsys.exit(2)\n", "exits when imported (status 2)"),
    "half": ("from schedkit.blocks import Block, register_block\n\n@register_block('half_block')\n"
             "class Half(Block):\n    pass\n\nraise RuntimeError('not finished')\n",
             "line 7: RuntimeError: not finished"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_plugin_is_one_line_naming_it(clean, tmp_path, capfd, case):
    text, words = BAD[case]
    path = tmp_path / f"bad_{case}.py"
    path.write_text(text)
    line = one_line_error(capfd, main(["--plugin", str(path), "blocks"]))
    assert line.startswith(f"schedkit: error: plugin {path}: ") and words in line
    assert "half_block" not in BLOCKS  # a plug-in that failed half-way leaves nothing registered
    assert plugins.environment_plugins() == []


def test_the_documented_error_of_a_misspelt_plugin(clean, tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep_free.py").write_text(KEEP_FREE.replace("class KeepFree(Block)", "class KeepFree(Blok)"))
    line = one_line_error(capfd, main(["blocks", "--plugin", "keep_free.py"]))
    assert line == "schedkit: error: plugin keep_free.py: line 6: NameError: name 'Blok' is not defined"


@pytest.mark.parametrize("spec, words", [
    ("missing_plugin.py", "plugin missing_plugin.py: no such file"),
    ("schedkit_no_such.blocks", "no module named 'schedkit_no_such'"),
    ("", "plugin: an empty name"),
])
def test_a_missing_plugin_is_one_line(clean, tmp_path, monkeypatch, capfd, spec, words):
    monkeypatch.chdir(tmp_path)
    assert words in one_line_error(capfd, main(["methods", "--plugin", spec]))


def test_a_bad_plugin_in_the_environment_names_the_variable(clean, tmp_path, monkeypatch, capfd):
    (tmp_path / "raises.py").write_text("1 / 0\n")
    monkeypatch.setenv(plugins.ENV, str(tmp_path / "raises.py"))
    line = one_line_error(capfd, main(["methods"]))
    assert line.startswith(f"schedkit: error: {plugins.ENV}: plugin {tmp_path / 'raises.py'}: line 1: ")


def test_plugin_without_a_value_is_a_usage_error(clean, capfd):
    with pytest.raises(SystemExit) as stop:
        main(["methods", "--plugin"])
    assert stop.value.code == 2
    assert "argument --plugin: expected one argument" in capfd.readouterr().err


def test_plugin_flags_are_found_before_and_after_the_command_and_not_after_dashes():
    assert split_plugins(["--plugin", "a.py", "solve", "p", "--plugin=b", "--", "--plugin", "c"]) == \
        (["a.py", "b"], ["solve", "p", "--", "--plugin", "c"])


def test_a_module_plugin_loads_by_its_dotted_name(clean, tmp_path, monkeypatch, capsys):
    package = tmp_path / "user_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "blocks.py").write_text(KEEP_FREE)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["blocks", "--plugin", "user_pkg.blocks"]) == 0
    assert "keep_free" in capsys.readouterr().out
    assert plugins.environment_plugins() == ["user_pkg.blocks"]
    sys.modules.pop("user_pkg.blocks")
    sys.modules.pop("user_pkg")


# ---------------------------------------------------------------------- worker processes
def _cli(args, tmp_path, **env):
    """Run the command line in a fresh process (its environment its own): ``(status, out, err, pid)``."""
    environment = {k: v for k, v in os.environ.items() if k != plugins.ENV}
    environment.update(env)
    process = subprocess.Popen([sys.executable, "-m", "schedkit.cli", *args], cwd=tmp_path, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=240)
    return process.returncode, out, err, process.pid


@pytest.mark.parametrize("executor", ["process:2", "dask:2"])
def test_process_pool_and_dask_workers_load_the_plugin(tmp_path, executor):
    if executor.startswith("dask"):
        pytest.importorskip("distributed")
    (tmp_path / "pid_heft.py").write_text(PID_HEFT)
    log = tmp_path / "pids.txt"
    status, out, err, pid = _cli(["solve", HETERO, "-m", "bridge_dp", "--inner", "pid_heft", "--executor",
                                  executor, "--plugin", "pid_heft.py"], tmp_path, PID_LOG=str(log))
    assert status == 0, err
    assert "bridge_dp:pid_heft on hetero20: status=heuristic" in out
    # The parts ran in the workers, which found 'pid_heft' through the variable the command set.
    pids = set(log.read_text().split())
    assert pids and str(pid) not in pids


def test_the_cpsat_worker_unpickles_a_plugin_block(tmp_path):
    pytest.importorskip("ortools")
    (tmp_path / "keep_free.py").write_text(KEEP_FREE_CP)
    (tmp_path / "cpu_only.yaml").write_text(CPU_ONLY)
    status, out, err, _ = _cli(["solve", TINY, "-m", "milp", "--solver", "cpsat", "-f", "cpu_only.yaml",
                                "--plugin", "keep_free.py"], tmp_path)
    assert status == 0, err
    assert f"status=optimal makespan={CPU_MAKESPAN:g}" in out


def test_the_python_api_loads_the_variable_lazily(tmp_path):
    (tmp_path / "pid_heft.py").write_text(PID_HEFT)
    code = textwrap.dedent(f"""
        import schedkit
        print(schedkit.solve(schedkit.Problem.load({TINY!r}), "pid_heft").method)
    """)
    env = {k: v for k, v in os.environ.items() if k != plugins.ENV}
    env.update({plugins.ENV: str(tmp_path / "pid_heft.py"), "PID_LOG": str(tmp_path / "pids.txt")})
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pid_heft"]
