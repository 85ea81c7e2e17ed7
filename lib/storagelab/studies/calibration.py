"""The calibration of the studies' presets: every study's scenarios run by the calibration engine
(:func:`storagelab.calibration.run_scenarios`) and scored against the published points.

>>> from storagelab import studies
>>> result = studies.calibrate(study="ds5020", quick=True)   # a CalibrationResult
>>> print(result.summary())          # the headline, counts per study, insensitive and derived claims
>>> result.to_frame()                # one row per published point, nothing dropped

The points the studies' fitted parameters were fitted on are read from the parameters themselves
(``Param.fitted_on``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from storagelab.calibration import CalibrationResult, Scenario, run_scenarios
from storagelab.studies.registry import STUDIES

__all__ = ["calibrate", "fitted_points", "scenarios", "study_ids"]


def study_ids() -> tuple[str, ...]:
    """The calibrated studies (``datasets/`` ids)."""
    return tuple(STUDIES)


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
    return [sc for name in _studies(study) for sc in STUDIES[name].scenarios()]


def fitted_points(study: str | Sequence[str] | None = None) -> set[str]:
    """Row ids of the published points that fitted parameters (of the study's presets and workloads)
    were fitted on."""
    return {row for name in _studies(study) for rows in STUDIES[name].fitted_on().values() for row in rows}


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
    uncertainty: int = 0,
) -> CalibrationResult:
    """Run the calibration scenarios of ``study`` (a study id, several, or all by default) and return
    the result.

    ``quick``: short runs (seconds of simulated time each) and 3 replications by default; otherwise
    longer runs and 5 replications (seeds ``seed``, ``seed + 1``, ...). With ``sensitivity`` every
    scenario runs again with the presets' capacity-setting parameters scaled by 0.5 and by 2, with
    ``perturbed_replications`` replications (the first seeds of the main run; by default 1 with
    ``quick``, else 2); without it ``sensitive`` is left empty. ``progress`` is called with a line per
    replication as it finishes. ``workers``: 1 (default) runs here; more, or ``None`` for one per core,
    runs the replications in parallel on a local Dask cluster, with the same result. ``uncertainty``:
    with ``n > 0``, each scenario also runs over ``n`` draws of the uncertain parameters its presets read,
    and every point gets its predictive median, 80 % and 95 % intervals, drivers and leave-one-out flag
    (:mod:`storagelab.calibration.propagation`); ``n`` a power of two keeps the Sobol' design balanced.
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
        progress=progress, workers=workers, uncertainty=uncertainty,
    )  # fmt: skip
