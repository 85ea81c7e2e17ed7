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

**Method: a Student-t on the residuals, not split-conformal quantiles.** The choice, for a few dozen
claims over 5 studies (the issue counts about 30; the quick table of today has 47 informative two-sided
claims, and leaving a study out keeps 26 to 45 of them):

- Split-conformal quantiles (Vovk, Gammerman and Shafer 2005; Lei et al. 2018, JASA 113, section 2.2) are
  exact in finite samples but coarse at this size: with a quantile per tail (the discrepancy need not be
  symmetric), the 95 % upper bound is the ``ceil((n + 1) 0.975)``-th smallest of ``n`` residuals, which
  does not exist below n = 39 (the interval is infinite) and is the largest residual up to n = 78; on
  |r| (symmetric) it needs n >= 19 and is the largest |r| up to n = 38. Either way the 95 % bound is one
  claim's residual, and moves with it; the 80 % bound rests on a few residuals in each tail.
- A conformal interval is built on the residuals themselves, which already contain each claim's
  parameter and noise spread; adding it to a claim's own predictive interval (as item 5 asks) would count
  that spread twice, and using it instead would give every claim the same width whatever its parameters.
- A Student-t separates the two. Each residual is modelled as ``r_i ~ Normal(0, tau^2 + s_i^2)``, with
  ``s_i`` the claim's own log-spread (its 80 % interval's log width / (2 z_0.9), z_0.9 = 1.2816, the
  normal 90th percentile), so ``tau``, fitted by maximum likelihood, is what the model's intervals miss
  (a random-effects fit as in a meta-analysis). With ``tau`` estimated from ``n`` claims, the predictive
  distribution of a new claim's discrepancy is a Student-t with ``n`` degrees of freedom and scale
  ``tau``: exactly so when the ``s_i`` are 0 (a normal with known centre and unknown variance under the
  prior p(sigma^2) ~ 1 / sigma^2; Gelman et al., "Bayesian Data Analysis", 3rd ed., section 2.6), approximately
  otherwise. Its tails widen by themselves when few claims train it (t_20 at 0.975: 2.09 against the
  normal's 1.96; t_5: 2.57).
- Its cost is an assumption of shape: symmetric, bell-shaped log errors. A skewed or two-humped
  discrepancy (one mechanism missing in a few claims) is not represented; the out-of-sample coverage of
  :mod:`storagelab.uncertainty.scores` is the check.

**Centred at 0.** The band has no offset: the sign of a log error depends on the metric (a model too slow
under-predicts IOPS and over-predicts latency), so a mean residual pooled over metrics and studies says
nothing about the next claim's sign; a learned offset would move intervals by the mix of metrics in the
other studies.

**Weights.** A claim with several points (a table's rows) counts once: each of its points has weight
1 / (its points), and the band's ``claims`` (the t's degrees of freedom) is the sum of the weights.

**The predictive interval with discrepancy** (:func:`predictive_interval`) is the convolution, on the log
scale, of the model's predictive distribution with the t: the quantiles of ``ln(model) + delta``, solved
from the mixture CDF ``F(x) = mean_j T_nu((x - l_j) / tau)`` over the log sample ``l_j`` (no Monte Carlo;
the same numbers in any process). When the raw predictive sample is not given, the log sample is rebuilt
from the five quantiles: ``ln(quantile)`` is interpolated linearly in the normal score ``z = Phi^-1(p)``
between the known probabilities (0.025, 0.10, 0.50, 0.90, 0.975) and extrapolated linearly beyond them,
which is exact for a log-normal prediction. The columns ``pred_low80``, ``pred_high80``, ``pred_low95``,
``pred_high95`` are in the row's own ``unit`` (the same as ``published``); ``discrepancy_scale`` (tau)
is a dimensionless natural-log ratio and ``discrepancy_claims`` the claims that trained the band.

A point whose quantiles are missing or not positive (or whose sample has a value that is not positive)
gets no interval (NaN): it cannot be put on the log scale; the scores count it as not covered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import optimize, special, stats

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
#: log-normal prediction (log sigma 0.3) with a normal discrepancy: the 80 % and 95 % bounds with
#: discrepancy are within 2e-5 (relative) of the exact ones at N = 1000 for tau 0.001 to 0.05 (0.4 % at
#: N = 250, tau 0.001); the tests check 0.1 %.
PSEUDO_SAMPLE = 1000
#: The least variance (natural-log units squared) a residual is given in the likelihood: a point with no
#: spread of its own and a residual of 0 would otherwise make the likelihood infinite at tau = 0. 1e-12 is a
#: spread of 1e-6 (0.0001 %), far below any replication's noise; a numerical guard, not a modelling choice.
VARIANCE_FLOOR = 1e-12


@dataclass(frozen=True)
class Band:
    """The discrepancy's predictive distribution: ``delta ~ scale * t(claims)``, a dimensionless natural-log
    ratio (published / model). ``scale`` is tau (0: no discrepancy beyond the model's own intervals),
    ``claims`` the weight of the claims that trained it (the t's degrees of freedom), ``points`` their
    points, ``studies`` their studies."""

    scale: float
    claims: float
    points: int
    studies: tuple[str, ...]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and self.scale >= 0):
            raise ValueError(f"a band's scale is finite and >= 0, got {self.scale!r}")
        if not self.claims > 0:
            raise ValueError(f"a band is trained on at least one claim, got {self.claims!r}")

    def ppf(self, p: float) -> float:
        """The discrepancy (natural-log ratio) at probability ``p`` in (0, 1)."""
        return self.scale * float(special.stdtrit(self.claims, p)) if self.scale > 0 else 0.0

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """P(delta <= x), elementwise (a step at 0 when the scale is 0)."""
        if self.scale == 0:
            return (np.asarray(x) >= 0).astype(float)
        return special.stdtr(self.claims, np.asarray(x) / self.scale)

    def factor(self, level: float = 0.80) -> float:
        """The band alone as a factor: its central ``level`` interval is [1 / factor, factor] times the
        model's value (e.g. 1.5: published within a factor 1.5 of the model ``level`` of the time)."""
        return math.exp(self.ppf(0.5 + level / 2))

    def describe(self) -> str:
        """In words, e.g. ``tau 0.251 (80 %: x/1.39, 95 %: x/1.66), t with 42 degrees of freedom, from 74
        points of ds5020, nexgen, vplex, vsan``."""
        return (
            f"tau {self.scale:.3g} (80 %: x/{self.factor(0.80):.3g}, 95 %: x/{self.factor(0.95):.3g}), "
            f"t with {self.claims:.3g} degrees of freedom, from {self.points} points of "
            f"{', '.join(self.studies)}"
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
    """The :class:`Band` of residuals ``res`` (columns as :func:`residuals`): tau maximises the weighted
    likelihood of ``r_i ~ Normal(0, tau^2 + s_i^2)``; with every ``s_i`` 0 it is the weighted root mean
    square of the residuals. Raises ``ValueError`` with no residual."""
    if res.height == 0:
        raise ValueError("no informative residual to learn a discrepancy band from")
    r = res["residual"].to_numpy()
    s2 = res["spread"].to_numpy() ** 2
    w = res["weight"].to_numpy()
    r2 = r**2
    claims = float(w.sum())
    studies = tuple(sorted(res["study"].unique().to_list()))

    def negative_log_likelihood(tau: float) -> float:
        v = np.maximum(tau**2 + s2, VARIANCE_FLOOR)
        return float(np.sum(w * (np.log(v) + r2 / v)))

    top = math.sqrt(float(r2.max()))  # the likelihood falls beyond tau^2 = max r^2 (its slope is positive)
    if top == 0:
        return Band(0.0, claims, res.height, studies)
    if np.all(s2 == 0):
        tau = math.sqrt(float(np.sum(w * r2) / claims))
    else:
        found = optimize.minimize_scalar(
            negative_log_likelihood, bounds=(0.0, top), method="bounded", options={"xatol": 1e-10}
        )  # xatol: tau to 1e-10 in log units, far below any width that shows in a bound
        tau = float(found.x)
        if negative_log_likelihood(0.0) <= negative_log_likelihood(tau):
            tau = 0.0  # the bounded search never evaluates the end; the model's spread explains it all
    return Band(tau, claims, res.height, studies)


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


def _convolved_quantile(logs: np.ndarray, band: Band, p: float) -> float:
    """The ``p`` quantile of ln(model) + delta: the root of mean_j T((x - l_j) / tau) = p."""
    q = band.ppf(p)
    lo, hi = float(logs.min()) + q, float(logs.max()) + q  # F(lo) <= p <= F(hi): every term is below / above
    if hi - lo < 1e-12:
        return lo
    # xtol: the log bound to 1e-12 (a relative 1e-12 in the bound), far below the rebuilt sample's error
    return float(optimize.brentq(lambda x: float(band.cdf(x - logs).mean()) - p, lo, hi, xtol=1e-12))


def predictive_interval(
    band: Band,
    quantiles: Sequence[float] | None = None,
    sample: Sequence[float] | None = None,
) -> dict[str, float]:
    """One point's interval with discrepancy: ``{pred_low80, pred_high80, pred_low95, pred_high95}`` in the
    point's unit. The model's distribution is its raw predictive ``sample`` when given (in the point's
    unit), else rebuilt from its five ``quantiles`` (low95, low80, median, high80, high95). NaN when the
    values cannot be put on the log scale (missing or not positive)."""
    nan = {name: math.nan for name, _ in PREDICTIVE}
    if sample is not None:
        values = np.asarray(sample, dtype=float)
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
            return nan
        logs = np.log(values)
        if band.scale == 0:
            return {name: float(np.quantile(values, p)) for name, p in PREDICTIVE}
    else:
        if quantiles is None or len(quantiles) != len(QUANTILES):
            raise ValueError(f"give a sample or the {len(QUANTILES)} quantiles {[c for c, _ in QUANTILES]}")
        q = [math.nan if v is None else float(v) for v in quantiles]
        if not all(math.isfinite(v) and v > 0 for v in q):
            return nan
        if band.scale == 0:  # nothing to add: the model's own quantiles, exactly
            by_p = {p: v for (_, p), v in zip(QUANTILES, q, strict=True)}
            return {name: by_p[p] for name, p in PREDICTIVE}
        logs = log_sample_from_quantiles(q)
    return {name: math.exp(_convolved_quantile(logs, band, p)) for name, p in PREDICTIVE}


def with_discrepancy(
    frame: pl.DataFrame,
    band: Band | Mapping[str, Band],
    *,
    key: str,
    by: str | None = None,
    samples: Mapping[str, Sequence[float]] | None = None,
) -> pl.DataFrame:
    """``frame`` (with the :data:`QUANTILES` columns) with the :data:`PREDICTIVE` columns, in each row's
    unit, and ``discrepancy_scale`` (tau, natural-log ratio) and ``discrepancy_claims``. ``band`` is one
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
            | {"discrepancy_scale": b.scale, "discrepancy_claims": b.claims}
        )
    names = [name for name, _ in PREDICTIVE] + ["discrepancy_scale", "discrepancy_claims"]
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
