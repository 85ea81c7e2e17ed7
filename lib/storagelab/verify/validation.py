"""The kernel's validation scenarios as data: each simulated with independent replications and set
beside its analytic value (Erlang C, Pollaczek–Khinchine, Cobham, exact MVA) or its reference
implementation (libCacheSim). Used by the kernel-validation notebook; the pytest suite checks the same
scenarios independently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from storagelab import theory
from storagelab.components import cache_policies
from storagelab.kernel.composition import Path
from storagelab.kernel.disciplines import PriorityByClass
from storagelab.kernel.replications import interval
from storagelab.kernel.service import Deterministic, Exponential, Gamma
from storagelab.kernel.simulation import SimulationResult, simulate
from storagelab.kernel.sources import ClosedSource, FixedSampler, OpenSource
from storagelab.kernel.station import Station


@dataclass(frozen=True)
class ValidationCase:
    """A system with a known mean response time (ms): how to build it and what theory says."""

    name: str
    theory: str
    build: Callable[[], tuple]
    analytic_ms: float
    cls: str | None = None


def queueing_scenarios() -> list[ValidationCase]:
    """M/M/1, M/M/4, M/D/1, M/G/1 and two priority classes, all at 70–90 % utilisation."""
    out = []
    for servers, rho in ((1, 0.7), (4, 0.9)):
        mu, lam = 1000.0, rho * servers * 1000.0

        def build(servers=servers, lam=lam, mu=mu):
            st = Station("q", Exponential(1 / mu), servers=servers)
            return st, [OpenSource("arrivals", st, FixedSampler(), rate=lam)]

        out.append(
            ValidationCase(
                f"M/M/{servers}, rho={rho}",
                "Erlang C",
                build,
                1e3 * theory.mmc_mean_response(lam, mu, servers),
            )
        )
    for name, service in (("M/D/1", Deterministic(1e-3)), ("M/G/1 gamma scv=2", Gamma(1e-3, 2.0))):

        def build(service=service):
            st = Station("q", service, servers=1)
            return st, [OpenSource("arrivals", st, FixedSampler(), rate=700.0)]

        out.append(
            ValidationCase(
                f"{name}, rho=0.7",
                "Pollaczek-Khinchine",
                build,
                1e3 * theory.mg1_mean_response(700.0, service.mean, service.scv),
            )
        )
    mean_s, rates = 1e-3, {"gold": 300.0, "bronze": 450.0}

    def build_priority():
        st = Station(
            "q", Exponential(mean_s), servers=1, discipline=PriorityByClass({"gold": 0, "bronze": 1})
        )
        return st, [OpenSource(c, st, FixedSampler(), rate=r) for c, r in rates.items()]

    waits = theory.cobham_priority_waits(list(rates.values()), [mean_s] * 2, [2 * mean_s**2] * 2)
    for (cls, _), w in zip(rates.items(), waits, strict=True):
        out.append(
            ValidationCase(
                f"priority M/M/1, rho=0.75, class {cls}", "Cobham", build_priority, 1e3 * (w + mean_s), cls
            )
        )
    return out


def replicate(
    build: Callable[[], tuple],
    metric: Callable[[SimulationResult], float],
    *,
    replications: int,
    duration: float,
    warmup: float,
    seed: int,
) -> np.ndarray:
    """``metric`` of ``replications`` independent runs (seeds ``seed``, ``seed+1``, ...)."""
    values = []
    for r in range(replications):
        target, sources = build()
        res = simulate(target, sources, duration=duration, warmup=warmup, seed=seed + r, progress=False)
        values.append(metric(res))
    return np.asarray(values)


def _mean_ms(cls: str | None) -> Callable[[SimulationResult], float]:
    def metric(res: SimulationResult) -> float:
        s = res.summary()
        return float((s.filter(pl.col("class") == cls) if cls else s)["mean_ms"][0])

    return metric


def validate_queueing(
    *,
    replications: int = 5,
    duration: float = 10.0,
    warmup: float = 1.0,
    seed: int = 1,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Simulated mean response (CI over replications) beside theory, one row per scenario."""
    rows = []
    for sc in queueing_scenarios():
        vals = replicate(
            sc.build, _mean_ms(sc.cls), replications=replications, duration=duration, warmup=warmup, seed=seed
        )
        mean, lo, hi = interval(vals, confidence)
        rows.append(
            {
                "scenario": sc.name,
                "theory": sc.theory,
                "analytic_ms": sc.analytic_ms,
                "simulated_ms": mean,
                "ci_low_ms": lo,
                "ci_high_ms": hi,
                "relative_error": mean / sc.analytic_ms - 1,
                "analytic_in_ci": lo <= sc.analytic_ms <= hi,
            }
        )
    return pl.DataFrame(rows)


def validate_mva(
    populations: Sequence[int] = (1, 2, 4, 8, 16, 32),
    *,
    demands: Sequence[float] = (0.5e-3, 0.3e-3, 0.2e-3),
    think: float = 1e-3,
    replications: int = 5,
    duration: float = 10.0,
    warmup: float = 1.0,
    seed: int = 1,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """N QD1 workers over three queueing stations in series plus a think time, against exact MVA."""
    exact = theory.mva_closed(max(populations), list(demands), delay=think)
    rows = []
    for n in populations:

        def build(n=n):
            stations = [Station(f"s{k}", Exponential(d), servers=1) for k, d in enumerate(demands)]
            path = Path("path", stations)
            return path, [ClosedSource("workers", path, FixedSampler(), workers=n, think=Exponential(think))]

        vals = replicate(
            build,
            lambda r: float(r.summary()["iops"][0]),
            replications=replications,
            duration=duration,
            warmup=warmup,
            seed=seed,
        )
        mean, lo, hi = interval(vals, confidence)
        x = float(exact.throughput[n - 1])
        rows.append(
            {
                "workers": n,
                "mva_iops": x,
                "simulated_iops": mean,
                "ci_low": lo,
                "ci_high": hi,
                "relative_error": mean / x - 1,
                "mva_in_ci": lo <= x <= hi,
            }
        )
    return pl.DataFrame(rows)


def validate_caches(
    sizes: Sequence[int] = (100, 1000),
    *,
    requests: int = 100_000,
    keys: int = 10_000,
    alpha: float = 1.0,
    seed: int = 1,
) -> pl.DataFrame:
    """Hit ratios of storagelab's policies and libCacheSim's on one Zipf request sequence."""
    import libcachesim as lcs

    rng = np.random.default_rng(seed)
    ranks = np.arange(1, keys + 1)
    p = ranks**-alpha
    seq = rng.choice(keys, size=requests, p=p / p.sum()).tolist()
    rows = []
    for policy, ours_cls, ref_cls in (
        ("LRU", cache_policies.LRU, lcs.LRU),
        ("S3-FIFO", cache_policies.S3FIFO, lcs.S3FIFO),
        ("ARC", cache_policies.ARC, lcs.ARC),
    ):
        for size in sizes:
            ours, ref = ours_cls(size), ref_cls(cache_size=size)
            ours_hits = sum(ours.access(k) for k in seq)
            ref_hits = sum(bool(ref.get(lcs.Request(obj_id=k, obj_size=1))) for k in seq)
            rows.append(
                {
                    "policy": policy,
                    "cache_blocks": size,
                    "storagelab_hit_ratio": ours_hits / requests,
                    "libcachesim_hit_ratio": ref_hits / requests,
                    "equal": ours_hits == ref_hits,
                }
            )
    return pl.DataFrame(rows)
