"""Nothing lost, nothing half-written: every output path is checked before any work."""

import errno
import os

import pytest

from schedkit.cli.main import main
from schedkit.errors import SchedkitError

TINY = "examples/tiny.yaml"


def commands(tmp_path, target):
    """Every command that writes a file, writing to ``target``."""
    (tmp_path / "toy.txt").write_text("2 2\n0 3 1 2\n1 4 0 1\n")
    return {
        "solve": ["solve", TINY, "-m", "heft", "-o", target],
        "export": ["export", TINY, "-o", target],
        "convert": ["convert", "jssp", str(tmp_path / "toy.txt"), "-o", target],
        "generate": ["generate", "er", "--tasks", "4", "-o", target],
    }


SUFFIX = {"solve": ".json", "export": ".lp", "convert": ".json", "generate": ".json"}


@pytest.mark.parametrize("command", list(SUFFIX))
def test_a_missing_folder_is_refused_naming_the_users_path(tmp_path, capsys, command):
    target = str(tmp_path / "nowhere" / f"out{SUFFIX[command]}")
    assert main(commands(tmp_path, target)[command]) == 1
    assert capsys.readouterr().err.strip() == f"schedkit: error: {target}: no such folder: {tmp_path / 'nowhere'}"


@pytest.mark.parametrize("command", list(SUFFIX))
def test_a_folder_is_not_a_file(tmp_path, capsys, command):
    target = tmp_path / f"dir{SUFFIX[command]}"
    target.mkdir()
    assert main(commands(tmp_path, str(target))[command]) == 1
    assert f"{target}: is a folder, not a file" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted([target.name, "toy.txt"])   # nothing half-written
    assert os.listdir(target) == []


@pytest.mark.parametrize("command", list(SUFFIX))
def test_a_folder_without_permission_is_refused(tmp_path, capsys, monkeypatch, command):
    locked = tmp_path / "locked"
    locked.mkdir()
    # What the OS answers for a folder this user may not write (root may write anywhere,
    # so the answer is given here rather than by chmod).
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(locked) else real(path, mode))
    assert main(commands(tmp_path, str(locked / f"x{SUFFIX[command]}"))[command]) == 1
    assert capsys.readouterr().err.strip().endswith(f"x{SUFFIX[command]}: permission denied")
    assert os.listdir(locked) == []


@pytest.mark.parametrize("argv", [
    ["solve", TINY, "-m", "heft", "-o", TINY],
    ["solve", "examples/../examples/tiny.yaml", "-m", "heft", "-o", TINY],
    ["export", TINY, "-o", TINY],
    ["load-solution", TINY, TINY, "-o", TINY],
])
def test_an_output_that_would_overwrite_an_input_is_refused_before_any_work(argv, capsys):
    before = open(TINY).read()
    assert main(argv) == 1
    assert "the output would overwrite an input file" in capsys.readouterr().err
    assert open(TINY).read() == before


@pytest.mark.parametrize("argv,words", [
    (["solve", TINY, "-m", "heft", "-o", "{dir}/s.txt"], "unknown file type '.txt' (use .json, .yaml, .yml)"),
    (["export", TINY, "-o", "{dir}/m.gms"], "unknown file type '.gms' (use .lp, .mps)"),
])
def test_a_suffix_the_command_cannot_write_is_refused(tmp_path, capsys, argv, words):
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    assert main(argv) == 1
    assert words in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_leaves_no_partial_file(tmp_path):
    from schedkit.atomic import atomic_output, write_text_atomic

    folder = tmp_path / "out.lp"
    folder.mkdir()                       # renaming onto a folder fails after the write
    with pytest.raises(SchedkitError, match=f"^{folder}: cannot write: Is a directory$"):
        with atomic_output(folder) as path:
            path.write_text("model")
    with pytest.raises(SchedkitError, match=f"^{folder}: cannot write: Is a directory$"):
        write_text_atomic(folder, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.lp"]


def test_a_write_that_fails_midway_names_the_users_path_and_leaves_nothing(tmp_path):
    from schedkit.atomic import atomic_output

    target = tmp_path / "model.lp"
    with pytest.raises(SchedkitError, match=f"^{target}: cannot write: No space left on device$"):
        with atomic_output(target) as path:
            path.write_text("half a model")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", list(SUFFIX))
def test_a_folder_that_takes_no_new_file_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command):
    # (/proc or a read-only mount: access() says the folder may be written, making a file fails;
    # the error named the temporary file, after the work, or was an [Errno 2] line)
    import tempfile

    frozen = tmp_path / "frozen"
    frozen.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if str(dir) == str(frozen):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    target = frozen / f"x{SUFFIX[command]}"
    assert main(commands(tmp_path, str(target))[command]) == 1
    assert capsys.readouterr().err.strip() == f"schedkit: error: {target}: cannot write: Read-only file system"
    assert os.listdir(frozen) == []


def test_a_schedule_written_from_python_to_a_folder_is_one_line():
    import schedkit

    schedule = schedkit.solve(TINY, "heft")
    with pytest.raises(schedkit.ScheduleError, match="^examples: is a folder, not a file$"):
        schedule.write("examples")


def test_schedules_are_written_as_yaml_by_suffix(tmp_path, capsys):
    out = tmp_path / "s.yaml"
    assert main(["solve", TINY, "-m", "heft", "-o", str(out)]) == 0
    assert out.read_text().startswith("format: schedkit-schedule/v1\n")
    assert main(["validate", TINY, str(out)]) == 0
