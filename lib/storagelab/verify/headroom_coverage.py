"""How often the headroom interval (:func:`storagelab.analysis.headroom.headroom`) covers the exact
headroom of systems where it is known in closed form, over many independent searches.

Cases (``m``: the load multiplier; the exact answer ``m*`` from theory, not from a simulation):

- ``mm1-mean``: Poisson arrivals at 100/s x m on one exponential server of 1,000/s, mean response at most
  2 ms: ``1 / (1000 - 100 m) = 0.002``, ``m* = 5`` (utilisation 0.5 there).
- ``mm1-p95``: the same queue, 95th percentile of the response time at most 6 ms; an M/M/1 response time
  is exponential with rate ``1000 - 100 m``, so ``m* = (1000 - ln(20) / 0.006) / 100 = 5.007``.
- ``mm4-mean``: Poisson arrivals at 600/s x m on four exponential servers of 1,000/s each, mean response
  at most 1.5 ms: ``m*`` solves Erlang C's mean response = 1.5 ms (4.983, utilisation 0.75).
- ``mva-workers``: whole multipliers, a closed network of ``m`` workers cycling through a CPU (2 ms) and a
  disk (5 ms), exponential single servers, no think time, mean response at most 37.5 ms: exact MVA puts it
  at 35.0 ms for 7 workers and 40.0 ms for 8, so ``m* = 7``.

The open systems are searched over ``[1, 9.5]``, the closed one over ``[1, 20]`` workers; a search that
leaves its bracket gives no interval and counts as not covering. Interval ``i`` uses the seeds
``seed + i * replications`` to ``seed + (i + 1) * replications - 1``, so no two intervals share a run.
Besides the share of intervals that contain ``m*`` (with the band a true ``confidence`` interval's share
stays in 99 % of the time, binomial) it reports the intervals' mean relative width (``high / low``), the
simulation runs the searches made, and the bias of the per-replication answers on the log scale
(``mean(log x - log m*)``, with its standard error) beside their spread (``sd(log x)``): the interval is for
what a run of the given length answers, so it covers ``m*`` only when that bias is small against the
spread (and against the spread of a mean of ``replications`` answers).

The defaults are the comparison's run length (2 s, of which 0.5 s warm-up: the M/M/1's relaxation time
at ``m*``, ``1 / (mu (1 - sqrt(rho))^2)``, is 11.7 ms, so the warm-up is about 43 of them), 3
replications, and a bisection to 1 % so that the interval's Student-t part, not the bisection's
resolution, is what is measured (``--tolerance 0.1``: the comparison's resolution).

Run: ``python -m storagelab.verify.headroom_coverage`` (``--help`` for the cases, counts and run lengths).

**With an uncertain parameter** (issue 69 item 7: :func:`uncertain_coverage`, :func:`uncertain_cases`):

- ``mm1-mean-uncertain``: ``mm1-mean`` with the service rate ``mu`` drawn from LogUniform(700, 1400)/s,
  declared 1,000/s: ``m* = (mu - 500) / 100``, 2 to 9; searched over ``[1, 16]`` from 1.
- ``mva-think-uncertain``: the closed CPU (2 ms) + disk loop with the disk's service time drawn from
  Uniform(4, 6) ms, declared 5 ms, and a fixed population of 10 workers that think an exponential ``0.2 /
  m`` s between jobs (the multiplier shortens the think, so the load grows continuously), mean response
  at most 20 ms: ``m*`` solves exact MVA's response (the think time an infinite-server station) = 20 ms,
  8.74 at 4 ms to 3.71 at 6 ms; searched over ``[1, 16]`` from 1. The closed MVA case with a continuous
  headroom.
- ``mva-workers-uncertain``: ``mva-workers`` with the disk's service time drawn from Uniform(4, 6) ms,
  declared 5 ms: whole ``m*`` from exact MVA per truth, 6 to 9 workers; searched over ``[1, 20]`` from 1.

Truth ``i`` of ``truths``: its parameter is ``ppf`` of the first uniform of ``numpy.random.default_rng([seed,
i])``; its headroom is exact. The prediction is made as the comparison makes it
(:mod:`storagelab.analysis.decision`): three searches at the declared value on the seeds ``base`` to ``base
+ 2`` (``base = seed + 3 i``; :func:`~storagelab.analysis.headroom.search_replication` as
``comparison._replication`` calls it: the first from ``start`` probing the top, the others warm from the
first's final bracket), 16 scrambled Sobol' draws of the parameter (seeded ``scenario_seed(seed,
"headroom_coverage", "<case> truth <i>")``) each searched once at ``base`` warm from the first's bracket,
then :func:`~storagelab.analysis.decision.candidate_sample` (no discrepancy band: the model is exact) and
its 10 % and 90 % quantiles. Runs of 2 s (0.5 s warm-up) and a 10 % bisection, the comparison's.

**Now** (2026-12-06): the noise of the replications' mean with Welch-Satterthwaite's degrees of freedom
(:func:`~storagelab.uncertainty.propagation.predictive_sample`), and each draw read as its slice of the
distribution (:func:`~storagelab.uncertainty.propagation.stratified_rows`). ``python -m
storagelab.verify.headroom_coverage --cases mm1-mean-uncertain mva-think-uncertain --workers 2 --seed S``
(S = 1 to 8) and ``--cases mva-workers-uncertain`` (S = 1, 2), 80 % coverage of 200 truths:

=====================  ========================================  ======  ==========  ==================
case                   covered, seeds 1-8 (%)                    mean    median      attainable
                                                                         high / low  (perfect, band)
=====================  ========================================  ======  ==========  ==================
mm1-mean-uncertain     75.5 81.5 81.0 81.0 80.5 78.5 76.0 75.0   78.6 %  3.13-3.25   80.0 % (72.5-87.0)
mva-think-uncertain    76.5 80.5 78.0 80.0 80.0 81.0 75.5 77.0   78.6 %  1.98-2.04   80.0 % (72.5-87.0)
mva-workers-uncertain  83.5 86.0 (seeds 1 and 2)                 84.8 %  1.44        91.8 % (86.5-96.5)
=====================  ========================================  ======  ==========  ==================

With each draw spread over its search's final bracket (2026-12-07,
:func:`~storagelab.analysis.decision.with_resolution`), seeds 1-4: M/M/1 75.5, 81.5, 80.5, 81.0 % (median
high / low 3.15-3.25), the think-time loop 77.0, 81.0, 78.0, 80.0 % (1.99-2.03): within half a point of
the figures above at every seed, since the draws' spread dwarfs a 10 % bracket. The term matters where
the draws do not spread: where every draw and replication lands in one bracket.

The pass band is 80 +/- 5 % (200 truths: a true 80 % stays in 72.5-87.0 % 99 % of the time). Both
continuous cases lie in it at all eight seeds (75.0-81.5 %), 78.6 % each over 1,600 truths (binomial
standard error 1.0): about a point under 80 %, where a t with ``n - 1`` degrees of freedom was 3.5 points
over it (below). The think-time loop's seeds 1-3 were run first with the change made outside the module
(the same figures, 76.5, 80.5 and 78.0 %), and seeds 5-8 of both cases after it was chosen, as a
confirmation; seed 7's 75.5 % and seed 8's 75.0 % are at the band's edge. The closed loop with whole
workers covers 83.5 and 86.0 %, inside and just above the band, and below the 91.8 % a perfect prediction
attains there.

Before, with a t of ``n - 1`` degrees of freedom for the mean's noise and the draws as point masses (seeds
1 and 2, 2026-12-05): M/M/1 77.5 and 82.5 %, whole workers 86.5 and 89.5 %; the think-time loop (added
2026-12-06) 81.5, 87.0 and 80.0 % at seeds 1-3. With the draws read as slices and the t kept, seeds 1-4:
M/M/1 77.5, 82.0, 82.0, 84.0 %; the think-time loop 81.5, 87.0, 80.5, 85.0 % (mean 83.5 %); whole
workers 85.5, 89.0, 86.0, 86.5 %. A t with 2 degrees of freedom convolved with the draws' spread covers
more than its level: where the draws' spread dominates (the think-time loop's draws spread about three
times the mean's noise), the sum's quantiles hardly depend on the noise's scale, and the t's heavy tails,
which pay for not knowing that scale, are not needed. With whole workers the headroom is a step, and an
interval's whole ends hold all of their mass: the truth distribution's own 10 % and 90 % quantiles
(:func:`attainable`) cover 91.8 % (6 to 8 workers of 6 to 9), so that case is a check of the machinery on
a closed network, not of the 80 % level; the think-time loop is the closed MVA case that checks the level.

Before, the noise added was that of one new search (``target="run"``, the calibration's, for a published
value that is itself one noisy outcome). Over six seeds it covered 85.3 % (M/M/1; 80.5-89.5 % per seed,
seeds 2 and 4 outside the band) and 95.6 % (workers; 94.0-98.0 %), median high / low 3.53 and 1.63. The
ablations (means of those six seeds) said why:

- *The parameter draws alone* (``params_pct``: the 16 draws' exact headrooms, no simulation) cover 83.3 %
  (M/M/1) and 95.3 % (workers); over 5,000 truths (25 seeds, no simulation needed) 82.5 % and 95.1 %. With
  16 points the 10 % and 90 % quantiles are the 2nd and 15th; a scrambled Sobol' puts one point in each
  sixteenth of the distribution, so they span about 13/16 of it, not 80 %.
- *The draws' answers alone* (``draws_pct``, no noise term): 81.1 % and 92.8 %. The draws' search noise
  is shared (all at one seed: common random numbers), so it shifts them together.
- *The noise alone* (``noise_pct``: the declared value's sample against its exact headroom) covered 92.3 %
  and 99.8 %: the Student-t noise of one new search is wider than the draws' shared error about the
  exact value (their log error: bias -0.007 and -0.005, spread 0.14 and 0.08). With the mean's noise it
  covers 78.5 % and 93.5 % (seed 1).
- *One search at the true parameter* (``searched_pct``) was covered 83.3 % and 92.5 %.

So the noise of one new search was counted on draws that already carry a search's error, against a truth
(the exact headroom) that has none: a system's headroom is not one more noisy outcome, and the searches'
noise is only our error in finding it. About 2.5 points of over-coverage remained from 16 draws' quantiles
read as point masses; ``--params-only`` measures what reading them as slices takes away (1.4 and 1.5 points
on the two continuous cases over 3,000 truths).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import polars as pl
from scipy import optimize, stats

from storagelab import theory
from storagelab.analysis.decision import HIGH, LOW, CandidateSample, candidate_sample
from storagelab.analysis.headroom import (
    Headroom,
    LatencyObjective,
    OutsideBracket,
    Replication,
    headroom,
    search_replication,
)
from storagelab.kernel import ClosedSource, Exponential, FixedSampler, OpenSource, Path, Station
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.uncertainty.design import Key, sobol_design
from storagelab.uncertainty.distributions import Distribution, LogUniform, Uniform
from storagelab.uncertainty.propagation import scenario_seed

_SAMPLER = FixedSampler(size=4096, span=10**9)


def _mm1_at(mu: float, m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    """The M/M/1 of ``mm1-*`` with service rate ``mu`` (1/s) at multiplier ``m`` (100/s x m arrivals)."""
    disk = Station("disk", Exponential(1.0 / mu), servers=1)
    src = OpenSource("io", disk, _SAMPLER, rate=100.0 * m, cls="io")
    return simulate(disk, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


def _mm1(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    return _mm1_at(1000.0, m, seed, duration, warmup)


def _mm4(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    disk = Station("disk", Exponential(1e-3), servers=4)
    src = OpenSource("io", disk, _SAMPLER, rate=600.0 * m, cls="io")
    return simulate(disk, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


def _closed_at(disk_s: float, m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    """The closed CPU (2 ms) + disk (``disk_s`` seconds) loop of ``mva-workers*`` with ``m`` workers."""
    cpu = Station("cpu", Exponential(2e-3), servers=1)
    disk = Station("disk", Exponential(disk_s), servers=1)
    path = Path("job", [cpu, disk])
    src = ClosedSource("job", path, _SAMPLER, workers=int(m), cls="job")
    return simulate(path, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


def _closed(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    return _closed_at(5e-3, m, seed, duration, warmup)


#: ``mva-think-uncertain``: its workers (a fixed population), think time at ``m = 1`` (s) and service
#: level (mean response, s).
THINK_WORKERS, THINK_S, THINK_LEVEL_S = 10, 0.2, 0.020


def _think_at(disk_s: float, m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    """The closed CPU (2 ms) + disk (``disk_s`` seconds) loop of ``mva-think-uncertain``: 10 workers
    that think an exponential ``0.2 / m`` seconds between jobs (the multiplier shortens the think, so the
    offered load grows continuously with ``m``)."""
    cpu = Station("cpu", Exponential(2e-3), servers=1)
    disk = Station("disk", Exponential(disk_s), servers=1)
    path = Path("job", [cpu, disk])
    src = ClosedSource(
        "job", path, _SAMPLER, workers=THINK_WORKERS, think=Exponential(THINK_S / m), cls="job"
    )
    return simulate(path, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


@dataclass(frozen=True)
class KnownHeadroom:
    """A system whose headroom ``exact`` is known in closed form (``theory`` says how): ``run(m, seed,
    duration, warmup)`` simulates it at multiplier ``m``; ``level`` is the service level, ``[low, high]``
    the bracket searched, ``integer`` whether the multiplier is whole."""

    name: str
    exact: float
    theory: str
    run: Callable[[float, int, float, float], SimulationResult]
    level: LatencyObjective
    low: float
    high: float
    integer: bool = False


def cases() -> dict[str, KnownHeadroom]:
    """The known-answer systems, by name (see the module docstring)."""
    mm4 = optimize.brentq(lambda lam: theory.mmc_mean_response(lam, 1000.0, 4) - 1.5e-3, 1.0, 3999.0)
    mva = theory.mva_closed(20, [2e-3, 5e-3]).response_time
    workers = max(n for n in range(1, 21) if mva[n - 1] <= 0.0375)
    out = [
        KnownHeadroom("mm1-mean", 5.0, "M/M/1 mean response", _mm1, LatencyObjective("io", "mean_ms", 2.0), 1.0, 9.5),
        KnownHeadroom("mm1-p95", (1000 - math.log(20) / 0.006) / 100, "M/M/1 response time is exponential", _mm1,
                      LatencyObjective("io", "p95_ms", 6.0), 1.0, 9.5),
        KnownHeadroom("mm4-mean", mm4 / 600.0, "Erlang C", _mm4, LatencyObjective("io", "mean_ms", 1.5), 1.0, 9.5),
        KnownHeadroom("mva-workers", float(workers), "exact MVA", _closed, LatencyObjective("job", "mean_ms", 37.5),
                      1, 20, integer=True),
    ]  # fmt: skip
    return {c.name: c for c in out}


def binomial_band(count: int, nominal: float, alpha: float = 0.01) -> tuple[float, float]:
    """The shares of ``count`` intervals that an interval of true coverage ``nominal`` covers with
    probability ``1 - alpha`` (the central binomial band, as shares 0..1)."""
    dist = stats.binom(count, nominal)
    return float(dist.ppf(alpha / 2)) / count, float(dist.ppf(1 - alpha / 2)) / count


def _one(
    case: KnownHeadroom,
    seed: int,
    replications: int,
    duration: float,
    warmup: float,
    tolerance: float,
    confidence: float,
) -> tuple[tuple[float, ...], float, float, int]:
    """One interval: the answers, the bounds and the runs made (one row of evaluations per run: one
    service level); a search that left its bracket gives no interval (NaN bounds: it covers nothing)."""
    run = partial(case.run, duration=duration, warmup=warmup)
    try:
        h: Headroom = headroom(run, [case.level], low=case.low, high=case.high, replications=replications,
                               seed=seed, tolerance=tolerance, confidence=confidence, integer=case.integer)  # fmt: skip
    except OutsideBracket as err:
        return (), math.nan, math.nan, 0 if err.evaluations is None else err.evaluations.height
    return h.per_replication, h.low, h.high, h.evaluations.height


def coverage(
    case: KnownHeadroom,
    *,
    intervals: int = 200,
    replications: int = 3,
    duration: float = 2.0,
    warmup: float = 0.5,
    tolerance: float = 0.01,
    confidence: float = 0.95,
    seed: int = 1,
    workers: int = 1,
) -> dict[str, object]:
    """``intervals`` independent headroom searches of ``case`` (``replications`` each, runs of
    ``duration`` simulated seconds with ``warmup`` discarded); one row: the share covering the exact
    answer, its binomial band at ``confidence``, mean relative width, simulation runs, the answers' bias
    and spread on the log scale, the smallest bound and the wall time."""
    started = time.perf_counter()
    one = partial(_one, case, replications=replications, duration=duration, warmup=warmup, tolerance=tolerance,
                  confidence=confidence)  # fmt: skip
    seeds = [seed + i * replications for i in range(intervals)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            found = list(pool.map(one, seeds))
    else:
        found = [one(s) for s in seeds]
    lows = np.array([f[1] for f in found])
    highs = np.array([f[2] for f in found])
    logs = np.log(np.concatenate([f[0] for f in found])) - math.log(case.exact)
    covered = int(np.sum((lows <= case.exact) & (case.exact <= highs)))  # NaN bounds cover nothing
    band = binomial_band(intervals, confidence)
    return {
        "case": case.name, "exact": case.exact, "replications": replications, "tolerance": tolerance,
        "duration_s": duration, "warmup_s": warmup, "intervals": intervals, "covered": covered,
        "coverage_pct": 100 * covered / intervals, "nominal_pct": 100 * confidence,
        "band_pct": f"{100 * band[0]:.1f}-{100 * band[1]:.1f}",
        "mean_high_over_low": float(np.nanmean(highs / lows)),
        "median_high_over_low": float(np.nanmedian(highs / lows)),
        "no_interval": int(np.isnan(lows).sum()), "runs": int(sum(f[3] for f in found)),
        "bias_log": float(logs.mean()), "bias_log_se": float(logs.std(ddof=1) / math.sqrt(logs.size)),
        "sd_log": float(logs.std(ddof=1)), "smallest_low": float(np.nanmin(lows)),
        "wall_s": time.perf_counter() - started,
    }  # fmt: skip


def _mm1_mean_exact(mu: float) -> float:
    """``m*`` of the M/M/1 at service rate ``mu`` (1/s), mean response at most 2 ms: ``1 / (mu - 100 m) =
    0.002``, so ``m* = (mu - 500) / 100``."""
    return (mu - 500.0) / 100.0


def _mva_workers_exact(disk_s: float) -> float:
    """``m*`` of the closed CPU (2 ms) + disk (``disk_s`` s) loop, mean response at most 37.5 ms: the
    largest population of 1..20 whose exact MVA response time meets it."""
    response = theory.mva_closed(20, [2e-3, disk_s]).response_time
    return float(max(n for n in range(1, 21) if response[n - 1] <= 0.0375))


def _mva_think_exact(disk_s: float) -> float:
    """``m*`` of the ``mva-think-uncertain`` loop with the disk at ``disk_s`` s: the multiplier at which
    exact MVA (10 workers, think ``0.2 / m`` s, an infinite-server station, insensitive to its
    distribution) puts the mean response at 20 ms (Brent's method; the response rises with ``m``)."""

    def excess(m: float) -> float:
        mva = theory.mva_closed(THINK_WORKERS, [2e-3, disk_s], delay=THINK_S / m)
        return float(mva.response_time[-1]) - THINK_LEVEL_S

    return float(optimize.brentq(excess, 0.1, 1000.0, xtol=1e-12))


@dataclass(frozen=True)
class UncertainHeadroom:
    """A known-headroom system whose one parameter (``parameter``, in its unit) is uncertain: the truth is
    a draw of ``distribution``; the prediction searches at ``declared`` and at draws of the distribution.
    ``run(value, m, seed, duration, warmup)`` simulates it with the parameter at ``value``; ``exact(value)``
    is its headroom from theory (``theory`` says how); the search walks ``[low, high]`` from ``start``."""

    name: str
    parameter: str
    distribution: Distribution
    declared: float
    theory: str
    exact: Callable[[float], float]
    run: Callable[[float, float, int, float, float], SimulationResult]
    level: LatencyObjective
    low: float
    high: float
    start: float
    integer: bool = False

    @property
    def key(self) -> Key:
        """The parameter's design key."""
        return (self.name, self.parameter)


def uncertain_cases() -> dict[str, UncertainHeadroom]:
    """The known-answer systems with an uncertain parameter, by name (see the module docstring)."""
    out = [
        # LogUniform(700, 1400) about the declared 1,000/s: an assumption (a factor 2 from end to end, the
        # declared value inside it), giving m* from 2 to 9; the bracket [1, 16] holds every m* with room
        UncertainHeadroom("mm1-mean-uncertain", "service rate (1/s)", LogUniform(700.0, 1400.0), 1000.0,
                          "M/M/1 mean response", _mm1_mean_exact, _mm1_at,
                          LatencyObjective("io", "mean_ms", 2.0), 1.0, 16.0, 1.0),
        # Uniform(4, 6) ms about the declared 5 ms: an assumption (+/- 20 %), giving m* of 6 to 9 workers
        UncertainHeadroom("mva-workers-uncertain", "disk service time (s)", Uniform(4e-3, 6e-3), 5e-3,
                          "exact MVA", _mva_workers_exact, _closed_at, LatencyObjective("job", "mean_ms", 37.5),
                          1, 20, 1, integer=True),
        # the same stations and disk range with a fixed population and the think time shortened by the
        # multiplier: a closed system whose headroom is continuous, m* from 3.5 to 8.6
        UncertainHeadroom("mva-think-uncertain", "disk service time (s)", Uniform(4e-3, 6e-3), 5e-3,
                          "exact MVA with a think time", _mva_think_exact, _think_at,
                          LatencyObjective("job", "mean_ms", 1e3 * THINK_LEVEL_S), 1.0, 16.0, 1.0),
    ]  # fmt: skip
    return {c.name: c for c in out}


#: The seeds of the ablation's searches at the true parameter start this far above ``seed`` (truth ``i`` uses
#: ``seed + SEARCHED_SEEDS + i``), past every seed a prediction uses (``seed`` to ``seed + 3 x truths - 1``).
SEARCHED_SEEDS = 1_000_000


def _truth(
    case: UncertainHeadroom,
    i: int,
    *,
    seed: int,
    replications: int,
    draws: int,
    duration: float,
    warmup: float,
    tolerance: float,
) -> dict[str, object]:
    """Truth ``i`` of ``case``: its parameter drawn, its exact headroom, and the prediction made as the
    comparison makes it (module docstring): the 80 % interval and median, the interval of the draws alone
    and of the noise alone, the draws' log answers against their exact ones, and the runs made."""
    true_value = float(case.distribution.ppf(float(np.random.default_rng([seed, i]).random())))
    exact = case.exact(true_value)
    base = seed + i * replications

    def search(value: float, s: int, warm: tuple[float, float] | None) -> Replication:
        run = partial(case.run, value, duration=duration, warmup=warmup)
        return search_replication(run, [case.level], s, low=case.low, high=case.high, start=case.start,
                                  tolerance=tolerance, integer=case.integer, probe_high=True, warm=warm)  # fmt: skip

    row: dict[str, object] = {"truth": i, "value": true_value, "exact": exact, "low": math.nan, "high": math.nan,
                              "median": math.nan, "draws_low": math.nan, "draws_high": math.nan,
                              "noise_low": math.nan, "noise_high": math.nan, "params_low": math.nan,
                              "params_high": math.nan, "draw_errors": (), "searched": math.nan, "runs": 0}  # fmt: skip
    done: list[Replication] = []
    try:
        for r in range(replications):
            done.append(search(case.declared, base + r, None if r == 0 else done[0].bracket))
    except OutsideBracket as err:  # the comparison gives no sample without two answers: covers nothing
        row["runs"] = sum(len(d.evaluations) for d in done) + (
            0 if err.evaluations is None else err.evaluations.height
        )
        return row
    runs = sum(len(d.evaluations) for d in done)
    design = sobol_design({case.key: case.distribution}, draws, scenario_seed(seed, "headroom_coverage",
                                                                              f"{case.name} truth {i}"))  # fmt: skip
    values = [float(d[case.key]) for d in design.draws]  # type: ignore[arg-type]
    answers: list[float | None] = []
    resolutions: list[float] = []  # each draw's search resolution, as the comparison's draw_search gives it
    for v in values:
        try:
            rep = search(v, base, done[0].bracket)  # the first replication's seed, warm from its bracket
            answers.append(rep.answer)
            resolutions.append(rep.resolution)
            runs += len(rep.evaluations)
        except OutsideBracket as err:  # at a bound, as the comparison's draw_search keeps it
            answers.append(err.multiplier)
            resolutions.append(0.0)
            runs += 0 if err.evaluations is None else err.evaluations.height
    answers_of_reps = [d.answer for d in done]
    full = candidate_sample(case.name, answers, answers_of_reps, None, case.low, case.high, (), resolutions)
    draws_only = candidate_sample(case.name, answers, answers_of_reps[:1], None, case.low, case.high, (),
                                  resolutions)  # fmt: skip
    noise_only = candidate_sample(case.name, [answers_of_reps[0]], answers_of_reps, None, case.low, case.high,
                                  (), [done[0].resolution])  # fmt: skip
    params = np.log([case.exact(v) for v in values])  # the draws' exact headrooms: no simulation at all
    assert full is not None and draws_only is not None and noise_only is not None  # every answer is > 0
    row["low"], row["median"], row["high"] = full.quantiles([LOW, 0.5, HIGH])
    row["draws_low"], row["draws_high"] = draws_only.quantiles([LOW, HIGH])
    row["noise_low"], row["noise_high"] = noise_only.quantiles([LOW, HIGH])
    row["params_low"], row["params_high"] = _draws_interval(params)
    row["draw_errors"] = tuple(math.log(a / case.exact(v)) for a, v in zip(answers, values, strict=True) if a)
    try:  # what one search at the true parameter answers, on a seed no prediction uses (an ablation)
        rep = search(true_value, seed + SEARCHED_SEEDS + i, None)
        row["searched"], runs = rep.answer, runs + len(rep.evaluations)
    except OutsideBracket as err:
        row["searched"] = err.multiplier
        runs += 0 if err.evaluations is None else err.evaluations.height
    row["runs"] = runs
    return row


def _draws_interval(logs: np.ndarray) -> tuple[float, float]:
    """The 80 % interval of draws' log headrooms read as the decision reads its draws
    (:func:`~storagelab.uncertainty.propagation.stratified_rows`), without noise or band."""
    sample = CandidateSample("draws", np.asarray(logs, dtype=float)[:, None], np.zeros(1), np.ones(1),
                             math.inf, 0.0)  # fmt: skip
    low, high = sample.quantiles([LOW, HIGH])
    return low, high


def params_coverage(case: UncertainHeadroom, *, truths: int = 1000, seeds: Sequence[int] = (1, 2, 3),
                    draws: int = 16) -> dict[str, object]:  # fmt: skip
    """The share of truths whose exact headroom lies in the 80 % interval of the ``draws`` Sobol' draws'
    exact headrooms (no simulation: what the draws alone can attain), read as point masses (numpy's
    ``inverted_cdf``, the decision's rule before :func:`~storagelab.uncertainty.propagation.stratified_rows`)
    and through the draws' quantile function, over ``truths`` truths at each of ``seeds`` (drawn and
    designed as :func:`uncertain_coverage` draws and designs them)."""
    point = stratified = 0
    for seed in seeds:
        for i in range(truths):
            exact = math.log(
                case.exact(float(case.distribution.ppf(float(np.random.default_rng([seed, i]).random()))))
            )
            design = sobol_design({case.key: case.distribution}, draws,
                                  scenario_seed(seed, "headroom_coverage", f"{case.name} truth {i}"))  # fmt: skip
            logs = np.log([case.exact(float(d[case.key])) for d in design.draws])  # type: ignore[arg-type]
            lo, hi = (float(np.quantile(logs, p, method="inverted_cdf")) for p in (LOW, HIGH))
            point += lo <= exact <= hi
            lo, hi = (math.log(x) for x in _draws_interval(logs))
            stratified += bool(_covers(np.array(lo), np.array(hi), np.array(exact)))
    n = truths * len(seeds)
    return {"case": case.name, "truths": n, "draws": draws, "point_masses_pct": 100 * point / n,
            "stratified_pct": 100 * stratified / n}  # fmt: skip


def attainable(case: UncertainHeadroom, grid: int = 10_000) -> float:
    """The share of truths that the truth distribution's own central 80 % interval of ``m*`` contains: the
    coverage a perfect prediction attains. 0.80 where ``m*`` is continuous in the parameter; above it
    where ``m*`` is whole (``mva-workers-uncertain``: 6 to 9 workers, and the interval's ends are whole,
    so it holds all of the end values' mass). Computed on ``grid`` equal slices of the parameter's
    quantiles (their midpoints)."""
    u = (np.arange(grid) + 0.5) / grid
    x = np.array([case.exact(float(case.distribution.ppf(float(v)))) for v in u])
    lo, hi = (float(np.quantile(x, p, method="inverted_cdf")) for p in (LOW, HIGH))
    return float(np.mean((lo <= x) & (x <= hi)))


def _covers(low: np.ndarray, high: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether ``[low, high]`` contains ``x`` (a relative 1e-9 of slack: a whole answer recovered from its
    logarithm; NaN bounds contain nothing)."""
    return (low <= x * (1 + 1e-9)) & (x * (1 - 1e-9) <= high)


def uncertain_coverage(
    case: UncertainHeadroom,
    *,
    truths: int = 200,
    replications: int = 3,
    draws: int = 16,
    duration: float = 2.0,
    warmup: float = 0.5,
    tolerance: float = 0.1,
    seed: int = 1,
    workers: int = 1,
) -> dict[str, object]:
    """``truths`` systems of ``case``, each with its parameter drawn, predicted as the comparison predicts
    (module docstring); one row: the share of 80 % intervals containing the exact headroom, its binomial
    band (99 %), the median relative width (``high / low``), the runs and the wall time, with the
    ablations: the share the interval of the draws alone covers (``draws_pct``: no noise term), that of
    the noise alone (``noise_pct``: the declared value's interval, against the exact headroom at the
    declared value), that of the parameter draws' exact headrooms (``params_pct``: no simulation at all),
    the share of the 80 % intervals containing what one search at the true parameter answers
    (``searched_pct``: the quantity the predictive sample is for) and the draws' answers' bias and spread
    on the log scale against their exact headrooms. ``attainable_pct``: what a perfect prediction covers
    (:func:`attainable`), with its band."""
    started = time.perf_counter()
    one = partial(_truth, case, seed=seed, replications=replications, draws=draws, duration=duration,
                  warmup=warmup, tolerance=tolerance)  # fmt: skip
    if workers > 1:  # spawned, not forked: a fork of a process whose polars threads hold a lock deadlocks
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            found = list(pool.map(one, range(truths)))
    else:
        found = [one(i) for i in range(truths)]
    col = {k: np.array([f[k] for f in found], dtype=float) for k in
           ("exact", "low", "high", "median", "draws_low", "draws_high", "noise_low", "noise_high",
            "params_low", "params_high", "searched", "runs")}  # fmt: skip
    exact = col["exact"]
    declared = np.full(truths, case.exact(case.declared))
    covered = int(_covers(col["low"], col["high"], exact).sum())
    errors = np.concatenate([np.array(f["draw_errors"], dtype=float) for f in found])
    band = binomial_band(truths, HIGH - LOW)
    reach = attainable(case)
    reach_band = binomial_band(truths, reach)
    return {
        "case": case.name, "truths": truths, "draws": draws, "replications": replications,
        "tolerance": tolerance, "duration_s": duration, "warmup_s": warmup, "covered": covered,
        "coverage_pct": 100 * covered / truths, "nominal_pct": 100 * (HIGH - LOW),
        "band_pct": f"{100 * band[0]:.1f}-{100 * band[1]:.1f}",
        "attainable_pct": 100 * reach, "attainable_band_pct": f"{100 * reach_band[0]:.1f}-{100 * reach_band[1]:.1f}",
        "below_pct": 100 * float(np.mean(exact < col["low"] * (1 - 1e-9))),
        "above_pct": 100 * float(np.mean(exact > col["high"] * (1 + 1e-9))),
        "median_high_over_low": float(np.nanmedian(col["high"] / col["low"])),
        "draws_pct": 100 * float(_covers(col["draws_low"], col["draws_high"], exact).mean()),
        "noise_pct": 100 * float(_covers(col["noise_low"], col["noise_high"], declared).mean()),
        "params_pct": 100 * float(_covers(col["params_low"], col["params_high"], exact).mean()),
        "searched_pct": 100 * float(_covers(col["low"], col["high"], col["searched"]).mean()),
        "draw_bias_log": float(errors.mean()) if errors.size else math.nan,
        "draw_sd_log": float(errors.std(ddof=1)) if errors.size > 1 else math.nan,
        "no_interval": int(np.isnan(col["low"]).sum()), "runs": int(col["runs"].sum()),
        "wall_s": time.perf_counter() - started,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> pl.DataFrame:
    """The command line: one row per case and replication count, printed (the cases with an uncertain
    parameter in a table of their own)."""
    known = cases()
    uncertain = uncertain_cases()
    p = argparse.ArgumentParser(
        prog="python -m storagelab.verify.headroom_coverage",
        description="Coverage of the headroom interval on systems with a known headroom.",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        choices=sorted({*known, *uncertain}),
        default=["mm1-mean", "mm1-p95", "mm4-mean", "mva-workers"],
    )
    p.add_argument(
        "--intervals",
        type=int,
        default=200,
        help="independent intervals per case (default 200); with an uncertain parameter, truths drawn",
    )
    p.add_argument(
        "--replications", type=int, nargs="+", default=[3], help="replications per interval (default 3)"
    )
    p.add_argument(
        "--draws", type=int, default=16, help="parameter draws per uncertain truth (default 16, Sobol')"
    )
    p.add_argument("--duration", type=float, default=2.0, help="simulated seconds per run (default 2)")
    p.add_argument("--warmup", type=float, default=0.5, help="of which discarded (default 0.5)")
    p.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="the bisection's relative tolerance (default 0.01; 0.1, the comparison's, with an uncertain "
        "parameter)",
    )
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument(
        "--params-only",
        action="store_true",
        help="no simulation: the draws' exact headrooms against the truths' (1,000 truths at seeds 1-3), "
        "read as point masses and through the draws' quantile function",
    )
    a = p.parse_args(argv)
    started = time.perf_counter()
    if a.params_only:
        table = pl.DataFrame(
            [params_coverage(uncertain[n], draws=a.draws) for n in a.cases if n in uncertain]
        )
        with pl.Config(tbl_rows=-1, tbl_cols=-1, float_precision=2, tbl_hide_dataframe_shape=True):
            print(table)
        return table
    rows = [
        coverage(known[name], intervals=a.intervals, replications=n, duration=a.duration, warmup=a.warmup,
                 tolerance=0.01 if a.tolerance is None else a.tolerance, confidence=a.confidence, seed=a.seed,
                 workers=a.workers)
        for name in a.cases if name in known for n in a.replications
    ]  # fmt: skip
    drawn = [
        uncertain_coverage(uncertain[name], truths=a.intervals, replications=n, draws=a.draws,
                           duration=a.duration, warmup=a.warmup, tolerance=0.1 if a.tolerance is None else a.tolerance,
                           seed=a.seed, workers=a.workers)
        for name in a.cases if name in uncertain for n in a.replications
    ]  # fmt: skip
    print(f"runs of {a.duration:g} s ({a.warmup:g} s warm-up), seed {a.seed}")

    def config() -> pl.Config:  # a fresh one per table: a Config restores the defaults on leaving
        return pl.Config(
            tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, float_precision=4, tbl_hide_dataframe_shape=True
        )

    tables = []
    if rows:
        table = pl.DataFrame(rows)
        with config():
            print(table.drop("duration_s", "warmup_s", "median_high_over_low"))
        tables.append(table)
    if drawn:
        table = pl.DataFrame(drawn)
        with config():
            print(table.drop("duration_s", "warmup_s", "tolerance", "nominal_pct", "replications"))
        tables.append(table)
    print(f"wall time {time.perf_counter() - started:.1f} s")
    return pl.concat(tables, how="diagonal_relaxed")


if __name__ == "__main__":
    main()
