"""Atomic file output: a reader never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{self.path.stem}-partial-", suffix=self.path.suffix)
        os.close(fd)
        self.tmp = Path(tmp)
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            os.chmod(self.tmp, _default_mode())
            os.replace(self.tmp, self.path)
        elif self.tmp.exists():
            self.tmp.unlink()
