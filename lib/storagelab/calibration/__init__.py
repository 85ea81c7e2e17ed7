"""Calibration of the architecture presets against the published results.

>>> from storagelab import calibration
>>> table = calibration.calibrate(study="ds5020", quick=True)   # one row per published point
>>> calibration.pass_rates(table)                               # share within tolerance, per study and role

Each study module (:mod:`~storagelab.calibration.ds5020`, ...) lists its scenarios and the published
points they reproduce, and names the points its fitted parameters were fitted on (``FITTED_ON``); every
other point is a prediction.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from storagelab.calibration import ds5020, equallogic, nexgen, vsan, xtremio
from storagelab.calibration.base import COLUMNS, Point, Scenario, run_scenarios

#: Calibrated architecture -> its calibration module (``scenarios()`` and ``FITTED_ON``). The EqualLogic
#: points come from the ILIO study (``ilio``), the XtremIO points from the VPLEX study (``vplex``).
STUDIES = {"ds5020": ds5020, "vsan": vsan, "nexgen": nexgen, "equallogic": equallogic, "xtremio": xtremio}

__all__ = ["COLUMNS", "STUDIES", "Point", "Scenario", "calibrate", "fitted_points", "pass_rates", "scenarios"]


def scenarios(study: str | None = None) -> list[Scenario]:
    """The scenarios of one study (or all)."""
    return [sc for name in _studies(study) for sc in STUDIES[name].scenarios()]


def fitted_points(study: str | None = None) -> set[str]:
    """Row ids of the published points that fitted parameters were fitted on."""
    return {row for name in _studies(study) for rows in STUDIES[name].FITTED_ON.values() for row in rows}


def _studies(study: str | None) -> list[str]:
    if study is None:
        return list(STUDIES)
    if study not in STUDIES:
        raise ValueError(f"unknown study {study!r}; calibrated studies: {', '.join(STUDIES)}")
    return [study]


def calibrate(
    study: str | None = None,
    *,
    quick: bool = False,
    replications: int | None = None,
    seed: int = 1,
    confidence: float = 0.95,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Run the calibration scenarios of ``study`` (default: all) and return the table (:data:`COLUMNS`).

    ``quick``: short runs (seconds of simulated time each) and 3 replications by default; otherwise
    longer runs and 5 replications. ``progress`` is called with each scenario's name as it starts.
    """
    if replications is None:
        replications = 3 if quick else 5
    if not isinstance(replications, int) or replications < 2:
        raise ValueError(
            f"replications must be an integer >= 2 (for a confidence interval), got {replications!r}"
        )
    return run_scenarios(
        scenarios(study), fitted_points(study), replications=replications, seed=seed, quick=quick,
        confidence=confidence, progress=progress,
    )  # fmt: skip


def pass_rates(table: pl.DataFrame) -> pl.DataFrame:
    """Per study and role: points simulated, points within tolerance, and the share (%)."""
    return (
        table.filter(pl.col("pass").is_not_null())
        .group_by("study", "role")
        .agg(points=pl.len(), within_tolerance=pl.col("pass").sum())
        .with_columns(share_pct=(100 * pl.col("within_tolerance") / pl.col("points")).round(1))
        .sort("study", "role")
    )
