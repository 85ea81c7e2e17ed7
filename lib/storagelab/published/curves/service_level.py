"""The service-level curve: the share of IOs that complete in under ``t``, fitted as a distribution.

Studies such as the Virtual SAN reference architecture publish a handful of points of the latency
distribution function: "x % of IOs completed in 1 ms or less", at 1, 2, 5, 10 and 30 ms. A two-parameter
family is fitted through them on its linearising scale, by ordinary least squares (statsmodels):

- lognormal: ``probit(F(t)) = (ln t - mu) / sigma``, regressing ``probit(p)`` on ``ln t``;
- Weibull:   ``ln(-ln(1 - F(t))) = k ln t - k ln lambda``, regressing that on ``ln t``.

Points at 0 % or 100 % have no finite transform and are reported but not used. Intervals on ``F(t)``
are the regression's confidence band mapped back through the inverse transform. Times are in ms,
shares in % (as published).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import statsmodels.api as sm
from scipy import special, stats

from storagelab.published.curves.base import (
    CurveFit,
    InsufficientData,
    Parameter,
    few_points_note,
    paired_points,
    residual_frame,
    t_quantile,
)

Distribution = Literal["lognormal", "weibull"]

_FORWARD = {
    "lognormal": lambda p: stats.norm.ppf(p),
    "weibull": lambda p: np.log(-np.log1p(-p)),
}
_INVERSE = {
    "lognormal": lambda z: stats.norm.cdf(z),
    "weibull": lambda z: -np.expm1(-np.exp(z)),
}


def fit_service_level(
    threshold_ms: list[float] | np.ndarray,
    share_pct: list[float] | np.ndarray,
    *,
    name: str,
    distribution: Distribution = "lognormal",
    row_ids: list[str] | None = None,
    confidence: float = 0.95,
) -> CurveFit:
    """Fit ``distribution`` to published (threshold in ms, % of IOs under it) points."""
    if distribution not in _FORWARD:
        raise ValueError(f"distribution must be one of {sorted(_FORWARD)}, got {distribution!r}")
    t, p_obs = paired_points(threshold_ms, share_pct, "threshold_ms", "share_pct")
    if np.any(t <= 0) or np.any((p_obs < 0) | (p_obs > 100)):
        raise ValueError("thresholds must be > 0 ms and shares within 0-100 %")
    ids = row_ids or [f"point-{i}" for i in range(len(t))]
    used = (p_obs > 0) & (p_obs < 100)
    n, p = int(used.sum()), 2
    if n < p or len(np.unique(t[used])) < p:
        raise InsufficientData(f"{name}: {few_points_note(min(n, len(np.unique(t[used]))), p)[0]}")
    fwd, inv = _FORWARD[distribution], _INVERSE[distribution]
    X = sm.add_constant(np.log(t[used]))
    ols = sm.OLS(fwd(p_obs[used] / 100.0), X).fit()
    dof = round(ols.df_resid)
    a, b = ols.params
    tq = t_quantile(confidence, dof)
    cov = ols.cov_params() if dof > 0 else np.full((2, 2), np.nan)

    def predict(x: np.ndarray, level: float, interval: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        Xn = sm.add_constant(np.log(x), has_constant="add")
        mean = Xn @ ols.params
        var = np.einsum("ij,jk,ik->i", Xn, cov, Xn) + (ols.scale if interval == "prediction" else 0.0)
        q = t_quantile(level, dof)
        sd = np.sqrt(var)
        return 100 * inv(mean), 100 * inv(mean - q * sd), 100 * inv(mean + q * sd)

    # Parameters are smooth functions of the regression's (a, b): intervals by the delta method on the
    # log scale, so they stay positive.
    def interval(value: float, grad_log: np.ndarray) -> tuple[float, float]:
        if dof <= 0:
            return (np.nan, np.nan)
        se = float(np.sqrt(grad_log @ cov @ grad_log))
        return (value * np.exp(-tq * se), value * np.exp(tq * se))

    if distribution == "lognormal":
        sigma, mu = 1.0 / b, -a / b
        median, mean = np.exp(mu), np.exp(mu + sigma**2 / 2)
        g_mu = np.array([-1.0 / b, a / b**2])  # d mu / d(a, b)
        g_sigma_log = np.array([0.0, -1.0 / b])  # d ln sigma / d(a, b)
        g_mean = g_mu + sigma**2 * g_sigma_log  # d ln mean = d mu + sigma^2 d ln sigma
        params = [
            Parameter("median", median, *interval(median, g_mu), "ms", "median latency exp(mu)"),
            Parameter("sigma", sigma, *interval(sigma, g_sigma_log), "1", "log-scale spread"),
            Parameter("mean", mean, *interval(mean, g_mean), "ms", "mean latency exp(mu + sigma^2/2)"),
        ]
        form = "lognormal latency: probit(share) linear in ln t (OLS)"
    else:
        k, lam = b, np.exp(-a / b)
        median = lam * np.log(2) ** (1 / k)
        mean = lam * float(special.gamma(1 + 1 / k))
        g_lam = np.array([-1.0 / b, a / b**2])  # d ln lambda / d(a, b)
        g_k_log = np.array([0.0, 1.0 / b])
        g_median = g_lam + np.array([0.0, -np.log(np.log(2)) / b**2])
        g_mean = g_lam + np.array([0.0, -float(special.digamma(1 + 1 / k)) / k**2])  # d ln Gamma(1+1/k)
        params = [
            Parameter("median", median, *interval(median, g_median), "ms", "median latency lambda ln2^(1/k)"),
            Parameter("shape_k", k, *interval(k, g_k_log), "1", "Weibull shape"),
            Parameter("scale_lambda", lam, *interval(lam, g_lam), "ms", "Weibull scale"),
            Parameter("mean", mean, *interval(mean, g_mean), "ms", "mean latency lambda Gamma(1 + 1/k)"),
        ]
        form = "Weibull latency: ln(-ln(1-share)) linear in ln t (OLS)"
    fitted = predict(t, confidence, "confidence")[0]
    notes = few_points_note(n, p)
    if (~used).any():
        notes.append(f"{int((~used).sum())} point(s) at 0 or 100 % reported but not used")
    return CurveFit(
        name=name,
        form=form,
        x_name="ms",
        y_name="share_under_threshold",
        y_unit="%",
        parameters=params,
        points=residual_frame(t, p_obs, fitted, used, ids),
        confidence=confidence,
        dof=dof,
        n_params=p,
        _predict=predict,
        notes=notes,
    )
