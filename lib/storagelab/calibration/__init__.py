"""Calibration of the architecture presets against the published results: where the published and the
simulated wings meet.

>>> from storagelab import calibration
>>> result = calibration.calibrate(study="ds5020", quick=True)   # a CalibrationResult
>>> print(result.summary())          # the headline, counts per study, insensitive and derived claims
>>> result.to_frame()                # one row per published point, nothing dropped
>>> result.claims(); result.pass_rates(); result.chart()

Each study's home (:mod:`storagelab.studies`) lists its scenarios and the published points they
reproduce; the points its fitted parameters were fitted on are read from the parameters themselves
(``Param.fitted_on``). The rules that turn points into claims and claims into a headline are in
:mod:`storagelab.calibration.claims`.
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
    interval,
    settle_claims,
    tabulate,
)
from storagelab.calibration.results import CalibrationResult

__all__ = [
    "COLUMNS",
    "CalibrationResult",
    "Point",
    "Scenario",
    "calibrate",
    "fitted_points",
    "interval",
    "run_scenarios",
    "scenarios",
    "study_ids",
]  # fmt: skip


def study_ids() -> tuple[str, ...]:
    """The calibrated studies (``datasets/`` ids)."""
    from storagelab import studies

    return tuple(studies.STUDIES)


def _studies(study: str | Sequence[str] | None) -> list[str]:
    ids = study_ids()
    if study is None:
        return list(ids)
    wanted = [study] if isinstance(study, str) else list(study)
    unknown = [s for s in wanted if s not in ids]
    if unknown or not wanted:
        raise ValueError(f"unknown study {unknown or wanted!r}; calibrated studies: {', '.join(ids)}")
    return [s for s in ids if s in wanted]


def scenarios(study: str | Sequence[str] | None = None) -> list[Scenario]:
    """The scenarios of one study (or all)."""
    from storagelab import studies

    return [sc for name in _studies(study) for sc in studies.STUDIES[name].scenarios()]


def fitted_points(study: str | Sequence[str] | None = None) -> set[str]:
    """Row ids of the published points that fitted parameters (of the study's presets and workloads)
    were fitted on."""
    from storagelab import studies

    return {row for name in _studies(study) for rows in studies.STUDIES[name].fitted_on().values() for row in rows}


def calibrate(
    study: str | Sequence[str] | None = None,
    *,
    quick: bool = False,
    replications: int | None = None,
    sensitivity: bool = True,
    perturbed_replications: int | None = None,
    seed: int = 1,
    confidence: float = 0.95,
    progress: Callable[[str], None] | None = None,
    workers: int | None = 1,
) -> CalibrationResult:
    """Run the calibration scenarios of ``study`` (a study id, several, or all by default) and return
    the result.

    ``quick``: short runs (seconds of simulated time each) and 3 replications by default; otherwise
    longer runs and 5 replications (seeds ``seed``, ``seed + 1``, ...). With ``sensitivity`` every
    scenario runs again with the presets' capacity-setting parameters scaled by 0.5 and by 2, with
    ``perturbed_replications`` replications (the first seeds of the main run; by default 1 with
    ``quick``, else 2); without it ``sensitive`` is left empty. ``progress`` is called with a line per
    replication as it finishes. ``workers``: 1 (default) runs here; more, or ``None`` for one per core,
    runs the replications in parallel on a local Dask cluster, with the same result.
    """
    if replications is None:
        replications = 3 if quick else 5
    if not isinstance(replications, int) or replications < 2:
        raise ValueError(
            f"replications must be an integer >= 2 (for a confidence interval), got {replications!r}"
        )
    if perturbed_replications is None:
        perturbed_replications = 1 if quick else 2
    if not isinstance(perturbed_replications, int) or not 1 <= perturbed_replications <= replications:
        raise ValueError(
            f"perturbed_replications must be an integer from 1 to replications ({replications}), "
            f"got {perturbed_replications!r}"
        )
    return run_scenarios(
        scenarios(study), fitted_points(study), replications=replications, sensitivity=sensitivity,
        perturbed_replications=perturbed_replications, seed=seed, quick=quick, confidence=confidence,
        progress=progress, workers=workers,
    )  # fmt: skip


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
        runs = {f: Replications.of_runs([v for (j, g, _), v in results.items() if j == i and g == f]) for f in factors}
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
            client.submit(_one, remote, tasks[k][0], tasks[k][2], quick, tasks[k][1], pure=False): k for k in range(total)
        }
        out: dict[int, tuple[dict[str, float], str]] = {}
        for done, fut in enumerate(as_completed(futures), 1):
            k = futures[fut]
            out[k] = fut.result()
            if progress is not None:
                i, f, s = tasks[k]
                progress(f"[{done}/{total}] {_task_name(scenarios[i], f, s)}")
    return [out[k] for k in range(total)]


def _one(scenarios: list[Scenario], i: int, seed: int, quick: bool, scale: float | None) -> tuple[dict[str, float], str]:
    return Replications.one(scenarios[i], seed, quick, scale)

