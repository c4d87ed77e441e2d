"""Importers: the registry, one-line errors, missing extras, and the jssp round trip through ``convert``."""

import re

import pytest

from schedkit import Problem, SchedkitError
from schedkit.cli.main import main
from schedkit.importers import IMPORTERS, Importer, convert, list_importers, need, register_importer
from schedkit.importers.jssp import Jssp, parse_jssp

JSSP_TEXT = "# two jobs, two machines\n2 2\n0 3 1 2\n1 4 0 1\n"
MISSING = "schedkit_test_no_such_package"


def test_registry_lookup():
    assert IMPORTERS.get("jssp") is Jssp
    assert Jssp.name == "jssp" and Jssp.extra is None and ".txt" in Jssp.suffixes
    assert "jssp" in IMPORTERS.names()
    assert dict(list_importers())["jssp"].startswith("Standard job-shop text")
    assert issubclass(Jssp, Importer)


def test_unknown_kind_is_one_line_listing_the_known_ones(tmp_path, capsys):
    with pytest.raises(SchedkitError) as info:
        convert("nosuchformat", tmp_path / "x.txt")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("unknown importer 'nosuchformat' (known: ")
    assert "jssp" in message
    # On the command line the kinds are argparse choices: a usage error (status 2).
    src = tmp_path / "toy.txt"
    src.write_text(JSSP_TEXT)
    out = tmp_path / "toy.json"
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", "nosuchformat", str(src), "-o", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nosuchformat'" in err and "jssp" in err
    assert not out.exists()


def test_register_refuses_what_is_not_an_importer():
    with pytest.raises(TypeError, match="not a subclass of Importer"):
        register_importer("not-an-importer")(object)
    assert "not-an-importer" not in IMPORTERS.names()


def test_a_second_jssp_is_refused():
    with pytest.raises(SchedkitError, match="importer 'jssp' is already registered"):
        register_importer("jssp")(type("Other", (Importer,), {}))
    assert IMPORTERS.get("jssp") is Jssp


@pytest.fixture
def fake_importer():
    @register_importer("fake")
    class Fake(Importer):
        """A format read by a package that is not installed."""
        suffixes = (".fake",)
        extra = "fakeextra"

        def read(self, path, **options):
            self.need(MISSING)
            raise AssertionError("unreachable: the package does not exist")

    yield Fake
    IMPORTERS.unregister("fake")


def test_missing_extra_is_a_one_line_error(tmp_path, capfd, fake_importer):
    expected = "fake import needs the 'fakeextra' extra: pip install 'schedkit[fakeextra]'"
    with pytest.raises(SchedkitError) as info:
        convert("fake", tmp_path / "model.fake")
    assert str(info.value) == expected
    out = tmp_path / "model.json"
    assert main(["convert", "fake", str(tmp_path / "model.fake"), "-o", str(out)]) == 1
    captured = capfd.readouterr()
    assert captured.err.splitlines() == [f"schedkit: error: {expected}"]
    assert "Traceback" not in captured.err + captured.out
    assert not out.exists()


def test_convert_help_lists_the_importers(capsys, fake_importer):
    with pytest.raises(SystemExit) as info:
        main(["convert", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    listing = " ".join(text[text.index("importers:"):].split())  # undo the wrapping
    assert "jssp Standard job-shop text" in listing
    assert "fake A format read by a package that is not installed. (.fake; needs schedkit[fakeextra])" \
        in listing


def test_need_without_extra_and_with_a_broken_package(tmp_path, monkeypatch):
    with pytest.raises(SchedkitError, match=f"demo import needs the package '{MISSING}'"):
        need(MISSING, importer="demo")
    (tmp_path / "schedkit_test_broken.py").write_text(f"import {MISSING}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SchedkitError, match="package 'schedkit_test_broken' failed to import"):
        need("schedkit_test_broken", importer="demo", extra="demo")


def test_converted_data_is_validated_before_anything_is_written(tmp_path, capfd):
    @register_importer("broken")
    class Broken(Importer):
        """Returns a task on a device that does not exist."""

        def read(self, path, **options):
            return {"format": "schedkit/v1", "devices": [{"name": "d"}],
                    "tasks": [{"name": "t", "durations": {"e": 1}}]}

    try:
        out = tmp_path / "p.json"
        assert main(["convert", "broken", str(tmp_path / "in.x"), "-o", str(out)]) == 1
        line = capfd.readouterr().err.strip()
        assert line.startswith("schedkit: error: ") and "\n" not in line
        assert "unknown device 'e'" in line and "converted by 'broken'" in line
        assert not out.exists()
    finally:
        IMPORTERS.unregister("broken")


def test_jssp_takes_no_options(tmp_path):
    src = tmp_path / "toy.txt"
    src.write_text(JSSP_TEXT)
    with pytest.raises(SchedkitError, match="jssp import takes no option 'devices'"):
        convert("jssp", src, devices="gpu")


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_jssp_round_trip_through_convert(tmp_path, capsys, suffix):
    src = tmp_path / "toy.txt"
    src.write_text(JSSP_TEXT)
    out = tmp_path / f"toy{suffix}"
    assert main(["convert", "jssp", str(src), "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: 4 tasks on 2 devices\n"
    expected = parse_jssp(JSSP_TEXT, name="toy")
    assert convert("jssp", src) == expected
    assert Problem.load(out).spec == Problem.from_dict(expected).spec
    assert not list(tmp_path.glob(".*.tmp"))


def test_convert_to_an_unknown_suffix_writes_nothing(tmp_path, capfd):
    src = tmp_path / "toy.txt"
    src.write_text(JSSP_TEXT)
    out = tmp_path / "toy.txt.out"
    assert main(["convert", "jssp", str(src), "-o", str(out)]) == 1
    assert "unknown file type '.out' (use .json, .yaml, .yml)" in capfd.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("text, words", [
    ("2 3\n0 3 1 2 2 1\n1 4 0 1\n", "job 1: 2 operations, expected 3 (one per machine)"),
    ("2 2\n0 3 1 2 0 1\n1 4 0 1\n", "job 0: 3 operations, expected 2 (one per machine)"),
    ("1 3\n0 3\n", "job 0: 1 operation, expected 3 (one per machine)"),
    ("2 1\n0 3 0 4\n0 1\n", "job 0: 2 operations, expected 1 (one per machine)"),
    ("2 2\n0 3 0 2\n1 4 0 1\n", "job 0: machine 0 visited twice (one operation per machine)"),
    ("1 3\n0 3 1 2 1 1\n", "job 0: machine 1 visited twice (one operation per machine)"),
])
def test_jssp_lines_with_the_wrong_number_of_operations_are_refused(tmp_path, capfd, text, words):
    src = tmp_path / "bad.txt"
    src.write_text(text)
    with pytest.raises(SchedkitError, match=re.escape(words)):
        convert("jssp", src)
    out = tmp_path / "p.json"
    assert main(["convert", "jssp", str(src), "-o", str(out)]) == 1
    err = capfd.readouterr().err
    assert err == f"schedkit: error: {src}: {words}\n" and not out.exists()
