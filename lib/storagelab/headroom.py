"""Headroom: the largest multiplier of a workload mix that still meets every service level, with a
confidence interval, and what fails first.

``run(multiplier, seed)`` simulates the mix scaled by ``multiplier`` (more users, mailboxes, desktops, or a
faster arrival rate: the caller decides what scaling means) and returns the
:class:`~storagelab.simulation.SimulationResult`. For each replication (seed ``seed + r``),
:func:`headroom` finds by bisection the largest multiplier whose run meets every
:class:`ServiceLevel` (common random numbers: one seed gives one curve of the multiplier, so the
bisection sees a monotone function up to simulation noise); its answer is the middle of the final
bracket. The replications' answers give the mean headroom and a Student-t confidence interval, widened
by half the bracket (the bisection's resolution); at the first multiplier past the headroom, the service
level that fails (worst ratio of measured to limit) and the busiest component (the bottleneck) are
reported.

``integer=True`` searches whole multipliers (a population of workers).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from storagelab.simulation import SimulationResult

METRICS = ("mean_ms", "p50_ms", "p90_ms", "p99_ms", "p999_ms")


@dataclass(frozen=True)
class ServiceLevel:
    """A class's service level: its ``metric`` (one of :data:`METRICS`, ms) at most ``limit_ms``."""

    cls: str
    metric: str
    limit_ms: float

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(
                f"service level for {self.cls!r}: metric must be one of {METRICS}, got {self.metric!r}"
            )
        if not (math.isfinite(self.limit_ms) and self.limit_ms > 0):
            raise ValueError(
                f"service level for {self.cls!r}: limit_ms must be > 0 ms, got {self.limit_ms!r}"
            )

    def ratio(self, summary: pl.DataFrame) -> float:
        """Measured over limit (> 1: missed); a class with no completed IO misses (``inf``)."""
        row = summary.filter(pl.col("class") == self.cls)
        if row.is_empty():
            return math.inf
        value = row[self.metric][0]
        return math.inf if value is None or not math.isfinite(value) else float(value) / self.limit_ms


@dataclass(frozen=True)
class Headroom:
    """The answer: ``per_replication`` headrooms, their ``mean`` and ``low``/``high`` confidence bounds
    at ``confidence``; at the first multiplier past the headroom (of the first replication), the
    service level that ``fails_first`` with its ratio, and the ``bottleneck`` component with its
    utilisation."""

    per_replication: tuple[float, ...]
    mean: float
    low: float
    high: float
    confidence: float
    fails_first: str
    fail_ratio: float
    bottleneck: str
    bottleneck_utilisation: float

    def to_frame(self) -> pl.DataFrame:
        """One row: the headroom, its interval, what fails first and the bottleneck."""
        return pl.DataFrame([{
            "headroom": self.mean, "low": self.low, "high": self.high, "confidence": self.confidence,
            "replications": len(self.per_replication), "fails_first": self.fails_first,
            "fail_ratio": self.fail_ratio, "bottleneck": self.bottleneck,
            "bottleneck_utilisation": self.bottleneck_utilisation,
        }])  # fmt: skip


def _worst(levels: Sequence[ServiceLevel], res: SimulationResult) -> tuple[float, ServiceLevel]:
    summary = res.summary()
    return max(((lv.ratio(summary), lv) for lv in levels), key=lambda x: x[0])


def _bottleneck(res: SimulationResult) -> tuple[str, float]:
    util = res.components().filter(pl.col("statistic") == "utilisation").sort("value", descending=True)
    if util.is_empty():
        return "", math.nan
    return str(util["component"][0]), float(util["value"][0])


def headroom(
    run: Callable[[float, int], SimulationResult],
    levels: Sequence[ServiceLevel],
    *,
    low: float = 0.1,
    high: float = 10.0,
    replications: int = 3,
    seed: int = 1,
    tolerance: float = 0.02,
    confidence: float = 0.95,
    integer: bool = False,
) -> Headroom:
    """The largest multiplier in ``[low, high]`` at which every service level holds (see the module
    docstring); ``tolerance``: relative width the bisection stops at (whole numbers with ``integer``).
    Raises when the service levels already fail at ``low`` or still hold at ``high`` (widen the bracket)."""
    if not levels:
        raise ValueError("headroom needs at least one service level")
    if not 0 < low < high or replications < 2 or not 0 < tolerance < 1 or not 0.5 < confidence < 1:
        raise ValueError(
            "headroom needs 0 < low < high, replications >= 2, 0 < tolerance < 1, 0.5 < confidence < 1"
        )
    answers, failing = [], None
    for r in range(replications):
        s = seed + r
        ok_at = lambda m, s=s: _worst(levels, run(m, s))[0] <= 1.0  # noqa: E731
        lo, hi = (math.ceil(low), math.floor(high)) if integer else (low, high)
        if not ok_at(lo):
            raise ValueError(
                f"the service levels already fail at the lowest multiplier {lo:g} (seed {s}); lower `low`"
            )
        if ok_at(hi):
            raise ValueError(
                f"the service levels still hold at the highest multiplier {hi:g} (seed {s}); raise `high`"
            )
        while (hi - lo > 1) if integer else (hi / lo - 1 > tolerance):
            mid = (lo + hi) // 2 if integer else math.sqrt(lo * hi)
            if ok_at(mid):
                lo = mid
            else:
                hi = mid
        answers.append(float(lo) if integer else math.sqrt(lo * hi))  # the boundary lies in [lo, hi]
        if failing is None:
            res = run(hi, s)
            failing = (_worst(levels, res), _bottleneck(res))
    x = np.asarray(answers)
    half = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    if not integer:  # each answer is known only to within its final bracket
        half += float(x.mean()) * tolerance / 2
    (ratio, level), (component, util) = failing
    return Headroom(
        per_replication=tuple(answers), mean=float(x.mean()), low=float(x.mean()) - half, high=float(x.mean()) + half,
        confidence=confidence, fails_first=f"{level.cls} {level.metric} <= {level.limit_ms:g} ms", fail_ratio=ratio,
        bottleneck=component, bottleneck_utilisation=util,
    )  # fmt: skip
