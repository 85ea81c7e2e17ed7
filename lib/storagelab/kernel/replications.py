"""Statistics over independent replications of a run (the same model, seeds ``seed``, ``seed + 1``, ...):
the mean and its Student-t confidence interval. The one place the workbench computes such an interval
(the calibration's claims, the headroom search and the kernel's validation all use it)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def half_width(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> float:
    """Half the width of the Student-t ``confidence`` interval of the mean of ``values`` (independent
    replications; at least two), in their unit."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        raise ValueError(f"a confidence interval needs at least two replications, got {x.size}")
    return float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))


def interval(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t ``confidence`` interval ``(mean, low, high)`` of independent replications: NaN
    bounds for one replication, all NaN for none."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    half = half_width(x, confidence)
    return m, m - half, m + half


__all__ = ["half_width", "interval"]
