"""Headroom: the largest multiplier of a workload mix that still meets every service level, with a
confidence interval, and what fails first.

``run(multiplier, seed)`` simulates the mix scaled by ``multiplier`` (more users, mailboxes, desktops, or a
faster arrival rate: the caller decides what scaling means) and returns the
:class:`~storagelab.kernel.simulation.SimulationResult`. For each replication (seed ``seed + r``),
:func:`headroom` finds by bisection the largest multiplier whose run meets every
:class:`LatencyObjective` (common random numbers: one seed gives one curve of the multiplier, so the
bisection sees a monotone function up to simulation noise); its answer is the geometric middle of the
final bracket. The bracket is found before bisecting: upwards by the utilisation law (where a run holds
with its busiest component at utilisation ``u``, that component saturates near ``multiplier / u``, so
the next run is there rather than at twice the multiplier), downwards by halving; a replication after
the first starts at the earlier answers and steps finely, since common random numbers move the boundary
little. At the first multiplier past the headroom, the service level that fails (worst ratio of
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
from storagelab.kernel.run_limits import run_limits
from storagelab.kernel.simulation import SimulationResult

#: The metrics a service level may state: the mean or any percentile of a class's latency (ms).
METRIC_FORMS = "mean_ms, or pNN_ms for the NN-th percentile (p95_ms, p99_ms, p99.9_ms; p999_ms = p99.9_ms)"
_PERCENTILE = re.compile(r"p(\d{1,2}(?:\.\d+)?)_ms")


#: IOs a service level must be measured over before a run is called met or missed on it early
#: (:class:`ClearOutcome`), or before it is named as what fails first where a level so measured fails too
#: (:func:`search_replication`).
MIN_IOS = 30

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
    """A class's latency objective (its service level in a headroom search): its ``metric`` (see
    :data:`METRIC_FORMS`, ms) at most ``limit_ms``, measured over the IOs of ``members`` (the IO classes the
    class was recorded as, e.g. one per volume it was spread over, or its reads and writes; default:
    ``cls`` itself) taken together."""

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

    def count(self, res: SimulationResult) -> int:
        """The IOs of the members completed in the measurement window (what :meth:`measure` is over)."""
        rec = res.recorder
        return sum(rec.histogram(c).count for c in self.members or (self.cls,) if c in rec.classes)

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
    ``run_s``, the simulated seconds it ran: less than asked when :class:`ClearOutcome` stopped it,
    ``ios``, the IOs it simulated, warm-up included (what a run costs), and ``in_range``: every component
    stayed in its valid range, else the run failed whatever its latency), the per-class latency against
    load the search saw."""

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


class ClearOutcome:
    """A sequential decision on a run of a headroom search, for ``simulate(..., stop=...)``: at each
    check it measures every service level over the IOs so far and stops the run when the outcome is
    already clear, so runs far from the boundary, the costly ones above it most of all, end early.

    - **clearly met**: every level's measured/limit ratio is at most ``met`` and has not grown by more
      than a factor ``steady`` since the previous check (the latency is not drifting upwards, as it does
      while a queue builds), and, when some component is busier than ``stable``, at most
      ``saturated_met`` (a component near saturation can raise the latency well after the check: the
      NexGen storage processors and a vSAN hybrid's cache SSD doubled or tripled their ratios between
      a quarter of the run and its end, and on notebook 19's mix at 4 times, the vSAN hybrid's
      Exchange class went from 0.059 at the check where it stops (1.25 s) to 0.30 at the end of its
      2 s run, 5.1 times: from 0.125, 8 times is left before a stopped run would have missed; below
      saturation the latency at the check is already near its steady level, so ``met`` leaves 2 times);
    - **clearly met, flat**: near saturation, every level's ratio at most ``flat_met`` and flat over the
      last two check intervals (grown by at most a factor ``flat`` in each: three checks that agree, where
      the drifts above rose from check to check). Flat is not steady: on notebook 19's full settings a
      NexGen run stopped so at 0.36 ended its 10 s at 0.77, 2.1 times (``python -m
      storagelab.verify.early_stop``), so ``flat_met`` (0.4) leaves 2.5 times;
    - **clearly missed**: some level's ratio is at least ``missed`` and has not fallen since the previous
      check (a queue that only grows), or at least ``missed_rising`` and risen over each of the last two
      check intervals (a run just past saturation, whose latency settles above the limit or keeps
      climbing: next to the boundary, such a run often stays under twice its limit to its end, so the
      rule above lets it run its full length), whether or not a component is out of its range. A
      warm-up transient can rise and then fall: a VPLEX run stopped at 3.9 times ended at 2.7, a third
      lower, so ``missed_rising`` (1.5) leaves a fall by a third;
    - **out of range**: a component outside the range it is valid for (a published curve's station past
      its last published point, :data:`BEYOND_RANGE`) at two checks running: the search counts such a
      run as failed whatever its latency, so it ends there (a run out of range is never called met);

    a level counted over at least ``min_ios`` IOs (:data:`MIN_IOS`, 30: a mean of exponential-like latencies is then
    known to about 18 %, far inside the factor of two the margins leave): every level, to call the run
    met; the level that misses, to call it missed (an overloaded closed class completes few IOs: the
    EqualLogic's Exchange class completed 17 by the last check at 24 times its limit, and waiting for
    its 30th held the run to its end while its OLTP class, over 30 IOs, was already at 23 times). Never
    at the first check (two are needed to see a trend). A run it stops reports what it measured up to the stop (its
    ``duration`` says when), so the search sees a ratio at most ``met`` or at least ``missed_rising`` and
    decides as the full run would unless the remaining time would carry the ratio across 1: from ``met``
    (0.5) that is a doubling of the latency after the check without a drift before it. How often that
    happens is measured, not assumed: ``python -m storagelab.verify.early_stop`` reruns stopped runs in
    full and counts the decisions that differ. :attr:`CHECKS` are the fractions of the measured time a search checks at
    (``simulate(..., checks=ClearOutcome.CHECKS)``): the third, where the two-interval rules can first
    decide, at a quarter."""

    #: When a headroom search's runs are checked (fractions of the measured time).
    CHECKS = (0.125, 0.1875, 0.25, 0.5)

    def __init__(
        self,
        levels: Sequence[LatencyObjective],
        *,
        met: float = 0.5,
        missed: float = 2.0,
        missed_rising: float = 1.5,
        steady: float = 1.1,
        flat: float = 1.05,
        stable: float = 0.9,
        saturated_met: float = 0.125,
        flat_met: float = 0.4,
        min_ios: int = MIN_IOS,
    ) -> None:
        if (
            not 0 < saturated_met <= flat_met <= met < 1 < missed_rising <= missed
            or not 1 <= flat <= steady
            or not 0 < stable <= 1
            or min_ios < 1
        ):
            raise ValueError(
                "ClearOutcome needs 0 < saturated_met <= flat_met <= met < 1 < missed_rising <= missed, "
                "1 <= flat <= steady, 0 < stable <= 1 and min_ios >= 1"
            )
        self.levels, self.met, self.missed, self.steady, self.min_ios = levels, met, missed, steady, min_ios
        self.missed_rising, self.flat, self.flat_met = missed_rising, flat, flat_met
        self.stable, self.saturated_met = stable, saturated_met
        self.previous: list[float] | None = None
        self.earlier: list[float] | None = None  # the ratios at the check before the previous one
        self.beyond = False  # whether the previous check found a component outside its valid range

    def __call__(self, partial: SimulationResult) -> bool:
        ratios, counts = [], []
        for lv in self.levels:
            counts.append(lv.count(partial))
            ratios.append(lv.ratio(partial))
        earlier, before, self.earlier, self.previous = self.earlier, self.previous, self.previous, ratios
        beyond, self.beyond = self.beyond, _beyond_range(partial) is not None
        if before is None:
            return False
        if any(
            n >= self.min_ios and r >= self.missed and r >= b
            for r, b, n in zip(ratios, before, counts, strict=True)
        ):
            return True  # clearly missed (out of range or not, the run fails)
        if earlier is not None and any(
            n >= self.min_ios and r >= self.missed_rising and r >= b >= e
            for r, b, e, n in zip(ratios, before, earlier, counts, strict=True)
        ):
            return True  # past saturation: above the limit and rising at each of the last two checks
        if self.beyond:
            return beyond  # out of range at two checks running: it fails, whatever its latency
        if min(counts) < self.min_ios:
            return False
        if all(r <= self.met and r <= b * self.steady for r, b in zip(ratios, before, strict=True)):
            busiest = partial.bottleneck()[1]
            # a component near saturation asks for the wider margin (NaN, none reporting one, does not)
            if not busiest > self.stable or all(r <= self.saturated_met for r in ratios):
                return True
            # or for ratios that stayed flat over the last two check intervals
            return earlier is not None and all(
                r <= self.flat_met and r <= b * self.flat and b <= e * self.flat
                for r, b, e in zip(ratios, before, earlier, strict=True)
            )
        return False


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


def _places_saturation(utilisation: float, tolerance: float) -> bool:
    """Whether the busiest component's ``utilisation`` (0..1) at a multiplier ``m`` that held says where it
    saturates (at ``m / utilisation``) further than ``m x (1 + 2 x tolerance)``: not when it is unknown or
    already near 1 (a closed loop holding at saturation, or background work such as a write log's destage
    keeping it busy at any load)."""
    return utilisation > 0 and math.isfinite(utilisation) and 1 / utilisation > 1 + 2 * tolerance


@dataclass(frozen=True)
class Replication:
    """One replication of a headroom search (seed ``seed``): its ``answer`` (the geometric middle of its
    final bracket; whole multipliers: the largest that held), the bracket's half-width on the log scale
    (``resolution``) and the bracket itself (``(lo, hi)``: ``lo`` held, ``hi`` did not), at the first
    multiplier past the answer the service level that ``fails_first`` (the worst of the failing levels
    measured over :data:`MIN_IOS` IOs or more, where there is one; else the worst) with its ratio and the
    ``bottleneck`` with its utilisation, and its runs (``evaluations``: rows as in
    :attr:`Headroom.evaluations`)."""

    seed: int
    answer: float
    bracket: tuple[float, float]
    resolution: float
    fails_first: str
    fail_ratio: float
    bottleneck: str
    bottleneck_utilisation: float
    evaluations: tuple[dict[str, object], ...]


def _check_search(levels: Sequence[LatencyObjective], low: float, high: float, start: float | None,
                  tolerance: float) -> None:  # fmt: skip
    if not levels:
        raise ValueError("headroom needs at least one service level")
    if not 0 < low < high or not 0 < tolerance < 1:
        raise ValueError("headroom needs 0 < low < high and 0 < tolerance < 1")
    if start is not None and not low <= start <= high:
        raise ValueError(f"headroom: start ({start}) must lie in [low, high] = [{low}, {high}]")


def search_replication(
    run: Callable[[float, int], SimulationResult],
    levels: Sequence[LatencyObjective],
    seed: int,
    *,
    low: float = 0.1,
    high: float = 10.0,
    start: float | None = None,
    tolerance: float = 0.02,
    integer: bool = False,
    probe_high: bool = False,
    warm: float | tuple[float, float] | None = None,
) -> Replication:
    """One replication of :func:`headroom` (its arguments), on seed ``seed``: the bracket found from
    ``start`` (up by the utilisation law, down by halving; with ``probe_high``, ``high`` run next where
    ``start`` holds and its busiest component's utilisation cannot place the saturation point), or, with
    ``warm`` (not with ``integer``), from an earlier replication's result:
    its answer, stepping by ``(1 + tolerance)**2``, or its final bracket ``(lo, hi)``, from ``lo`` stepping
    by ``hi / lo`` (where ``lo`` holds and ``hi`` fails again, two runs find the bracket), each step
    squared after the first; then bisected to ``tolerance``.
    Raises :class:`OutsideBracket` (with this replication's runs) when the service levels already fail at
    ``low`` or still hold at ``high``."""
    _check_search(levels, low, high, start, tolerance)
    s = seed
    rows: list[dict[str, object]] = []
    seen: dict[float, tuple[bool, str, float, str, float]] = {}

    def evaluate(m: float) -> bool:
        """Whether every level holds at ``m`` and every component stayed in range (remembered with the
        worst level's label and ratio, or the out-of-range component, and the bottleneck)."""
        if m in seen:
            return seen[m][0]
        res = run(m, s)
        ranked = []  # (failing and measured over MIN_IOS IOs, ratio, label): the largest fails first
        beyond = _beyond_range(res)
        for lv in levels:
            value = lv.measure(res)
            ratio = math.inf if not math.isfinite(value) else value / lv.limit_ms
            rows.append({"seed": s, "multiplier": float(m), "service_level": lv.label, "class": lv.cls,
                         "metric": lv.metric, "measured_ms": value, "limit_ms": lv.limit_ms, "ratio": ratio,
                         "run_s": res.duration, "ios": res.issued, "in_range": beyond is None})  # fmt: skip
            ranked.append((ratio > 1.0 and lv.count(res) >= MIN_IOS, ratio, lv.label))
        # what fails first: the worst of the failing levels measured over enough IOs, where there is one (a run
        # stopped early may not yet have completed an IO of a slow class: its ratio is inf, but unmeasured),
        # else the worst level; the first of equals (``levels`` is never empty: _check_search)
        _, worst, label = max(ranked, key=lambda r: (r[0], r[1]))
        ok = beyond is None and max(r[1] for r in ranked) <= 1.0
        if beyond is not None:
            label = f"{beyond}: {RANGE_FAILURE}"
        seen[m] = (ok, label, worst, *res.bottleneck())
        return ok

    lowest, highest = (math.ceil(low), math.floor(high)) if integer else (low, high)

    def up_from(m: float, step: float | None) -> float:
        """The next multiplier to try above ``m``, where the service levels hold: ``m x step`` on a
        warm start; otherwise where ``m``'s bottleneck would saturate (the utilisation law: at ``m / u``
        its utilisation ``u`` reaches 1, and an open class's latency then grows without bound; ``high``
        itself when that lies within ``1 + tolerance`` of it, since a run just below ``high`` that held
        would be followed by one at ``high``), or twice ``m`` when that is no further than
        ``m x (1 + 2 x tolerance)`` (a closed loop holding at saturation) or unknown."""
        if step is not None:
            return min(highest, m * step)
        u = seen[m][4]
        if not _places_saturation(u, tolerance):
            nxt = min(highest, 2 * m)
        else:
            nxt = highest if m / u * (1 + tolerance) >= highest else m / u
        # ``high`` already failed (the probe): a step to just below it would only confirm that
        return highest if highest in seen and nxt * (1 + 2 * tolerance) >= highest else nxt

    lo, hi = lowest, highest
    first = start
    step: float | None = None  # None: the first walk jumps by the utilisation law and halves
    if isinstance(warm, tuple) and not integer:  # a later replication starts at an earlier bracket
        first, step = min(highest, max(lowest, warm[0])), warm[1] / warm[0]
    elif warm is not None and not integer:  # a later replication starts at an earlier answer, stepping finely
        first = min(highest, max(lowest, warm))
        step = (1 + tolerance) ** 2
    if first is not None and integer:
        first = math.floor(first)
    if first is not None and not integer:  # walk out from the first multiplier to a bracket
        if evaluate(first):
            if (
                probe_high
                and warm is None
                and not _places_saturation(seen[first][4], tolerance)
                and evaluate(highest)
            ):
                first = highest  # holds at the top: the bracket check below says so
            lo, factor = first, step
            while lo < highest and evaluate(nxt := up_from(lo, factor)):
                lo, factor = nxt, None if factor is None else factor * factor
            hi = lo if lo >= highest else nxt
        else:
            hi, factor = first, 2.0 if step is None else step
            while hi > lowest and not evaluate(nxt := max(lowest, hi / factor)):
                hi, factor = nxt, factor if step is None else factor * factor
            lo = hi if hi <= lowest else nxt
    elif first is not None:  # whole multipliers: doubling or halving
        m = first
        if evaluate(m):
            lo = m
            while lo < highest and evaluate(nxt := min(highest, lo * 2)):
                lo = nxt
            hi = lo if lo >= highest else min(highest, lo * 2)
        else:
            hi = m
            while hi > lowest and not evaluate(nxt := max(lowest, hi // 2)):
                hi = nxt
            lo = hi if hi <= lowest else max(lowest, hi // 2)
    if not evaluate(lo):
        raise OutsideBracket(
            f"at the lowest multiplier {lo:g} (seed {s}) {seen[lo][1]} already fails; lower `low`",
            "low",
            lo,
            pl.DataFrame(rows),
            seen[lo][1],
            *seen[lo][3:5],
        )
    if evaluate(hi):
        raise OutsideBracket(
            f"the service levels still hold at the highest multiplier {hi:g} (seed {s}); raise `high`",
            "high",
            hi,
            pl.DataFrame(rows),
            "",
            *seen[hi][3:5],
        )
    while (hi - lo > 1) if integer else (hi / lo - 1 > tolerance * (1 + 1e-9)):
        mid = (lo + hi) // 2 if integer else math.sqrt(lo * hi)
        if evaluate(mid):
            lo = mid
        else:
            hi = mid
    _, label, ratio, component, util = seen[hi]
    return Replication(
        seed=s, answer=float(lo) if integer else math.sqrt(lo * hi),  # the boundary lies in [lo, hi]
        bracket=(float(lo), float(hi)), resolution=0.0 if integer else math.log(hi / lo) / 2,
        fails_first=label, fail_ratio=ratio,
        bottleneck=component, bottleneck_utilisation=util, evaluations=tuple(rows),
    )  # fmt: skip


def combine(
    replications: Sequence[Replication],
    *,
    low: float,
    high: float,
    confidence: float = 0.95,
    integer: bool = False,
) -> Headroom:
    """The :class:`Headroom` of ``replications`` (at least two, of one search over ``[low, high]``): the
    interval of :func:`log_interval` over their answers, widened by the widest final bracket; what fails
    first and the bottleneck as the first replication saw them; every run."""
    if len(replications) < 2 or not 0.5 < confidence < 1:
        raise ValueError("headroom needs replications >= 2 and 0.5 < confidence < 1")
    lowest, highest = (math.ceil(low), math.floor(high)) if integer else (low, high)
    answers = [r.answer for r in replications]
    resolution = max(r.resolution for r in replications)  # half the widest final bracket, on the log scale
    mean, lower, upper = log_interval(answers, confidence, resolution, lowest, highest, integer=integer)
    first = replications[0]
    return Headroom(
        per_replication=tuple(answers), mean=mean, low=lower, high=upper, confidence=confidence,
        fails_first=first.fails_first, fail_ratio=first.fail_ratio, bottleneck=first.bottleneck,
        bottleneck_utilisation=first.bottleneck_utilisation, censored=first.fails_first.endswith(RANGE_FAILURE),
        evaluations=pl.DataFrame([row for r in replications for row in r.evaluations]),
    )  # fmt: skip


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
    probe_high: bool = False,
    max_events: int | None = None,
    max_wall_s: float | None = None,
) -> Headroom:
    """The largest multiplier in ``[low, high]`` at which every service level holds (see the module
    docstring); ``tolerance``: relative width the bisection stops at (whole numbers with ``integer``).
    With ``start``, the first replication's bracket is found from there (within ``[low, high]``): up by
    the utilisation law (to where the bottleneck measured at the multiplier that held would saturate),
    down by halving, so runs far past the answer, the costly ones, are not made; every later replication
    starts at the geometric mean of the answers before it and steps by ``(1 + tolerance)**2``, squared
    at each step (whole multipliers: every replication doubles or halves from ``start``). With
    ``probe_high`` (and ``start``, not ``integer``), where ``start`` holds with its busiest component too
    busy for the utilisation law to say where it saturates (the walk would double), the first replication
    runs ``high`` next: a system that holds there is answered without a walk up to it, and one that fails
    there bounds the walk (a step that would land within ``1 + 2 x tolerance`` of ``high`` goes to
    ``high``, already run). Where ``start`` fails, or the law places the saturation point, nothing is
    probed: a run far past the answer is slow to simulate (an overloaded system's queues grow), and the
    law's step is the better next run. Each replication is :func:`search_replication`; :func:`combine`
    makes the answer of them.
    Raises :class:`OutsideBracket` (with every run so far) when the service levels already fail at ``low``
    or still hold at ``high``. ``max_events`` bounds each run's events and ``max_wall_s`` the whole
    search's wall-clock seconds (:func:`~storagelab.kernel.run_limits.run_limits`); reaching either raises
    :class:`~storagelab.kernel.run_limits.RunLimitReached`."""
    _check_search(levels, low, high, start, tolerance)
    if replications < 2 or not 0.5 < confidence < 1:
        raise ValueError("headroom needs replications >= 2 and 0.5 < confidence < 1")
    with run_limits(max_events, max_wall_s):
        return _headroom(run, levels, low=low, high=high, start=start, replications=replications, seed=seed,
                         tolerance=tolerance, confidence=confidence, integer=integer,
                         probe_high=probe_high)  # fmt: skip


def _headroom(run: Callable[[float, int], SimulationResult], levels: Sequence[LatencyObjective], *,
              low: float, high: float, start: float | None, replications: int, seed: int, tolerance: float,
              confidence: float, integer: bool, probe_high: bool) -> Headroom:  # fmt: skip
    """:func:`headroom`'s search, its arguments checked."""
    done: list[Replication] = []
    for r in range(replications):
        answers = [d.answer for d in done]
        warm = math.exp(float(np.mean(np.log(answers)))) if answers and not integer else None
        try:
            done.append(search_replication(run, levels, seed + r, low=low, high=high, start=start,
                                           tolerance=tolerance, integer=integer, probe_high=probe_high,
                                           warm=warm))  # fmt: skip
        except OutsideBracket as err:
            earlier = [row for d in done for row in d.evaluations]
            if earlier and err.evaluations is not None:
                err.evaluations = pl.concat([pl.DataFrame(earlier), err.evaluations], how="vertical_relaxed")
            raise
    return combine(done, low=low, high=high, confidence=confidence, integer=integer)
