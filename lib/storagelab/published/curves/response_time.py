"""Response time against offered load, fitted with the open single-queue law ``R = S / (1 - X / Xsat)``.

For an open queue whose utilisation grows in proportion to throughput ``X``, the mean response time
rises from the no-load service time ``S`` towards an asymptote at the saturation throughput ``Xsat``
(exact for M/M/1 with ``Xsat = 1/S``; here ``S`` and ``Xsat`` are separate, as a device behind a cache
or an array of drives has more than one server). The law is linear in reciprocal form,
``1/R = 1/S - X / (S Xsat)``, and is fitted by ordinary least squares (statsmodels) on ``1/R``.
Intervals for ``S`` and ``Xsat`` are delta-method intervals on the log scale; the band on ``R`` maps
the regression's confidence band back through ``1/(.)``.
"""

from __future__ import annotations

import numpy as np
import statsmodels.api as sm

from storagelab.published.curves.base import (
    CurveFit,
    InsufficientData,
    Parameter,
    few_points_note,
    paired_points,
    residual_frame,
    t_quantile,
)


def fit_response_time(
    throughput: list[float] | np.ndarray,
    response_time: list[float] | np.ndarray,
    *,
    name: str,
    throughput_unit: str = "IOPS",
    time_unit: str = "ms",
    row_ids: list[str] | None = None,
    confidence: float = 0.95,
) -> CurveFit:
    """Fit ``R = S / (1 - X/Xsat)`` to published (throughput, mean response time) points."""
    x, r = paired_points(throughput, response_time, "throughput", "response_time")
    if np.any(x < 0) or np.any(r <= 0):
        raise ValueError("throughputs must be >= 0 and response times > 0")
    n, p = len(x), 2
    ids = row_ids or [f"point-{i}" for i in range(n)]
    if n < p or len(np.unique(x)) < p:
        raise InsufficientData(f"{name}: {few_points_note(min(n, len(np.unique(x))), p)[0]}")
    X = sm.add_constant(x)
    ols = sm.OLS(1.0 / r, X).fit()
    c0, c1 = ols.params
    dof = round(ols.df_resid)
    cov = ols.cov_params() if dof > 0 else np.full((2, 2), np.nan)
    tq = t_quantile(confidence, dof)

    def interval(value: float, grad_log: np.ndarray) -> tuple[float, float]:
        if dof <= 0 or not np.isfinite(value):
            return (np.nan, np.nan)
        se = float(np.sqrt(grad_log @ cov @ grad_log))
        return (value * np.exp(-tq * se), value * np.exp(tq * se))

    def predict(xs: np.ndarray, level: float, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        Xn = sm.add_constant(xs, has_constant="add")
        mean = Xn @ ols.params
        var = np.einsum("ij,jk,ik->i", Xn, cov, Xn) + (ols.scale if kind == "prediction" else 0.0)
        q = t_quantile(level, dof)
        lo_inv, hi_inv = mean - q * np.sqrt(var), mean + q * np.sqrt(var)
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(mean > 0, 1.0 / mean, np.inf)
            upper = np.where(lo_inv > 0, 1.0 / lo_inv, np.inf)  # past saturation the band is unbounded
            lower = np.where(hi_inv > 0, 1.0 / hi_inv, np.nan)
        return fit, lower, upper

    s = 1.0 / c0
    notes = few_points_note(n, p)
    if c1 < 0:
        xsat = -c0 / c1
        xsat_ci = interval(xsat, np.array([1.0 / c0, -1.0 / c1]))
    else:
        xsat, xsat_ci = np.inf, (np.nan, np.nan)
        notes.append("response time does not rise with load in these points: no saturation estimated")
    params = [
        Parameter(
            "service_time",
            s,
            *interval(s, np.array([-1.0 / c0, 0.0])),
            time_unit,
            "response time at vanishing load S",
        ),
        Parameter(
            "saturation_throughput",
            xsat,
            *xsat_ci,
            throughput_unit,
            "throughput at which response time diverges Xsat",
        ),
    ]
    fitted = 1.0 / (X @ ols.params)
    return CurveFit(
        name=name,
        form="open single-queue law R = S / (1 - X/Xsat), OLS on 1/R",
        x_name=throughput_unit,
        y_name="response_time",
        y_unit=time_unit,
        parameters=params,
        points=residual_frame(x, r, fitted, np.ones(n, dtype=bool), ids),
        confidence=confidence,
        dof=dof,
        n_params=p,
        _predict=predict,
        notes=notes,
    )
