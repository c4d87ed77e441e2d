"""A local Dask cluster stopped while it starts is closed by the executor, never left to
distributed's exit hook (which printed a traceback), and a failure is one line."""

import pytest

distributed = pytest.importorskip("distributed")

from distributed.deploy.spec import SpecCluster  # noqa: E402

from schedkit.reductions.dask import DaskExecutor  # noqa: E402
from schedkit.errors import SchedkitError  # noqa: E402


@pytest.mark.parametrize("fault, raised", [(KeyboardInterrupt, KeyboardInterrupt),
                                           (RuntimeError("Nanny failed to start"), SchedkitError)])
def test_a_cluster_stopped_while_it_starts_is_closed_here(monkeypatch, fault, raised):
    before = set(SpecCluster._instances)

    def client(*args, **kwargs):  # the cluster has started; its client never does
        raise fault

    monkeypatch.setattr(distributed, "Client", client)
    with pytest.raises(raised) as caught:
        DaskExecutor(workers=1, processes=False, label="dask:1")
    assert set(SpecCluster._instances) - before == set()   # nothing left for the exit hook
    if raised is SchedkitError:
        assert str(caught.value) == ("executor 'dask:1': the local Dask cluster did not start "
                                     "(RuntimeError: Nanny failed to start)")
