"""A prediction's interval from the runs of a scenario over its parameter draws (issue 68).

A scenario is run once per draw of its uncertain parameters (a :func:`~storagelab.uncertainty.design.
sobol_design`), every draw with the same simulation seed as its first replication at the declared values
(common random numbers: two draws differ by their parameters alone, which is what the sensitivity analysis
needs), and ``n`` times at the declared values with different seeds (the calibration's replications: the
simulation noise). The predictive sample combines the two (:func:`predictive_sample`):

    y[j, q] = draw[j] + (mean(r) - r[0]) + s a t_{n-1}(q)

- every draw carries the common seed's noise, which the replications measure: ``r[0]`` is the run at that
  seed, so ``draw[j] + mean(r) - r[0]`` is the draw's value at the replications' mean noise;
- a published value is one more outcome, so the noise added is the Student-t predictive of one new run from
  ``n`` replications with sample standard deviation ``s`` (``t`` quantiles at :data:`NOISE_LEVELS`):
  ``a = sqrt(1 + 1/n)``.

**The draws' own noise** (``repeats``). Common random numbers share the seed, not all of the noise: a draw
at other parameter values shares a fraction ``rho`` of the common seed's noise and carries the rest as
noise of its own, which already spreads the draws (the known-truth check measured ``rho`` 0.75-0.83 on its
station: :func:`storagelab.verify.calibration_coverage.noise_correlation`). The sample above adds a whole
new run's noise on top, so it counts that part twice. With the first ``k`` draws run again at the second
replication's seed (``repeats``), write ``w = 1 - rho`` and ``D[j] = (draw[j] - r[0]) - (repeat[j] -
r[1])``, whose mean square is ``4 w s^2``:

- ``w = mean(D^2) / (4 s^2)``, clipped to [0, 1];
- with ``e[j] = rho e[0] + sqrt(1 - rho^2) u[j]`` (a run's noise ``e``, variance ``s^2``), the sample's
  per-draw noise has variance ``(1 - rho^2) s^2`` and its common error, ``mean(e) - w e[0]``, variance
  ``(1/n + w^2 - 2 w / n) s^2``; one new run's noise less that common error has variance ``(1 + 1/n + w^2
  - 2 w / n) s^2``, so the noise added is ``a^2 = 1 + 1/n - 2 w (1 + 1/n) + 2 w^2`` (``1 + 1/n`` at ``w =
  0``, as without ``repeats``). ``s`` stays the replications' alone: where ``rho`` is near 1 a repeat
  copies a replication's noise and would add no degree of freedom.

The known-truth check, 600 truths at each of seeds 1-3 (80 % coverage of mean latency / throughput):
without repeats 80.3 / 82.5, 85.3 / 83.3, 82.0 / 80.5 (means 82.6 / 82.1 %); with one repeat per truth
79.0 / 82.2, 85.0 / 83.0, 80.8 / 80.2 (81.6 / 81.8 %); with two, 81.6 / 81.6 %, and four, 81.4 / 81.4 %.
One repeat corrects as much as four, at a twentieth more runs. The two points or so above 80 % that are
left (82.1 / 81.7 % over 3,000 truths, seeds 1-5) are the Student-t noise term's heavy tail convolved with
the parameters' spread: with Welch-Satterthwaite's degrees of freedom instead, the same truths' 80 %
coverage is 80.2 / 79.5 % but their 95 % falls to 93.5 / 92.6 % (the t: 94.9 / 95.5 %), and the t's PIT is
the nearer to uniform; the t is kept (:mod:`storagelab.verify.calibration_coverage`).

The known-truth check (:mod:`storagelab.verify.calibration_coverage`) found the simpler sample, each draw
plus each replication's deviation from their mean, covering a new run only about half as often as stated
where the noise dominates: 3 deviations have ``sqrt(2/3)`` of the noise's spread, and the common seed's
noise was counted as signal. This assumes the noise adds to the value rather than scaling with it (at a
replication's spread of a few per cent the two readings differ by less than the quantiles' sampling error).
Its quantiles are the claim's median and its 80 % and 95 % predictive intervals.

:func:`stability` says how far the 80 % bounds move when the draws are halved (the first half of a Sobol'
sequence is itself a balanced design when the whole is a power of two): the issue's check that the sample
is large enough.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

#: The predictive quantiles a claim reports: (column, probability).
QUANTILES: tuple[tuple[str, float], ...] = (
    ("low95", 0.025), ("low80", 0.10), ("median", 0.50), ("high80", 0.90), ("high95", 0.975),
)  # fmt: skip


def scenario_seed(seed: int, study: str, scenario: str) -> int:
    """The seed of a scenario's parameter design: the run's ``seed`` plus a checksum of the scenario's
    name (CRC-32, the same in every process, unlike ``hash``), so that each scenario draws its own points
    and adding a scenario changes no other scenario's draws."""
    return seed + zlib.crc32(f"{study}: {scenario}".encode())


#: Quantile levels at which the Student-t noise of :func:`predictive_sample` is evaluated (midpoints of 1,000
#: equal slices: the 97.5 % bound then lies within 0.05 % of its level, and the t quantile within 1 %).
NOISE_LEVELS = (np.arange(1000) + 0.5) / 1000


def _finite(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)


def predictive_sample(
    draws: Sequence[float | None],
    replications: Sequence[float | None],
    common: float | None = None,
    *,
    target: Literal["run", "mean"] = "run",
    repeats: Sequence[float | None] = (),
) -> np.ndarray:
    """The predictive sample of one output (module docstring): each finite draw, moved by ``mean(r) -
    common`` (``common``: the replication run at the draws' seed; by default the first replication), plus
    the Student-t noise from the finite replications: of one new run (``target="run"``, ``s sqrt(1 + 1/n)
    t_{n-1}``: the truth is one more noisy outcome, as a published measurement is) or of the replications'
    mean (``target="mean"``, ``s / sqrt(n) t_nu``: the truth is the noise-free value the runs estimate, as
    a system's headroom is; the search's noise is only our error in finding it). For the mean, ``nu`` is
    Welch-Satterthwaite's effective degrees of freedom of the sum (as the GUM combines a Type A term with
    one known exactly): ``nu = (tau^2 + u^2)^2 / (u^4 / (n - 1))`` with ``u^2 = s^2 / n`` and ``tau^2`` the
    draws' variance, so ``nu = n - 1`` where the draws agree and the noise is the whole interval, and the
    noise term tends to a normal one where the draws' spread dominates (a t with ``n - 1`` degrees of
    freedom convolved with that spread covers more than its level: on the comparison's known-truth loop,
    ``mva-think-uncertain`` of :mod:`storagelab.verify.headroom_coverage`, 83.5 % against 80 % over 800
    truths, seeds 1-4). With fewer than two finite
    replications the noise is unknown and the draws alone are returned (moved when ``common`` is given);
    with no finite draw, an empty array.

    ``repeats``: the first draws run again at the second replication's seed, in the draws' order (target
    ``"run"`` only; ``replications[1]`` is the run at that seed): the new run's noise is shrunk by what the
    draws carry of their own (module docstring). A pair with a value that is not finite is left out."""
    if target not in ("run", "mean"):
        raise ValueError(f"predictive_sample: target must be 'run' or 'mean', got {target!r}")
    if repeats and target != "run":
        raise ValueError("predictive_sample: repeats correct the noise of one new run (target 'run') only")
    d = _finite(draws)
    r = _finite(replications)
    if d.size == 0:
        return d
    if common is None and replications and replications[0] is not None and math.isfinite(replications[0]):
        common = float(replications[0])
    if r.size < 2:
        return d
    shift = r.mean() - common if common is not None and math.isfinite(common) else 0.0
    n = r.size
    scale = math.sqrt(1 + 1 / n) if target == "run" else math.sqrt(1 / n)
    sd = float(r.std(ddof=1))
    pairs = _pairs(draws, replications, common, repeats)
    if pairs.size:
        first, again, d0, d1 = pairs.T
        w = (
            float(np.clip(np.mean(((first - d0) - (again - d1)) ** 2) / (4 * sd**2), 0.0, 1.0))
            if sd > 0
            else 0.0
        )
        scale = math.sqrt(1 + 1 / n - 2 * w * (1 + 1 / n) + 2 * w * w)
    dof: float = n - 1
    if target == "mean" and sd > 0:
        u2 = sd**2 / n
        tau2 = float(d.var(ddof=1)) if d.size > 1 else 0.0
        dof = (tau2 + u2) ** 2 / (u2**2 / (n - 1))
    noise = sd * scale * stats.t.ppf(NOISE_LEVELS, dof)
    return ((d + shift)[:, None] + noise[None, :]).ravel()


def _pairs(
    draws: Sequence[float | None],
    replications: Sequence[float | None],
    common: float | None,
    repeats: Sequence[float | None],
) -> np.ndarray:
    """Rows ``(draw, its repeat, the replication at the draws' seed, the second replication)`` of every
    repeated draw whose four values are finite; an empty array without them."""
    if not repeats or len(replications) < 2:
        return np.empty((0, 4))
    if len(repeats) > len(draws):
        raise ValueError(f"predictive_sample: {len(repeats)} repeats of {len(draws)} draws")
    rows = [(draws[j], x, common, replications[1]) for j, x in enumerate(repeats)]
    ok = [r for r in rows if all(v is not None and math.isfinite(v) for v in r)]
    return np.asarray(ok, dtype=float).reshape(-1, 4)


#: Points per draw at which :func:`stratified_rows` reads the draws' quantile function, and noise levels
#: averaged into one (so the sample keeps its size: 16 draws x 1,000 levels become 64 x 250).
PER_DRAW = 4


def stratified_rows(logs: np.ndarray, per_draw: int = PER_DRAW) -> np.ndarray:
    """The draws of a stratified design as the distribution they stand for: ``logs`` (draws x noise
    levels, each row one draw plus the same noise levels) becomes ``draws x per_draw`` rows read off the
    draws' quantile function at the midpoints of equal slices, with the noise levels averaged in groups of
    ``per_draw`` (where their count is a multiple of it).

    A scrambled Sobol' design puts one point in each ``1 / n`` slice of every parameter's distribution,
    so the ``i``-th smallest of ``n`` draws (of an output monotone in one parameter) lies in the ``i``-th
    slice, and its expected probability is the slice's middle, ``(i - 0.5) / n`` (Hazen's plotting
    position). The quantile function is linear between those points and flat beyond the outermost. Read
    as ``n`` point masses instead, the 10 % and 90 % quantiles of 16 draws are the 2nd and 15th draws, whose
    expected probabilities are 3/32 and 29/32: an 80 % interval that holds 13/16 (81.25 %) of the
    distribution. On the known-truth systems with a continuous headroom (``python -m
    storagelab.verify.headroom_coverage --params-only --cases mm1-mean-uncertain mva-think-uncertain``:
    3,000 truths, no simulation), the 16 draws' exact headrooms cover the truth 82.0 % and 81.7 % of the
    time as point masses, 80.6 % and 80.2 % through this function. The draws' order is that of their
    middle noise level (their medians: a row may carry its own search resolution,
    :func:`storagelab.analysis.decision.with_resolution`).

    The comparison's decision reads its draws this way (:class:`~storagelab.analysis.decision.
    CandidateSample`); the calibration's :func:`interval` still reads them as point masses."""
    n, levels = logs.shape
    if levels >= per_draw and levels % per_draw == 0:
        logs = logs.reshape(n, levels // per_draw, per_draw).mean(axis=2)
    rows = logs[np.argsort(logs[:, logs.shape[1] // 2], kind="stable")]
    u = (np.arange(n * per_draw) + 0.5) / (n * per_draw)
    f = np.clip(u * n - 0.5, 0.0, n - 1.0)
    lo = np.floor(f).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    t = (f - lo)[:, None]
    return rows[lo] * (1 - t) + rows[hi] * t


@dataclass(frozen=True)
class Interval:
    """One output's predictive summary, in the output's unit: the median, the 80 % and the 95 % central
    intervals (NaN when no draw was finite), and ``draws``, the number of draws whose run gave a finite
    value."""

    median: float
    low80: float
    high80: float
    low95: float
    high95: float
    draws: int

    def as_row(self) -> dict[str, float | int]:
        """The columns of the calibration table."""
        return {
            "median": self.median, "low80": self.low80, "high80": self.high80,
            "low95": self.low95, "high95": self.high95, "draws": self.draws,
        }  # fmt: skip


def interval(
    draws: Sequence[float | None],
    replications: Sequence[float | None],
    common: float | None = None,
    repeats: Sequence[float | None] = (),
) -> Interval:
    """The predictive :class:`Interval` of one output from its draws (at the common seed, whose
    replication is ``common``, by default the first), its replications at the declared values and the
    first draws' ``repeats`` at the second replication's seed (:func:`predictive_sample`). Quantiles are
    numpy's default (linear between order statistics), so the same runs give the same bounds in any
    process."""
    sample = predictive_sample(draws, replications, common, repeats=repeats)
    finite = sum(1 for x in draws if x is not None and math.isfinite(x))
    if sample.size == 0:
        nan = math.nan
        return Interval(nan, nan, nan, nan, nan, 0)
    q = {name: float(np.quantile(sample, p)) for name, p in QUANTILES}
    return Interval(q["median"], q["low80"], q["high80"], q["low95"], q["high95"], finite)


def stability(
    draws: Sequence[float | None],
    replications: Sequence[float | None],
    common: float | None = None,
    repeats: Sequence[float | None] = (),
) -> float:
    """How far the 80 % bounds move when only the first half of the draws is used: the larger of the two
    bounds' shifts, as a fraction of the full sample's 80 % width (0 when the width is 0 and nothing moved;
    NaN with fewer than 4 draws or a failed draw)."""
    if len(draws) < 4 or not all(x is not None and math.isfinite(x) for x in draws):
        return math.nan
    full = interval(draws, replications, common, repeats)
    half = interval(draws[: len(draws) // 2], replications, common, repeats[: len(draws) // 2])
    width = full.high80 - full.low80
    shift = max(abs(half.low80 - full.low80), abs(half.high80 - full.high80))
    if width <= 0:
        return 0.0 if shift == 0 else math.inf
    return shift / width
