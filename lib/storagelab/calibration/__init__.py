"""The calibration engine: scenarios run against the published points they reproduce, scored as claims.
Where the published and the simulated wings meet; it knows no study (the studies' scenarios and the
calibration of them all are :func:`storagelab.studies.calibrate`).

>>> from storagelab import studies
>>> result = studies.calibrate(study="ds5020", quick=True)   # a CalibrationResult
>>> result.claims(); result.pass_rates(); result.chart()

:func:`run_scenarios` runs any scenarios and scores them; the rules that turn points into claims and
claims into a headline are in :mod:`storagelab.calibration.claims`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import polars as pl

from storagelab.calibration.claims import (
    COLUMNS,
    SCHEMA,
    SENSITIVITY_FACTORS,
    Point,
    Replications,
    Scenario,
    settle_claims,
    tabulate,
)
from storagelab.calibration.results import CalibrationResult

__all__ = [
    "COLUMNS",
    "CalibrationResult",
    "Point",
    "Scenario",
    "run_scenarios",
]  # fmt: skip


def run_scenarios(
    scenarios: Sequence[Scenario],
    fitted: set[str],
    *,
    replications: int,
    sensitivity: bool = True,
    perturbed_replications: int = 2,
    seed: int = 1,
    quick: bool = True,
    confidence: float = 0.95,
    progress: Callable[[str], None] | None = None,
    workers: int | None = 1,
) -> CalibrationResult:
    """The engine of :func:`calibrate`: run each scenario ``replications`` times (seeds ``seed``,
    ``seed + 1``, ...), and with ``sensitivity`` ``perturbed_replications`` times at each capacity
    scale of :data:`~storagelab.calibration.claims.SENSITIVITY_FACTORS`; score the points.

    ``workers``: 1 runs everything here, one replication after another; more (``None``: one per core)
    runs the replications on a local Dask cluster of that many single-threaded processes. Every
    replication is seeded, so the table is the same either way. ``progress`` is called with a line per
    replication as it finishes."""
    factors = (None, *SENSITIVITY_FACTORS) if sensitivity else (None,)
    tasks = [
        (i, f, seed + r)
        for i in range(len(scenarios))
        for f in factors
        for r in range(replications if f is None else perturbed_replications)
    ]
    results = dict(zip(tasks, _run_tasks(scenarios, tasks, quick, workers, progress), strict=True))
    rows = []
    for i, sc in enumerate(scenarios):
        runs = {
            f: Replications.of_runs([v for (j, g, _), v in results.items() if j == i and g == f])
            for f in factors
        }
        main = runs.pop(None)
        rows += tabulate(sc, main, runs, fitted, confidence)
    table = settle_claims(pl.DataFrame(rows, schema=SCHEMA))
    if not sensitivity:
        table = table.with_columns(sensitive=pl.lit(None, pl.Boolean))
    return CalibrationResult(table.select(COLUMNS))


def _task_name(sc: Scenario, scale: float | None, seed: int) -> str:
    return f"{sc.study}: {sc.name}, seed {seed}" + ("" if scale is None else f", capacity x{scale:g}")


def _run_tasks(
    scenarios: Sequence[Scenario],
    tasks: list[tuple[int, float | None, int]],
    quick: bool,
    workers: int | None,
    progress: Callable[[str], None] | None,
) -> list[tuple[dict[str, float], str]]:
    """Each task's ``Replications.one`` result, in the order of ``tasks``."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"workers must be an integer >= 1 (or None: one per core), got {workers!r}")
    total = len(tasks)
    if n == 1 or total <= 1:
        out = []
        for k, (i, f, s) in enumerate(tasks, 1):
            out.append(Replications.one(scenarios[i], s, quick, f))
            if progress is not None:
                progress(f"[{k}/{total}] {_task_name(scenarios[i], f, s)}")
        return out

    from distributed import Client, as_completed

    from storagelab.dask_cluster import local_cluster

    with local_cluster(min(n, total)) as cluster, Client(cluster) as client:
        [remote] = client.scatter([list(scenarios)], broadcast=True)
        futures = {
            client.submit(_one, remote, tasks[k][0], tasks[k][2], quick, tasks[k][1], pure=False): k
            for k in range(total)
        }
        out: dict[int, tuple[dict[str, float], str]] = {}
        for done, fut in enumerate(as_completed(futures), 1):
            k = futures[fut]
            out[k] = fut.result()
            if progress is not None:
                i, f, s = tasks[k]
                progress(f"[{done}/{total}] {_task_name(scenarios[i], f, s)}")
    return [out[k] for k in range(total)]


def _one(
    scenarios: list[Scenario], i: int, seed: int, quick: bool, scale: float | None
) -> tuple[dict[str, float], str]:
    return Replications.one(scenarios[i], seed, quick, scale)
