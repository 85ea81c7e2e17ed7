"""Headroom: the largest multiplier of a workload mix that still meets every service level, with a
confidence interval, and what fails first.

``run(multiplier, seed)`` simulates the mix scaled by ``multiplier`` (more users, mailboxes, desktops, or a
faster arrival rate: the caller decides what scaling means) and returns the
:class:`~storagelab.kernel.simulation.SimulationResult`. For each replication (seed ``seed + r``),
:func:`headroom` finds by bisection the largest multiplier whose run meets every
:class:`LatencyObjective` (common random numbers: one seed gives one curve of the multiplier, so the
bisection sees a monotone function up to simulation noise); its answer is the geometric middle of the
final bracket. At the first multiplier past the headroom, the service level that fails (worst ratio of
measured to limit) and the busiest component (the bottleneck) are reported.

The interval is on the log of the multiplier, where a multiplier lives (it is > 0, and a headroom of 2
is as far from 1 as 1/2 is). Over the ``n`` replications' answers ``x_r``: the Student-t interval of
``mean(log x_r)``, half-width ``t * sd(log x_r) / sqrt(n)``, widened for the bisection's resolution ``d``
(half the widest final bracket on the log scale, ``log(hi / lo) / 2``; at most ``log(1 + tolerance) / 2``)
by ``d * (1 + t / sqrt(n - 1))``: each answer lies within ``d`` of its replication's exact boundary, so
the boundaries' mean of logs is within ``d`` of the answers' and their standard deviation within
``d * sqrt(n / (n - 1))``, and the widened interval contains the t-interval the exact boundaries would
give, wherever they are in their brackets. It does not shrink to the bracket when the replications land
in the same one (the sample spread is then 0, though the boundaries' is not). The headroom is the
geometric mean ``exp(mean(log x_r))`` and the bounds ``exp(mean -/+ half-width)``, clipped to the searched
``[low, high]`` (every replication's boundary lies in it, so what is estimated does too): > 0 whatever
the replications say. It is an interval for the geometric mean of what one run of the given length
answers; that is the model's headroom when the runs are long enough for their bias (warm-up, a
finite-run mean or percentile) to be small against the spread between seeds.
:mod:`storagelab.verify.headroom_coverage` measures how often it covers the exact headroom of M/M/1,
M/M/4 and closed MVA systems. With ``integer=True`` (whole multipliers: a population of workers) each
answer is the largest whole multiplier that held on its search's path (no resolution term) and the bounds
are rounded outwards to whole multipliers within ``[ceil(low), floor(high)]``: replications that all
agree give that number as both bounds.

A run that drives a component outside the range it is valid for (a station built from a published
curve, past the curve's last published point; see :data:`BEYOND_RANGE`) counts as a failure labelled with
that component, so the search never answers from an extrapolated curve: when that is what stops it, the
answer is ``censored`` (the headroom is at least that much; the published data cannot say more).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from storagelab.kernel.component import BEYOND_RANGE
from storagelab.kernel.replications import half_width
from storagelab.kernel.simulation import SimulationResult

#: The metrics a service level may state: the mean or any percentile of a class's latency (ms).
METRIC_FORMS = "mean_ms, or pNN_ms for the NN-th percentile (p95_ms, p99_ms, p99.9_ms; p999_ms = p99.9_ms)"
_PERCENTILE = re.compile(r"p(\d{1,2}(?:\.\d+)?)_ms")


#: How a search step that left a component's valid range is labelled.
RANGE_FAILURE = "beyond its published range"


def percentile_of(metric: str) -> float | None:
    """The percentile (0..100) a metric names (``p95_ms`` -> 95), None for ``mean_ms``; raises otherwise."""
    if metric == "mean_ms":
        return None
    if metric == "p999_ms":
        return 99.9
    m = _PERCENTILE.fullmatch(metric)
    if m is None or not 0 < float(m.group(1)) < 100:
        raise ValueError(f"metric must be {METRIC_FORMS}; got {metric!r}")
    return float(m.group(1))


@dataclass(frozen=True)
class LatencyObjective:
    """A class's latency objective (its service level in a headroom search): its ``metric`` (see :data:`METRIC_FORMS`, ms) at most ``limit_ms``,
    measured over the IOs of ``members`` (the IO classes the class was recorded as, e.g. one per volume
    it was spread over, or its reads and writes; default: ``cls`` itself) taken together."""

    cls: str
    metric: str
    limit_ms: float
    members: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            percentile_of(self.metric)
        except ValueError as err:
            raise ValueError(f"service level for {self.cls!r}: {err}") from None
        if not (
            isinstance(self.limit_ms, int | float) and math.isfinite(self.limit_ms) and self.limit_ms > 0
        ):
            raise ValueError(
                f"service level for {self.cls!r}: limit_ms must be > 0 ms, got {self.limit_ms!r}"
            )

    @property
    def label(self) -> str:
        """The level as text: ``"oltp p95_ms <= 10 ms"``."""
        return f"{self.cls} {self.metric} <= {self.limit_ms:g} ms"

    def measure(self, res: SimulationResult) -> float:
        """The measured metric (ms) over the members' IOs together; NaN when none completed."""
        rec = res.recorder
        merged = None
        for cls in self.members or (self.cls,):
            if cls in rec.classes:
                h = rec.histogram(cls)
                merged = h.copy() if merged is None else merged.add(h)
        if merged is None or merged.count == 0:
            return math.nan
        q = percentile_of(self.metric)
        return 1e3 * (merged.mean if q is None else merged.percentile(q))

    def ratio(self, res: SimulationResult) -> float:
        """Measured over limit (> 1: missed); a class with no completed IO misses (``inf``)."""
        value = self.measure(res)
        return math.inf if not math.isfinite(value) else value / self.limit_ms


@dataclass(frozen=True)
class Headroom:
    """The answer: ``per_replication`` headrooms; ``mean``, their geometric mean, and ``low``/``high``, its
    confidence bounds at ``confidence`` (a Student-t interval on the log of the multiplier widened by the
    bisection's resolution, always within ``(0, inf)`` and the searched bracket; see the module docstring);
    at the first multiplier past the headroom (of the first replication), the
    service level that ``fails_first`` with its ratio, and the ``bottleneck`` component with its
    utilisation. ``censored``: the search stopped where a component left its valid range (a published
    curve's last point), not where a service level failed: the headroom is then *at least* ``mean``.
    ``evaluations``: every run of the search (seed, multiplier, service level, measured, limit, ratio,
    in range), the per-class latency against load the search saw."""

    per_replication: tuple[float, ...]
    mean: float
    low: float
    high: float
    confidence: float
    fails_first: str
    fail_ratio: float
    bottleneck: str
    bottleneck_utilisation: float
    censored: bool = False
    evaluations: pl.DataFrame | None = None

    def to_frame(self) -> pl.DataFrame:
        """One row: the headroom, its interval, what fails first and the bottleneck."""
        return pl.DataFrame([{
            "headroom": self.mean, "low": self.low, "high": self.high, "confidence": self.confidence,
            "replications": len(self.per_replication), "censored": self.censored,
            "fails_first": self.fails_first, "fail_ratio": self.fail_ratio, "bottleneck": self.bottleneck,
            "bottleneck_utilisation": self.bottleneck_utilisation,
        }])  # fmt: skip


def log_interval(
    answers: Sequence[float],
    confidence: float,
    resolution: float,
    lowest: float,
    highest: float,
    *,
    integer: bool = False,
) -> tuple[float, float, float]:
    """The headroom and its bounds ``(geometric mean, low, high)`` from the replications' ``answers`` (> 0),
    each known to lie within ``resolution`` of its replication's boundary on the log scale:
    ``exp(mean(log x) -/+ (t * sd(log x) / sqrt(n) + resolution * (1 + t / sqrt(n - 1))))``, the Student-t
    interval of the logs widened just enough to contain the one the exact boundaries would give, wherever
    they lie within ``resolution`` of the answers (their mean moves by at most ``resolution``, their
    standard deviation by at most ``resolution * sqrt(n / (n - 1))``); clipped to ``[lowest, highest]``,
    where every boundary lies; with ``integer``, rounded outwards to whole multipliers."""
    logs = np.log(np.asarray(answers, dtype=float))
    if logs.size < 2 or not np.all(np.isfinite(logs)):
        raise ValueError(f"the headroom interval needs at least two answers > 0, got {list(answers)}")
    centre = float(logs.mean())
    t = float(stats.t.ppf(0.5 + confidence / 2, logs.size - 1))
    half = half_width(logs, confidence) + resolution * (1 + t / math.sqrt(logs.size - 1))
    mean = float(answers[0]) if np.ptp(logs) == 0 else math.exp(centre)  # no rounding error when all agree
    low, high = max(lowest, math.exp(centre - half)), min(highest, math.exp(centre + half))
    if integer:  # whole multipliers; the tolerance keeps exp(log(7)) = 7.000000000000001 at 7
        low, high = max(lowest, math.floor(low * (1 + 1e-9))), min(highest, math.ceil(high * (1 - 1e-9)))
    return mean, float(min(low, mean)), float(max(high, mean))


def _beyond_range(res: SimulationResult) -> str | None:
    """The first component the run drove outside its valid range, if any."""
    flagged = res.components().filter(pl.col("statistic") == BEYOND_RANGE, pl.col("value") > 0)
    return None if flagged.is_empty() else str(flagged["component"][0])


class OutsideBracket(ValueError):
    """The service levels fail already at the bracket's ``low`` end (``side == "low"``) or still hold at
    its ``high`` end (``side == "high"``); ``multiplier`` is that end; ``evaluations``: the runs made
    (as :attr:`Headroom.evaluations`); ``failing``: at the low end, the service level that fails (or
    the component out of its range); ``bottleneck`` and ``bottleneck_utilisation``: the busiest component
    at that end and its utilisation (0..1), when known."""

    def __init__(
        self,
        message: str,
        side: str,
        multiplier: float,
        evaluations: pl.DataFrame | None = None,
        failing: str = "",
        bottleneck: str = "",
        bottleneck_utilisation: float | None = None,
    ) -> None:
        super().__init__(message)
        self.side, self.multiplier, self.evaluations, self.failing = side, multiplier, evaluations, failing
        self.bottleneck, self.bottleneck_utilisation = bottleneck, bottleneck_utilisation


def headroom(
    run: Callable[[float, int], SimulationResult],
    levels: Sequence[LatencyObjective],
    *,
    low: float = 0.1,
    high: float = 10.0,
    start: float | None = None,
    replications: int = 3,
    seed: int = 1,
    tolerance: float = 0.02,
    confidence: float = 0.95,
    integer: bool = False,
) -> Headroom:
    """The largest multiplier in ``[low, high]`` at which every service level holds (see the module
    docstring); ``tolerance``: relative width the bisection stops at (whole numbers with ``integer``).
    With ``start``, the bracket is found from there by doubling or halving (within ``[low, high]``), so
    runs far past the answer, the costly ones, are not made. Raises :class:`OutsideBracket` when the
    service levels already fail at ``low`` or still hold at ``high``."""
    if not levels:
        raise ValueError("headroom needs at least one service level")
    if not 0 < low < high or replications < 2 or not 0 < tolerance < 1 or not 0.5 < confidence < 1:
        raise ValueError(
            "headroom needs 0 < low < high, replications >= 2, 0 < tolerance < 1, 0.5 < confidence < 1"
        )
    if start is not None and not low <= start <= high:
        raise ValueError(f"headroom: start ({start}) must lie in [low, high] = [{low}, {high}]")
    answers: list[float] = []
    resolution = 0.0  # half the widest final bracket, on the log scale
    rows: list[dict[str, object]] = []
    seen: dict[tuple[float, int], tuple[bool, str, float, str, float]] = {}

    def evaluate(m: float, s: int) -> bool:
        """Whether every level holds at ``m`` and every component stayed in range (remembered with the
        worst level's label and ratio, or the out-of-range component, and the bottleneck)."""
        if (m, s) in seen:
            return seen[m, s][0]
        res = run(m, s)
        worst, label = -math.inf, ""
        for lv in levels:
            value = lv.measure(res)
            ratio = math.inf if not math.isfinite(value) else value / lv.limit_ms
            rows.append({"seed": s, "multiplier": float(m), "service_level": lv.label, "class": lv.cls,
                         "metric": lv.metric, "measured_ms": value, "limit_ms": lv.limit_ms, "ratio": ratio})  # fmt: skip
            if ratio > worst:
                worst, label = ratio, lv.label
        beyond = _beyond_range(res)
        ok = beyond is None and worst <= 1.0
        if beyond is not None:
            label = f"{beyond}: {RANGE_FAILURE}"
        seen[m, s] = (ok, label, worst, *res.bottleneck())
        return ok

    lowest, highest = (math.ceil(low), math.floor(high)) if integer else (low, high)
    for r in range(replications):
        s = seed + r
        lo, hi = lowest, highest
        if start is not None:  # walk out from start to a bracket
            m = math.floor(start) if integer else start
            if evaluate(m, s):
                lo = m
                while lo < highest and evaluate(step := min(highest, lo * 2), s):
                    lo = step
                hi = lo if lo >= highest else min(highest, lo * 2)
            else:
                hi = m
                while hi > lowest and not evaluate(
                    step := max(lowest, hi / 2 if not integer else hi // 2), s
                ):
                    hi = step
                lo = hi if hi <= lowest else max(lowest, hi / 2 if not integer else hi // 2)
        if not evaluate(lo, s):
            raise OutsideBracket(
                f"at the lowest multiplier {lo:g} (seed {s}) {seen[lo, s][1]} already fails; lower `low`",
                "low",
                lo,
                pl.DataFrame(rows),
                seen[lo, s][1],
                *seen[lo, s][3:5],
            )
        if evaluate(hi, s):
            raise OutsideBracket(
                f"the service levels still hold at the highest multiplier {hi:g} (seed {s}); raise `high`",
                "high",
                hi,
                pl.DataFrame(rows),
                "",
                *seen[hi, s][3:5],
            )
        while (hi - lo > 1) if integer else (hi / lo - 1 > tolerance):
            mid = (lo + hi) // 2 if integer else math.sqrt(lo * hi)
            if evaluate(mid, s):
                lo = mid
            else:
                hi = mid
        answers.append(float(lo) if integer else math.sqrt(lo * hi))  # the boundary lies in [lo, hi]
        resolution = max(resolution, 0.0 if integer else math.log(hi / lo) / 2)
        if r == 0:
            _, label, ratio, component, util = seen[hi, s]
    mean, lower, upper = log_interval(answers, confidence, resolution, lowest, highest, integer=integer)
    return Headroom(
        per_replication=tuple(answers), mean=mean, low=lower, high=upper,
        confidence=confidence, fails_first=label, fail_ratio=ratio, bottleneck=component, bottleneck_utilisation=util,
        censored=label.endswith(RANGE_FAILURE), evaluations=pl.DataFrame(rows),
    )  # fmt: skip
