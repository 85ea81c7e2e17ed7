"""A measured system end to end, from its dataset folder: the rows and their provenance, the fit, the
check on the held-back rows, and the fitted model as a candidate in :func:`storagelab.analysis.comparison.compare`.

>>> from storagelab.measured.system import MeasuredSystem
>>> system = MeasuredSystem.load("measurements/vda-ext4")
>>> fitted = system.fit()                 # fitted.parameters(): values, intervals, rows fitted on
>>> table = system.check(fitted)          # measured beside predicted, per held-back point
>>> later = MeasuredSystem.load("measurements/vda-ext4-validation")
>>> blind = system.check(fitted, later.rows)  # points measured after the fit was frozen (a validation plan)
>>> compare(mix, [system.candidate(fitted), studies.candidate("XtremIO", "XtremIO, 1 X-Brick(s)")])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from storagelab.analysis.comparison import Candidate
from storagelab.measured.check import predict, share_within
from storagelab.measured.model import MeasuredFit, fit
from storagelab.measured.run import PROVENANCE, load_measurements
from storagelab.measured.spread import load_runs, with_run_spread
from storagelab.measured.spread import spread as measure_spread


@dataclass
class MeasuredSystem:
    """A dataset folder's ``rows`` (the tidy dataset) and ``provenance``, named ``name``."""

    name: str
    folder: Path
    rows: pl.DataFrame
    provenance: dict[str, Any]

    @classmethod
    def load(cls, folder: str | Path, name: str | None = None) -> MeasuredSystem:
        """The measurements in ``folder`` (``measurements.csv`` and ``provenance.json``)."""
        folder = Path(folder)
        rows = load_measurements(folder)
        prov_path = folder / PROVENANCE
        provenance = json.loads(prov_path.read_text()) if prov_path.is_file() else {}
        return cls(name or folder.name, folder, rows, provenance)

    def describe(self) -> str:
        """One line: the device, file system, fio and kernel the rows were measured with."""
        dev = self.provenance.get("device", {})
        what = " ".join(str(dev.get(k, "")) for k in ("disk", "driver", "bus") if dev.get(k))
        fs = f"{dev.get('fs_type', '?')} on {dev.get('mount_point', '?')}" if dev else "unknown"
        return (
            f"{self.name}: device {what or 'unknown'}, file system {fs}, {self.provenance.get('fio_version', '?')}, "
            f"{self.provenance.get('kernel', '?')}, measured {self.provenance.get('started_utc', '?')}"
        )

    def fit(self, confidence: float = 0.95, *, spread: bool = True) -> MeasuredFit:
        """The model fitted on the fit subset (:func:`storagelab.measured.model.fit`); with ``spread`` and
        more than one run of a job in the folder's ``json/``, its run-to-run spread too
        (:func:`storagelab.measured.spread.spread`: parameter intervals over the runs, and every check's
        80 % predictive intervals)."""
        fitted = fit(self.rows, self.name, confidence)
        if spread and (self.folder / "json").is_dir():
            runs = load_runs(self.folder)
            if runs.group_by("job").agg(pl.col("run").n_unique())["run"].max() > 1:
                fitted.spread = measure_spread(fitted, runs)
                fitted.notes += fitted.spread.notes
        return fitted

    def check(self, fitted: MeasuredFit, rows: pl.DataFrame | None = None, *, seed: int = 1) -> pl.DataFrame:
        """Measured beside predicted (:func:`storagelab.measured.check.predict`): every held-back point, or
        with ``rows`` those rows instead, such as another folder's measurements of the same system (a
        validation plan run after the fit was frozen). The fit is not touched. A job of ``rows`` that the
        model was fitted on is refused: it would not be a check."""
        if rows is None:
            return predict(fitted, fitted.held_back, seed=seed)
        fitted_jobs = sorted(set(rows["job"]) & set(fitted.rows["job"]))
        if fitted_jobs:
            raise ValueError(
                f"{len(fitted_jobs)} job(s) to check are jobs the model was fitted on: {fitted_jobs[:5]}"
            )
        return predict(fitted, rows, seed=seed)

    @staticmethod
    def within(table: pl.DataFrame) -> dict[str, float]:
        """Points within tolerance and their share (:func:`storagelab.measured.check.share_within`)."""
        return share_within(table)

    def candidate(self, fitted: MeasuredFit, label: str | None = None) -> Candidate:
        """The fitted model as a :class:`Candidate` (one volume: every workload class goes to it). Where the
        fit has its run-to-run spread, each parameter carries it as its ``uncertainty``
        (:func:`storagelab.measured.spread.with_run_spread`), so that ``compare(..., uncertainty=n)`` draws
        the measured system's parameters beside the presets' on the same design."""
        drawn = with_run_spread(fitted)
        return Candidate(label or f"{self.name} (fitted)", preset=fitted.name, build=drawn.build)
