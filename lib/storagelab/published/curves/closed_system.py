"""Throughput of a closed system against its population (VMs, tiles), fitted by exact MVA.

The form is the exact Mean Value Analysis of the simplest closed network that has the two limits every
closed system obeys: ``N`` customers (QD1 workers: one outstanding IO each, no think time) cycle through
one queueing station of service demand ``D`` seconds (the bottleneck) and a pure delay of ``Z`` seconds
(everything that does not queue: network, software path, idle devices). For that network

    R(n) = D (1 + Q(n-1)),   X(n) = n / (Z + R(n)),   Q(n) = X(n) R(n),   Q(0) = 0,

and the throughput respects both asymptotic bounds: ``X(N) <= N / (D + Z)`` (a QD1 worker cannot exceed
1/latency, the latency being at least ``D + Z``) and ``X(N) <= 1 / D`` (the bottleneck's capacity).

``D`` and ``Z`` are fitted by nonlinear least squares (scipy) on log throughput, i.e. on relative
errors; intervals are Wald intervals from the Jacobian with Student-t quantiles (delta method for
predictions). Published IOPS are in IO/s, so ``D`` and ``Z`` come out in seconds per IO.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from storagelab.published.curves.base import (
    CurveFit,
    InsufficientData,
    Parameter,
    few_points_note,
    paired_points,
    residual_frame,
    t_quantile,
)


def mva_throughput(population: np.ndarray, demand: float, delay: float) -> np.ndarray:
    """Exact MVA throughput (1/s) of the one-queue-plus-delay closed network at each population.

    Non-integer populations are interpolated linearly between the neighbouring integers.
    """
    pop = np.asarray(population, dtype=float)
    n_max = int(np.ceil(pop.max())) if pop.size else 0
    xs = np.zeros(n_max + 1)
    q = 0.0
    for n in range(1, n_max + 1):
        r = demand * (1.0 + q)
        xs[n] = n / (delay + r)
        q = xs[n] * r
    return np.interp(pop, np.arange(n_max + 1), xs)


def _log_model(theta: np.ndarray, pop: np.ndarray) -> np.ndarray:
    d, z = np.exp(theta)
    return np.log(mva_throughput(pop, d, z))


def fit_closed_system(
    population: list[float] | np.ndarray,
    throughput: list[float] | np.ndarray,
    *,
    name: str,
    row_ids: list[str] | None = None,
    population_name: str = "VMs",
    confidence: float = 0.95,
) -> CurveFit:
    """Fit the MVA closed-system form to published (population, throughput in IO/s) points."""
    pop, obs = paired_points(population, throughput, "population", "throughput")
    if np.any(pop < 1) or np.any(obs <= 0):
        raise ValueError("populations must be >= 1 and throughputs > 0")
    n, p = len(pop), 2
    ids = row_ids or [f"point-{i}" for i in range(n)]
    if n < p:
        raise InsufficientData(f"{name}: {few_points_note(n, p)[0]}")
    # Start from the asymptotes: D from the highest throughput, Z from the lowest latency N/X.
    d0 = 1.0 / obs.max()
    z0 = max(float(np.min(pop / obs)) - d0, 0.05 * d0)
    res = optimize.least_squares(
        lambda th: _log_model(th, pop) - np.log(obs), x0=np.log([d0, z0]), method="lm", xtol=1e-12, ftol=1e-12
    )
    theta = res.x
    dof = n - p
    s2 = float(res.fun @ res.fun) / dof if dof > 0 else float("nan")
    cov = s2 * np.linalg.pinv(res.jac.T @ res.jac) if dof > 0 else np.full((p, p), np.nan)
    tq = t_quantile(confidence, dof)
    se = np.sqrt(np.diag(cov))
    d, z = np.exp(theta)
    g = np.array([d, z])  # d(D+Z)/d(log D, log Z)
    se_floor = float(np.sqrt(g @ cov @ g))
    lo, hi = np.exp(theta - tq * se), np.exp(theta + tq * se)  # log-scale Wald interval, mapped back

    def predict(x: np.ndarray, level: float, interval: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mean = _log_model(theta, x)
        eps = 1e-6
        grad = np.stack([(_log_model(theta + eps * e, x) - mean) / eps for e in np.eye(p)], axis=1)
        var = np.einsum("ij,jk,ik->i", grad, cov, grad) + (s2 if interval == "prediction" else 0.0)
        q = t_quantile(level, dof)
        return np.exp(mean), np.exp(mean - q * np.sqrt(var)), np.exp(mean + q * np.sqrt(var))

    fitted = mva_throughput(pop, d, z)
    params = [
        Parameter("service_demand", d, lo[0], hi[0], "s", "bottleneck service demand D per IO"),
        Parameter("delay", z, lo[1], hi[1], "s", "non-queueing latency Z per IO"),
        Parameter("max_throughput", 1 / d, 1 / hi[0], 1 / lo[0], "1/s", "saturation throughput 1/D"),
        Parameter(
            "min_latency", d + z, d + z - tq * se_floor, d + z + tq * se_floor, "s", "QD1 latency floor D + Z"
        ),
    ]
    return CurveFit(
        name=name,
        form="closed network, exact MVA: one queue (D) + delay (Z)",
        x_name=population_name,
        y_name="throughput",
        y_unit="IOPS",
        parameters=params,
        points=residual_frame(pop, obs, fitted, np.ones(n, dtype=bool), ids),
        confidence=confidence,
        dof=dof,
        n_params=p,
        _predict=predict,
        notes=few_points_note(n, p),
    )
