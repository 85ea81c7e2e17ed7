"""The local Dask cluster that sweeps, the calibration and the sweep benchmark run on.

One single-threaded worker process per slot, so that each replication has a core to itself and every
run stays deterministic (its seeds, not the scheduling, decide its numbers), and quiet logs. The
cluster's HTTP server (dashboard, health and metrics) listens on a free port: ``distributed`` binds
port 8787 even with ``dashboard_address=None``, so a second cluster (two test processes, or a user's
own Dask dashboard) warned "Port 8787 is already in use" and took another port anyway.

The workers' statistical profiler is off: it samples the running task's stack every 10 ms for the
dashboard's profile page, which these runs never use, and cost a simulation about 6 % of its time in a
worker (an ILIO boot storm, 1.8 M IOs: 1.08 x its time in the plain process with the profiler, 1.02 x
without, four runs each).
"""

from __future__ import annotations

import logging

import dask
from distributed import LocalCluster


def local_cluster(n_workers: int) -> LocalCluster:
    """A :class:`distributed.LocalCluster` of ``n_workers`` single-threaded worker processes."""
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers must be an integer >= 1, got {n_workers!r}")
    # the nannies hand the configuration in force when they start to their worker processes
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0",
            silence_logs=logging.ERROR,
        )  # fmt: skip


__all__ = ["local_cluster"]
