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
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import polars as pl
from scipy import optimize, stats

from storagelab import theory
from storagelab.analysis.headroom import Headroom, LatencyObjective, OutsideBracket, headroom
from storagelab.kernel import ClosedSource, Exponential, FixedSampler, OpenSource, Path, Station
from storagelab.kernel.simulation import SimulationResult, simulate

_SAMPLER = FixedSampler(size=4096, span=10**9)


def _mm1(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    disk = Station("disk", Exponential(1e-3), servers=1)
    src = OpenSource("io", disk, _SAMPLER, rate=100.0 * m, cls="io")
    return simulate(disk, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


def _mm4(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    disk = Station("disk", Exponential(1e-3), servers=4)
    src = OpenSource("io", disk, _SAMPLER, rate=600.0 * m, cls="io")
    return simulate(disk, [src], duration=duration, warmup=warmup, seed=seed, progress=False)


def _closed(m: float, seed: int, duration: float, warmup: float) -> SimulationResult:
    cpu = Station("cpu", Exponential(2e-3), servers=1)
    disk = Station("disk", Exponential(5e-3), servers=1)
    path = Path("job", [cpu, disk])
    src = ClosedSource("job", path, _SAMPLER, workers=int(m), cls="job")
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


def main(argv: Sequence[str] | None = None) -> pl.DataFrame:
    """The command line: one row per case and replication count, printed."""
    known = cases()
    p = argparse.ArgumentParser(
        prog="python -m storagelab.verify.headroom_coverage",
        description="Coverage of the headroom interval on systems with a known headroom.",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        choices=sorted(known),
        default=["mm1-mean", "mm1-p95", "mm4-mean", "mva-workers"],
    )
    p.add_argument("--intervals", type=int, default=200, help="independent intervals per case (default 200)")
    p.add_argument(
        "--replications", type=int, nargs="+", default=[3], help="replications per interval (default 3)"
    )
    p.add_argument("--duration", type=float, default=2.0, help="simulated seconds per run (default 2)")
    p.add_argument("--warmup", type=float, default=0.5, help="of which discarded (default 0.5)")
    p.add_argument(
        "--tolerance", type=float, default=0.01, help="the bisection's relative tolerance (default 0.01)"
    )
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    a = p.parse_args(argv)
    started = time.perf_counter()
    rows = [
        coverage(known[name], intervals=a.intervals, replications=n, duration=a.duration, warmup=a.warmup,
                 tolerance=a.tolerance, confidence=a.confidence, seed=a.seed, workers=a.workers)
        for name in a.cases for n in a.replications
    ]  # fmt: skip
    table = pl.DataFrame(rows)
    print(f"runs of {a.duration:g} s ({a.warmup:g} s warm-up), bisection to {a.tolerance:g}, seed {a.seed}")
    shown = table.drop("tolerance", "duration_s", "warmup_s", "median_high_over_low")
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, float_precision=4, tbl_hide_dataframe_shape=True
    ):
        print(shown)
    print(f"wall time {time.perf_counter() - started:.1f} s")
    return table


if __name__ == "__main__":
    main()
