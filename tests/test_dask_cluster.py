"""The local Dask cluster: quiet when another cluster (or anything else) holds Dask's default port."""

from __future__ import annotations

import socket
import warnings

import pytest
from distributed import Client

from storagelab.dask_cluster import local_cluster


def test_a_cluster_starts_without_a_port_warning_when_8787_is_taken():
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind(("0.0.0.0", 8787))
        holder.listen(1)
    except OSError:
        holder.close()
        holder = None  # something else holds 8787 already: the case under test anyway
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with local_cluster(1) as cluster, Client(cluster) as client:
                assert client.submit(lambda x: x + 1, 1).result() == 2
                assert ":8787" not in cluster.dashboard_link
        assert not [w for w in seen if "already in use" in str(w.message)]
    finally:
        if holder is not None:
            holder.close()


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_worker_count_is_checked(n):
    with pytest.raises(ValueError, match="n_workers must be an integer >= 1"):
        local_cluster(n)


def test_the_workers_run_without_the_statistical_profiler_and_the_caller_keeps_its_configuration():
    """The profiler samples each task's stack every 10 ms for a dashboard page no run uses (about 6 % of
    a simulation's time): off in the workers, and the calling process's configuration is as it was."""
    import dask

    before = dask.config.get("distributed.worker.profile.enabled")
    with local_cluster(2) as cluster, Client(cluster) as client:
        enabled = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
        client.gather([client.submit(_busy, 0.5, pure=False) for _ in range(2)])
        profiles = client.run(lambda dask_worker: len(dask_worker.profile_recent["children"]))
    assert list(enabled.values()) == [False, False]
    assert set(profiles.values()) == {0}
    assert dask.config.get("distributed.worker.profile.enabled") == before


def _busy(seconds: float) -> int:
    """Python work for ``seconds`` (what the profiler, when on, samples)."""
    import time

    end, n = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        n += 1
    return n
