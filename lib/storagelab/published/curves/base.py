"""The result object every fitted curve returns: parameters with CIs, residuals, predictions.

Modelled on statsmodels' results objects: a fit knows its data, its parameters and their confidence
intervals, its goodness of fit, the residual of every published point, and can predict with intervals.
With as many points as parameters there is no residual variance and so no interval: the result says so
in :attr:`CurveFit.notes` rather than inventing one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy import stats


@dataclass
class Parameter:
    """One fitted parameter: estimate, confidence interval, unit and meaning."""

    name: str
    estimate: float
    lower: float
    upper: float
    unit: str
    meaning: str


@dataclass
class CurveFit:
    """A curve fitted to published points.

    ``points`` has one row per published point: ``x``, ``observed``, ``fitted``, ``residual``
    (fitted − observed), ``relative_residual`` (residual / observed), ``used_in_fit`` and ``row_id``.
    ``predict`` evaluates the curve with pointwise confidence (or prediction) intervals.
    """

    name: str
    form: str
    x_name: str  # what x counts, as a label: "VMs", "tiles", "ms", "IOPS"
    y_name: str
    y_unit: str
    parameters: list[Parameter]
    points: pl.DataFrame
    confidence: float
    dof: int
    n_params: int
    _predict: Callable[[np.ndarray, float, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        repr=False
    )
    notes: list[str] = field(default_factory=list)

    @property
    def n_points(self) -> int:
        """Published points the fit used."""
        return int(self.points["used_in_fit"].sum())

    @property
    def has_intervals(self) -> bool:
        """Whether residual degrees of freedom exist to estimate uncertainty."""
        return self.dof > 0

    @property
    def rmse_relative(self) -> float:
        """Root-mean-square relative residual over the points used in the fit (0.05 = 5 %)."""
        used = self.points.filter(pl.col("used_in_fit"))
        return float(np.sqrt((used["relative_residual"] ** 2).mean()))

    @property
    def max_abs_relative_residual(self) -> float:
        """Largest |relative residual| over every published point, used in the fit or not."""
        return float(self.points["relative_residual"].abs().max())

    def params_frame(self) -> pl.DataFrame:
        """The parameters as a tidy frame: name, estimate, lower, upper, unit, meaning."""
        return pl.DataFrame([vars(p) for p in self.parameters]).with_columns(
            pl.lit(self.name).alias("curve"), pl.lit(self.confidence).alias("confidence")
        )

    def predict(
        self, x: np.ndarray | list[float], confidence: float | None = None, interval: str = "confidence"
    ) -> pl.DataFrame:
        """The curve at ``x`` with a pointwise ``interval`` ('confidence' or 'prediction').

        Columns: ``x``, ``fit``, ``lower``, ``upper``, ``curve``. ``lower``/``upper`` are null when the
        fit has no residual degrees of freedom.
        """
        if interval not in ("confidence", "prediction"):
            raise ValueError(f"interval must be 'confidence' or 'prediction', got {interval!r}")
        xs = np.asarray(x, dtype=float)
        fit, lo, hi = self._predict(xs, confidence or self.confidence, interval)
        if not self.has_intervals:
            lo = hi = np.full_like(fit, np.nan)
        return pl.DataFrame({"x": xs, "fit": fit, "lower": lo, "upper": hi}).with_columns(
            pl.col("lower", "upper").fill_nan(None), curve=pl.lit(self.name)
        )

    def summary(self) -> pl.DataFrame:
        """One row describing the fit: form, points, degrees of freedom, error, and any caveat."""
        return pl.DataFrame(
            {
                "curve": [self.name],
                "form": [self.form],
                "points_used": [self.n_points],
                "parameters": [self.n_params],
                "dof": [self.dof],
                "rmse_relative_pct": [100 * self.rmse_relative],
                "max_abs_residual_pct": [100 * self.max_abs_relative_residual],
                "notes": ["; ".join(self.notes)],
            }
        )


def paired_points(x: object, y: object, x_name: str, y_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Published (x, y) points as two float arrays, refusing anything but two 1-D arrays of equal length."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"{x_name} and {y_name} must be 1-D and of equal length")
    return xs, ys


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t critical value for ``confidence`` with ``dof`` degrees of freedom (nan if none)."""
    return float(stats.t.ppf(0.5 + confidence / 2, dof)) if dof > 0 else float("nan")


def few_points_note(n: int, p: int) -> list[str]:
    """The caveat a fit with few points carries."""
    if n < p:
        return [f"{n} point(s) for {p} parameters: not identifiable, no fit"]
    if n == p:
        return [f"{n} points for {p} parameters: the curve passes through them, no interval can be estimated"]
    if n - p < 3:
        return [f"only {n - p} residual degree(s) of freedom: intervals are wide and rest on the model form"]
    return []


#: Relative size below which a residual is floating-point round-off, not a misfit.
ROUNDOFF = 1e-12


def residual_frame(
    x: np.ndarray, observed: np.ndarray, fitted: np.ndarray, used: np.ndarray, row_ids: list[str]
) -> pl.DataFrame:
    """The per-point residual table every fit reports. A residual within floating-point round-off of the
    observed value (relative :data:`ROUNDOFF`) is reported as 0, so an exact fit (as many points as
    parameters) shows the same residuals on every machine, whatever its BLAS rounds last."""
    residual = np.asarray(fitted, dtype=float) - np.asarray(observed, dtype=float)
    residual = np.where(np.abs(residual) <= ROUNDOFF * np.abs(observed), 0.0, residual)
    return pl.DataFrame(
        {
            "x": x,
            "observed": observed,
            "fitted": fitted,
            "residual": residual,
            "relative_residual": residual / observed,
            "used_in_fit": used,
            "row_id": row_ids,
        }
    )


class InsufficientData(ValueError):
    """Raised when a curve cannot be fitted at all (fewer points than parameters)."""
