"""The model's discrepancy from reality, learned out of sample, added to each claim's interval (issue 68,
item 5).

Kennedy and O'Hagan (2001, "Bayesian calibration of computer models", J. R. Stat. Soc. B 63(3)) name
*model inadequacy* among the sources of uncertainty (section 2.1) and write an observation as the computer
model at the true parameters, scaled by rho, plus a discrepancy function plus observation error (section
4). Here, with rho = 1, on the log scale (every quantity a claim reads is positive, and the model's errors
are relative: a latency 30 % low, an IOPS figure twice too high),

    ln(published) = ln(model's predictive value) + delta,

where the model's predictive value carries the parameter draws and the simulation noise (the ``median``,
``low80`` ... ``high95`` columns of a calibration or envelope table, or the raw predictive sample of
:func:`storagelab.uncertainty.propagation.predictive_sample`) and ``delta`` is the discrepancy, a
dimensionless log ratio. A residual is ``r = ln(published / median)``.

**What trains the band.** The informative in-study points (:func:`residuals`): role ``predicted``, or
``fitted`` with ``left_out_of_fit`` (its fit was redone without its rows); never ``derived`` (arithmetic on
the inputs); ``two-sided`` readings only (a bound says where a value is not, not where it is; "over X"
places it only loosely); ``published`` is the geometric middle of ``published_low`` .. ``published_high``
(the middle of a range on the log scale). For each study the band is learned from the **other** studies'
residuals only (:func:`study_bands`, leave one study out), so a study is never scored with a band its own
claims trained; the envelope (out-of-study) claims use a band learned on every in-study residual
(:func:`pooled_band`) and never train it.

**Method: the other studies' residuals themselves (split-conformal style), not a Student-t.** Each
training point gives a discrepancy ``|delta_i| = sqrt(max(0, r_i^2 - s_i^2))``: its residual with the
model's own spread taken out in quadrature (``s_i``, its 80 % interval's log width / (2 z_0.9), z_0.9 =
1.2816 the normal 90th percentile), so that convolving with a claim's own interval does not count that
spread twice. The band is the weighted empirical distribution of ``+delta_i`` and ``-delta_i`` (half the
point's weight each; see "centred" below), as split-conformal prediction (Vovk, Gammerman and Shafer 2005;
Lei et al. 2018, JASA 113, section 2.2) uses held-out residuals; a quantile of it is a weighted order
statistic (:func:`weighted_quantiles`). Why, for a few dozen claims over 5 studies (the issue counts
about 30; today's quick table has 47 informative two-sided claims, and leaving a study out keeps 26 to
45):

- Measured on today's quick table (model spread 0, ``median`` = ``simulated``, the most the band can be):
  the residuals are heavy-tailed, median |r| 0.07, 80th percentile 0.35, 90th 0.63, and one claim 3.6
  (ilio boot-t2-peak, 37 times off). A normal or Student-t scale fitted to them by likelihood is set by
  that tail: tau 0.27 to 0.86 left study by left study, 80 % bands of x/1.4 to x/3.1, which hold the
  residuals of 77 of the 79 left-out points at 80 % nominal (97 %). A t whose degrees of freedom are
  fitted too goes to 1 (Cauchy) with a scale of 0.05 to 0.26 and holds 46 of 79 (58 %). The residuals'
  own quantiles (this module) give 80 % bands of x/1.34 to x/1.79 and cover 65 of 79 (82 %).
- The cost is coarseness at 95 %: the 97.5 % point of n claims is one of the largest one or two
  residuals, and moves with one claim (x/2.0 to x/5.8 left study by left study). Nothing is smoothed or
  extrapolated beyond the largest residual, so no band is wider than the worst claim seen: with fewer
  than 20 claims (each sign of a claim holds 1/(2n) of the weight) the 95 % band is the largest |delta|
  (strict split-conformal, a quantile per tail, would make it infinite below n = 39).
- The quadrature removal is exact for variances of normal errors and approximate per claim: on normal
  residuals of spread sqrt(tau^2 + s^2) (tau 0.3, s 0.2) the interval with discrepancy of a claim of
  spread s comes out 2 % wider (in log half-width) than the residuals' own at 80 % and 9 % at 95 %: wider,
  not narrower (tested).

**Centred at 0.** The band is symmetric, with no offset: the sign of a log error depends on the metric (a
model too slow under-predicts IOPS and over-predicts latency), so a mean residual pooled over metrics and
studies says nothing about the next claim's sign; a learned offset would move intervals by the mix of
metrics in the other studies.

**Weights.** A claim with several points (a table's rows) counts once: each of its points has weight
1 / (its points), and the band's ``claims`` is the sum of the weights.

**The predictive interval with discrepancy** (:func:`predictive_interval`) is the convolution, on the log
scale, of the model's predictive distribution with the band: the weighted quantiles of every sum
``l_k + delta_j`` of a log-sample value and a band value (weight ``w_j / K``). It is exact arithmetic on
the table, no Monte Carlo: the same numbers in any process. When the raw predictive sample is not given,
the log sample is rebuilt from the five quantiles: ``ln(quantile)`` is interpolated linearly in the
normal score ``z = Phi^-1(p)`` between the known probabilities (0.025, 0.10, 0.50, 0.90, 0.975) and
extrapolated linearly beyond them, which is exact for a log-normal prediction. The columns
``pred_low80``, ``pred_high80``, ``pred_low95``, ``pred_high95`` are in the row's own ``unit`` (the same
as ``published``); ``discrepancy_factor80`` is the band's own 80 % factor (its interval is x/factor,
dimensionless), ``discrepancy_scale`` the weighted root mean square of the band (a natural-log ratio)
and ``discrepancy_claims`` the claims that trained it.

A point whose quantiles are missing or negative, or whose median is not positive (or whose sample has a
negative value or a median of 0), gets no interval (NaN): it cannot be put on the log scale; the scores count
it as not covered. A quantile at 0 (a share or a rate that some draws put at zero) stays at 0: the band
multiplies, and zero times any factor is zero. Such values enter the convolution at :data:`ZERO_FLOOR` of
the median, and a bound that comes out no higher than that floor times the band's largest factor is 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

#: The model's predictive quantiles a table carries: (column, probability), as in
#: :data:`storagelab.uncertainty.propagation.QUANTILES`.
QUANTILES: tuple[tuple[str, float], ...] = (
    ("low95", 0.025), ("low80", 0.10), ("median", 0.50), ("high80", 0.90), ("high95", 0.975),
)  # fmt: skip
#: The intervals with discrepancy: (column, probability); central 80 % and 95 % intervals.
PREDICTIVE: tuple[tuple[str, float], ...] = (
    ("pred_low80", 0.10), ("pred_high80", 0.90), ("pred_low95", 0.025), ("pred_high95", 0.975),
)  # fmt: skip
#: The normal score of the 90th percentile: an 80 % central interval of a normal is +/- Z80 sigma.
Z80 = float(stats.norm.ppf(0.90))
#: Points of the log sample rebuilt from five quantiles (at probabilities (k + 1/2) / N). Measured on a
#: log-normal prediction (log sigma 0.3) convolved with a band of 1000 normal residuals (spread tau): the
#: bounds are within 2e-5 (relative) of the exact log-normal's at N = 1000 for tau 0.001 and 0.05, 3.4e-4
#: for tau 0.3 (the band's own discreteness); the tests check 0.3 %. The cost is a sort of N x (twice the
#: band's points) sums per point: about 3 s for today's 116-point calibration table.
PSEUDO_SAMPLE = 1000

#: Where a value of 0 enters the log-scale convolution, as a fraction of the point's median (module
#: docstring): far below any bound a claim reports, so it comes out as 0.
ZERO_FLOOR = 1e-9

#: How near a cumulative weight must be to a probability to count as equal to it (a tie between two order
#: statistics, averaged): floating-point sums of weights such as 1/3 are exact to about 1e-16.
TIE = 1e-12


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, ps: Sequence[float]) -> list[float]:
    """The ``ps`` quantiles of a weighted discrete distribution: for each p, the least value whose
    cumulative weight (as a share of the total) reaches p, averaged with the next when it reaches p exactly
    (numpy's ``averaged_inverted_cdf``, Hyndman and Fan's type 2, with weights). No interpolation, so a
    value repeated K times with weight w / K has the quantiles of the value once with weight w."""
    order = np.argsort(values)  # ties have equal values: their order changes no quantile
    v = np.asarray(values, dtype=float)[order]
    c = np.cumsum(np.asarray(weights, dtype=float)[order])
    c /= c[-1]
    last = v.size - 1
    out = []
    for p in ps:
        lo = min(int(np.searchsorted(c, p - TIE, side="left")), last)
        hi = min(int(np.searchsorted(c, p + TIE, side="left")), last)
        out.append(0.5 * (float(v[lo]) + float(v[hi])))
    return out


@dataclass(frozen=True)
class Band:
    """The discrepancy's distribution, a dimensionless natural-log ratio (published / model): each of
    ``offsets`` (|delta_i| >= 0, one per training point) taken with either sign, each sign with half the
    point's weight in ``weights``; ``points`` the training points and ``studies`` their studies."""

    offsets: tuple[float, ...]
    weights: tuple[float, ...]
    studies: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.offsets) != len(self.weights) or not self.offsets:
            raise ValueError("a band has one weight per offset, and at least one offset")
        if not all(math.isfinite(o) and o >= 0 for o in self.offsets):
            raise ValueError(f"a band's offsets are finite and >= 0, got {self.offsets!r}")
        if not all(math.isfinite(w) and w > 0 for w in self.weights):
            raise ValueError(f"a band's weights are finite and > 0, got {self.weights!r}")

    @property
    def points(self) -> int:
        """The training points."""
        return len(self.offsets)

    @property
    def claims(self) -> float:
        """The training claims: the sum of the weights (a claim's points share a weight of 1)."""
        return float(sum(self.weights))

    @property
    def scale(self) -> float:
        """The weighted root mean square of the band (a natural-log ratio; 0: no discrepancy)."""
        return math.sqrt(
            sum(w * o * o for o, w in zip(self.offsets, self.weights, strict=True)) / self.claims
        )

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, weights): each offset with either sign, each with half its weight."""
        o, w = np.asarray(self.offsets), np.asarray(self.weights)
        return np.concatenate([-o, o]), np.concatenate([w, w]) / 2

    def ppf(self, p: float) -> float:
        """The discrepancy (natural-log ratio) at probability ``p`` (:func:`weighted_quantiles`)."""
        return weighted_quantiles(*self.support(), [p])[0]

    def factor(self, level: float = 0.80) -> float:
        """The band alone as a factor: its central ``level`` interval is [1 / factor, factor] times the
        model's value (e.g. 1.5: published within a factor 1.5 of the model ``level`` of the time)."""
        return math.exp(self.ppf(0.5 + level / 2))

    def describe(self) -> str:
        """In words, e.g. ``80 %: x/1.43, 95 %: x/2.04, from 42 claims (74 points) of ds5020, nexgen,
        vplex, vsan``."""
        return (
            f"80 %: x/{self.factor(0.80):.3g}, 95 %: x/{self.factor(0.95):.3g}, from {self.claims:.3g} claims "
            f"({self.points} points) of {', '.join(self.studies)}"
        )


def _col(frame: pl.DataFrame, name: str, default: object) -> pl.Expr:
    return pl.col(name) if name in frame.columns else pl.lit(default)


def residuals(calibration: pl.DataFrame) -> pl.DataFrame:
    """The informative in-study points' residuals (module docstring): columns ``study``, ``claim``,
    ``point``, ``residual`` (ln(published middle / median), dimensionless), ``spread`` (the point's own
    log-spread as a normal's sigma, ln(high80 / low80) / (2 Z80), dimensionless) and ``weight`` (1 / the claim's informative points). A point whose
    median, 80 % bounds or published band are not positive is left out (it has no log)."""
    role_ok = (pl.col("role") == "predicted") | (
        (pl.col("role") == "fitted") & _col(calibration, "left_out_of_fit", False).fill_null(False)
    )
    frame = calibration.filter(
        role_ok
        & (pl.col("comparison") == "two-sided")
        & (pl.col("median") > 0)
        & (pl.col("low80") > 0)
        & (pl.col("high80") > 0)
        & (pl.col("published_low") > 0)
        & (pl.col("published_high") > 0)
    )
    return frame.select(
        "study",
        "claim",
        "point",
        residual=(
            0.5 * (pl.col("published_low").log() + pl.col("published_high").log()) - pl.col("median").log()
        ),
        spread=(pl.col("high80") / pl.col("low80")).log() / (2 * Z80),
        weight=1.0 / pl.len().over("study", "claim"),
    ).filter(pl.col("residual").is_finite() & pl.col("spread").is_finite())


def fit_band(res: pl.DataFrame) -> Band:
    """The :class:`Band` of residuals ``res`` (columns as :func:`residuals`): each point's discrepancy
    sqrt(max(0, r^2 - s^2)) with its weight (module docstring). Raises ``ValueError`` with no residual."""
    if res.height == 0:
        raise ValueError("no informative residual to learn a discrepancy band from")
    r2 = res["residual"].to_numpy() ** 2
    s2 = res["spread"].to_numpy() ** 2
    offsets = np.sqrt(np.maximum(r2 - s2, 0.0))
    return Band(
        tuple(float(o) for o in offsets),
        tuple(float(w) for w in res["weight"].to_numpy()),
        tuple(sorted(res["study"].unique().to_list())),
    )


def pooled_band(calibration: pl.DataFrame) -> Band:
    """The band learned on every informative in-study residual: the one the envelope claims use."""
    return fit_band(residuals(calibration))


def study_bands(calibration: pl.DataFrame) -> dict[str, Band]:
    """Per study of ``calibration``, the band learned on the other studies' residuals only (leave one
    study out)."""
    res = residuals(calibration)
    return {
        study: fit_band(res.filter(pl.col("study") != study))
        for study in sorted(calibration["study"].unique().to_list())
    }


def log_sample_from_quantiles(quantiles: Sequence[float], n: int = PSEUDO_SAMPLE) -> np.ndarray:
    """A log sample of ``n`` points rebuilt from the five quantiles (values at the probabilities of
    :data:`QUANTILES`, in order low95, low80, median, high80, high95): ln(quantile) linear in the normal
    score between them and beyond them (module docstring). Returns natural logs."""
    z_known = stats.norm.ppf([p for _, p in QUANTILES])
    logs = np.maximum.accumulate(np.log(np.asarray(quantiles, dtype=float)))  # monotone against rounding
    z = stats.norm.ppf((np.arange(n) + 0.5) / n)
    out = np.interp(z, z_known, logs)
    low, high = z < z_known[0], z > z_known[-1]
    out[low] = logs[0] + (z[low] - z_known[0]) * (logs[1] - logs[0]) / (z_known[1] - z_known[0])
    out[high] = logs[-1] + (z[high] - z_known[-1]) * (logs[-1] - logs[-2]) / (z_known[-1] - z_known[-2])
    return out


def predictive_interval(
    band: Band,
    quantiles: Sequence[float] | None = None,
    sample: Sequence[float] | None = None,
) -> dict[str, float]:
    """One point's interval with discrepancy: ``{pred_low80, pred_high80, pred_low95, pred_high95}`` in the
    point's unit. The model's distribution is its raw predictive ``sample`` when given (in the point's
    unit), else rebuilt from its five ``quantiles`` (low95, low80, median, high80, high95). NaN when the
    values cannot be put on the log scale (missing or negative, or a median that is not positive); a
    quantile at 0 stays at 0 (module docstring)."""
    nan = {name: math.nan for name, _ in PREDICTIVE}
    if sample is not None:
        values = np.asarray(sample, dtype=float)
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values < 0):
            return nan
        median = float(np.median(values))
        if median <= 0:
            return nan
        if band.scale == 0:
            return {name: float(np.quantile(values, p)) for name, p in PREDICTIVE}
        floor = median * ZERO_FLOOR
        logs = np.log(np.maximum(values, floor))
    else:
        if quantiles is None or len(quantiles) != len(QUANTILES):
            raise ValueError(f"give a sample or the {len(QUANTILES)} quantiles {[c for c, _ in QUANTILES]}")
        q = [math.nan if v is None else float(v) for v in quantiles]
        if not all(math.isfinite(v) and v >= 0 for v in q) or q[2] <= 0:
            return nan
        if band.scale == 0:  # nothing to add: the model's own quantiles, exactly
            by_p = {p: v for (_, p), v in zip(QUANTILES, q, strict=True)}
            return {name: by_p[p] for name, p in PREDICTIVE}
        floor = q[2] * ZERO_FLOOR
        logs = log_sample_from_quantiles([max(v, floor) for v in q])
    deltas, weights = band.support()
    sums = (logs[:, None] + deltas[None, :]).ravel()  # every log value plus every band value
    each = np.broadcast_to(weights[None, :], (logs.size, deltas.size)).ravel()
    bounds = weighted_quantiles(sums, each, [p for _, p in PREDICTIVE])
    zero = math.log(floor) + float(np.max(np.abs(deltas)))  # at or below: a 0 the band moved
    return {name: (math.exp(b) if b > zero else 0.0) for (name, _), b in zip(PREDICTIVE, bounds, strict=True)}


def with_discrepancy(
    frame: pl.DataFrame,
    band: Band | Mapping[str, Band],
    *,
    key: str,
    by: str | None = None,
    samples: Mapping[str, Sequence[float]] | None = None,
) -> pl.DataFrame:
    """``frame`` (with the :data:`QUANTILES` columns) with the :data:`PREDICTIVE` columns, in each row's
    unit, and ``discrepancy_factor80``, ``discrepancy_scale`` and ``discrepancy_claims`` (the band's, module
    docstring). ``band`` is one
    band for every row, or a band per value of the column ``by`` (a study). ``samples`` maps a row's
    ``key`` value to its raw predictive sample, used instead of its quantiles."""
    samples = samples or {}
    rows = []
    for row in frame.select(key, *([by] if by else []), *(c for c, _ in QUANTILES)).iter_rows(named=True):
        b = band[row[by]] if isinstance(band, Mapping) else band
        sample = samples.get(row[key])
        quantiles = None if sample is not None else [row[c] for c, _ in QUANTILES]
        rows.append(
            predictive_interval(b, quantiles, sample)
            | {
                "discrepancy_factor80": b.factor(0.80),
                "discrepancy_scale": b.scale,
                "discrepancy_claims": b.claims,
            }
        )
    names = [name for name, _ in PREDICTIVE] + [
        "discrepancy_factor80",
        "discrepancy_scale",
        "discrepancy_claims",
    ]
    added = pl.DataFrame(rows, schema=dict.fromkeys(names, pl.Float64))
    return pl.concat([frame.drop([n for n in names if n in frame.columns]), added], how="horizontal")


def calibration_with_discrepancy(
    calibration: pl.DataFrame, samples: Mapping[str, Sequence[float]] | None = None
) -> pl.DataFrame:
    """The calibration table with each point's interval with discrepancy, from its study's left-out band
    (:func:`study_bands`); ``samples`` maps a ``point`` to its raw predictive sample."""
    return with_discrepancy(calibration, study_bands(calibration), key="point", by="study", samples=samples)


def envelope_with_discrepancy(
    envelope: pl.DataFrame,
    calibration: pl.DataFrame,
    samples: Mapping[str, Sequence[float]] | None = None,
) -> pl.DataFrame:
    """The envelope table with each claim's interval with discrepancy, from the band of every in-study
    residual (:func:`pooled_band`); ``samples`` maps a ``claim`` to its raw predictive sample."""
    return with_discrepancy(envelope, pooled_band(calibration), key="claim", samples=samples)
