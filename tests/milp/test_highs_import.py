"""Loading highspy: a signal while its core initialises is the interrupt, not a broken install."""

import builtins
import signal

import pytest

from schedkit import interrupt
from schedkit.milp.solvers import highs


@pytest.fixture
def failing_highspy(monkeypatch):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "highspy":
            raise ImportError("initialization failed")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    yield
    interrupt.clear()


def test_an_interrupted_import_raises_the_interrupt(failing_highspy):
    interrupt._record(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        highs._highspy()


def test_a_broken_install_stays_an_import_error(failing_highspy):
    interrupt.clear()
    with pytest.raises(ImportError, match="initialization failed"):
        highs._highspy()


def test_the_real_module_loads():
    assert highs._highspy().Highs is not None
