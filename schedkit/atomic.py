"""Atomic file output: a reader never sees a half-written file, and nothing is lost.

:func:`check_output` refuses, before any work, an output path that cannot be written or
that would overwrite an input; :func:`write_text_atomic` and :func:`atomic_output` write
through a temporary file in the target folder and rename it, leaving nothing behind
when anything fails.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from schedkit.errors import SchedkitError


def check_output(path: str | Path, inputs: Iterable[str | Path | None] = (),
                 suffixes: Iterable[str] = ()) -> None:
    """Refuse an output path before any work is done, with a one-line error naming it.

    Refused: a path that is one of ``inputs`` (same file, however written), an existing
    folder, a missing parent folder, a folder or file without write permission, a folder
    where no file can be made, and a suffix outside ``suffixes`` (when given).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_output(folder / "out.json", inputs=["examples/tiny.yaml"])
    >>> check_output("examples/tiny.yaml", inputs=["examples/../examples/tiny.yaml"])
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: examples/tiny.yaml: the output would overwrite an input file
    >>> check_output(folder / "missing" / "out.json")
    Traceback (most recent call last):
    ...
    schedkit.errors.SchedkitError: .../missing/out.json: no such folder: .../missing
    """
    path = Path(path)
    text = str(path)
    if text in ("", "-"):
        raise SchedkitError(f"{text or 'output'}: not a file name")
    for given in inputs:
        if given is not None and Path(given).exists() and path.exists() and path.samefile(given):
            raise SchedkitError(f"{text}: the output would overwrite an input file")
    if path.is_dir():
        raise SchedkitError(f"{text}: is a folder, not a file")
    allowed = [s.lower() for s in suffixes]
    if allowed and path.suffix.lower() not in allowed:
        raise SchedkitError(f"{text}: unknown file type '{path.suffix}' (use {', '.join(allowed)})")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise SchedkitError(f"{text}: no such folder: {folder}")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise SchedkitError(f"{text}: permission denied")
    with _named(path):   # (a folder that takes no new file though access() says it may: /proc, a read-only mount)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)


def _default_mode() -> int:
    # mkstemp makes private (0600) files; a result file gets the usual umask-based mode.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_text_atomic(target, "done\\n")
    >>> target.read_text()
    'done\\n'
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    with _named(path):
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
            os.chmod(tmp, _default_mode())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def _named(path: Path) -> Iterator[None]:
    """Turns an :class:`OSError` of writing ``path`` (or its temporary file) into a one-line
    :class:`~schedkit.errors.SchedkitError` that names ``path``, the file the user asked for:
    a folder that takes no new file (``/proc``), a full disk, a read-only file system."""
    try:
        yield
    except OSError as exc:
        raise SchedkitError(f"{path}: cannot write: {exc.strerror or exc}") from None


def atomic_output(path: str | Path):
    """Context manager yielding a temporary path; renamed to ``path`` only on success.

    For writers (such as Pyomo's LP writer) that want a file name of their own.
    """
    return _AtomicPath(Path(path))


class _AtomicPath:
    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> Path:
        folder = self.path.parent if str(self.path.parent) else Path(".")
        with _named(self.path):
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{self.path.stem}-partial-", suffix=self.path.suffix)
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        with _named(self.path):
            try:
                if exc_type is None:
                    os.chmod(self.tmp, _default_mode())
                    os.replace(self.tmp, self.path)
                elif issubclass(exc_type, OSError):   # (the writer's own write failed: a full disk)
                    raise exc
            finally:
                # A failed write or rename (the target is a folder, say) leaves no partial file.
                if self.tmp.exists():
                    self.tmp.unlink()
